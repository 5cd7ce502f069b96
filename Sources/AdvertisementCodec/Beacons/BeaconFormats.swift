// SPDX-License-Identifier: GPL-2.0-or-later

import Synchronization

/// One format as the registry holds it, a value: its name, what a description of it takes and
/// how it builds the beacon, how one is found in advertising data, and what its specification
/// asks on the air. The codec's own formats and a program's are held alike
/// (`BeaconFormats.all`); everything that lists, describes or judges formats asks these.
public struct BeaconFormatRegistration: Sendable {
    /// `type=` in a description, `"type"` in JSON, its flag on the command line.
    public let name: String
    /// The keys its description takes besides `type`, spelled as help and messages show them.
    public let descriptionKeys: [String]
    /// What each key that takes a number takes (`"major": "0 to 65535"`).
    public let numberRanges: [String: String]
    /// One line for help beside its flag.
    public let summary: String
    /// The key whose value alone describes it (Eddystone-URL's `url`); nil for none.
    public let selectingKey: String?
    /// The keys a running beacon's update may not change, and why; nil: any.
    public let fixedWhileRunning: (keys: [String], why: String)?
    /// What its specification asks of it on the air (`audit`); nil: no rules of its own.
    public let specification: BeaconSpecification?
    private let describe: @Sendable (DescribedFields) throws(FormatDescriptionError) -> Beacon
    /// Its beacon in one AD structure; nil where the codec's own signatures find it
    /// (`Beacon.beacon(in:)`), or nothing on the air names it (a layout: an app gives its parsers).
    let decode: (@Sendable (ADStructure) throws(CodecError) -> Beacon?)?

    /// A format a description builds, found in advertising data by `decode` (nil: by the codec's
    /// own signatures, or not at all).
    public init(_ format: any DescribedBeaconFormat.Type, specification: BeaconSpecification? = nil,
                decode: (@Sendable (ADStructure) throws(CodecError) -> Beacon?)? = nil) {
        name = format.name
        descriptionKeys = format.descriptionKeys
        numberRanges = format.numberRanges
        summary = format.summary
        selectingKey = format.selectingKey
        fixedWhileRunning = format.fixedWhileRunning
        self.specification = specification
        describe = { (fields) throws(FormatDescriptionError) in try format.beacon(described: fields) }
        self.decode = decode
    }

    /// A program's own format, its type registered (`RegisteredBeaconFormat`).
    public init<Format: RegisteredBeaconFormat>(type format: Format.Type) {
        self.init(format, specification: format.specification, decode: { (structure) throws(CodecError) in
            try format.decode(structure).map { .registered(RegisteredBeacon($0)) }
        })
    }

    /// Its beacon from a description's fields (each of `descriptionKeys` given, by its key as spelled there).
    /// - Throws: `FormatDescriptionError` naming the key and what it takes.
    public func beacon(described fields: DescribedFields) throws(FormatDescriptionError) -> Beacon {
        try describe(fields)
    }
}

/// The one list of beacon formats: the codec's own, registered by one line each below, and a
/// program's, registered at run time (`register(_:)`), and the named layouts of an app
/// (`register(layout:named:)`). The command, the library, the tracker, the audit and the
/// reports ask it.
public enum BeaconFormats {
    /// The codec's own formats, in the order lists show them: one line each.
    public static let builtIn: [BeaconFormatRegistration] = [
        .init(IBeacon.self, specification: IBeacon.specification),
        .init(AltBeacon.self, specification: AltBeacon.specification),
        .init(EddystoneUID.self, specification: EddystoneUID.specification),
        .init(EddystoneURL.self, specification: EddystoneURL.specification),
        .init(EddystoneTLM.self, specification: EddystoneTLM.specification),
        .init(EddystoneEID.self),
        .init(LayoutBeacon.self),
    ]

    /// The names the codec's own formats take (and `custom`, any advertising data, and
    /// `eddystone`, a frame of a type it does not decode): a registered format takes another.
    public static let builtInNames = Set(ownNames + ["eddystone", "custom"])

    /// The codec's own formats' names, in the order lists show them.
    public static let ownNames = builtIn.map(\.name)

    private static let registeredFormats = Mutex<[(type: Any.Type, registration: BeaconFormatRegistration)]>([])
    /// How many are registered: decoding looks no further while none is (a load, no lock).
    private static let count = Atomic<Int>(0)
    private static let layouts = Mutex<[(name: String, layout: BeaconLayout)]>([])

    /// Why a format or a layout could not be registered.
    public struct RegistrationError: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Adds a program's format; registering the same type again changes nothing.
    /// - Throws: `RegistrationError` when its name is empty, not lowercase, holds a space, a comma
    ///   or '=', or is taken (by one of the codec's own formats or another registered type).
    public static func register<Format: RegisteredBeaconFormat>(_ format: Format.Type) throws(RegistrationError) {
        let name = format.name
        guard !name.isEmpty, name == name.lowercased(), !name.contains(where: { $0 == "," || $0 == "=" || $0.isWhitespace })
        else {
            throw RegistrationError(description: "a format's name is lowercase, without spaces, commas or '=': got '\(name)'")
        }
        guard !builtInNames.contains(name) else {
            throw RegistrationError(description: "'\(name)' is the name of one of the codec's own formats")
        }
        let result: Result<Void, RegistrationError> = registeredFormats.withLock { list in
            if let taken = list.first(where: { $0.registration.name == name }) {
                return taken.type == format ? .success(())
                    : .failure(RegistrationError(description: "'\(name)' is registered already (\(taken.type))"))
            }
            list.append((format, BeaconFormatRegistration(type: format)))
            count.store(list.count, ordering: .releasing)
            return .success(())
        }
        try result.get()
    }

    /// Declares an app's layout by name, so that a description names it (`layout=acme`); a
    /// later declaration of the name replaces the earlier (a configuration read again).
    /// - Throws: `RegistrationError` when the name is not a layout's name (`BeaconLayout.named`:
    ///   letters, digits, '-', '_' and '.').
    public static func register(layout: BeaconLayout, named name: String) throws(RegistrationError) {
        guard (try? BeaconLayout.named("\(name)=\(layout.text)"))?.name == name else {
            throw RegistrationError(description: "'\(name)' is no layout name: letters, digits, '-', '_' and '.'")
        }
        layouts.withLock { list in
            if let index = list.firstIndex(where: { $0.name == name }) {
                list[index].layout = layout
            } else {
                list.append((name, layout))
            }
        }
    }

    /// The layout declared by that name, or nil.
    public static func layout(named name: String) -> BeaconLayout? {
        layouts.withLock { list in list.first { $0.name == name }?.layout }
    }

    /// The layouts' names, in the order they were declared.
    public static var layoutNames: [String] { layouts.withLock { list in list.map(\.name) } }

    /// Every format: the codec's own, then a program's, in the order they were registered.
    public static var all: [BeaconFormatRegistration] {
        builtIn + (anyRegistered ? registeredFormats.withLock { list in list.map(\.registration) } : [])
    }

    /// A program's formats, in the order they were registered.
    public static var registered: [BeaconFormatRegistration] { registeredFormats.withLock { list in list.map(\.registration) } }

    /// Whether any of a program's formats is registered.
    static var anyRegistered: Bool { count.load(ordering: .acquiring) > 0 }

    /// The format a description's `type=` names (in any case).
    public static func named(_ name: String) -> BeaconFormatRegistration? {
        let name = name.lowercased()
        if let own = builtIn.first(where: { $0.name == name }) { return own }
        guard anyRegistered else { return nil }
        return registeredFormats.withLock { list in list.first { $0.registration.name == name }?.registration }
    }

    /// The keys the formats' descriptions take, each once, in the formats' order.
    public static var descriptionKeys: [String] {
        var keys: [String] = []
        for format in all {
            for key in format.descriptionKeys where !keys.contains(key) { keys.append(key) }
        }
        return keys
    }

    /// The specifications of the formats that state one, in the formats' order.
    public static var specifications: [BeaconSpecification] { all.compactMap(\.specification) }

    /// The codec's own formats' specifications (an audit asks per report: found without a lock).
    private static let ownSpecifications = builtIn.compactMap(\.specification)

    /// The specification of the format of that name, if it states one.
    public static func specification(named name: String) -> BeaconSpecification? {
        let name = name.lowercased()
        if let own = ownSpecifications.first(where: { $0.name == name }) { return own }
        guard anyRegistered else { return nil }
        return registeredFormats.withLock { list in list.lazy.compactMap(\.registration.specification).first { $0.name == name } }
    }

    /// Every format's name a beacon can be heard as.
    public static var allNames: [String] { all.map(\.name) }

    /// The decoders of the codec's own formats that are registered types (a format added as
    /// `.init(Acme.self)` above), asked after the codec's own signatures.
    private static let builtInDecoders = builtIn.compactMap(\.decode)

    /// Whether any format beside the codec's own signatures may find a beacon in a structure.
    static var mayDecode: Bool { !builtInDecoders.isEmpty || anyRegistered }

    /// The first beacon a registered type finds in a structure (the codec's own, then a
    /// program's, in the order they were registered), or nil.
    static func decode(_ structure: ADStructure) throws(CodecError) -> Beacon? {
        for decode in builtInDecoders {
            if let beacon = try decode(structure) { return beacon }
        }
        guard anyRegistered else { return nil }
        for format in registered {
            if let beacon = try format.decode?(structure) { return beacon }
        }
        return nil
    }
}
