// SPDX-License-Identifier: GPL-2.0-or-later

import Synchronization

/// A beacon format from outside the codec, added by registering its type once
/// (`try BeaconFormats.register(Acme.self)`): decoding then finds it in advertising data, a
/// beacon description (`type=acme,...`) builds it, and everything that asks a beacon's format
/// (the printers, the tracker, regions, audits, advertising) asks it. Its fields, identity and
/// measured power are `BeaconFormat`'s, as for the codec's own formats.
public protocol RegisteredBeaconFormat: BeaconFormat, DescribedBeaconFormat, Hashable {
    /// Its name: `type=` in a description, `"type"` in JSON (the same as `formatName`).
    static var name: String { get }
    /// The keys a description gives it besides `type` (`id`, `level`), as `init(description:)`
    /// reads them; any spelling of a key is read as its plain one (`measured-power`, `measuredPower`).
    static var descriptionKeys: [String] { get }
    /// The beacon one AD structure carries, or nil when it carries none of this format. Asked
    /// only of structures that carry none of the codec's own formats.
    /// - Throws: `CodecError` when the structure has the format's signature but not its layout.
    static func decode(_ structure: ADStructure) throws(CodecError) -> Self?
    /// From a description's fields, by the keys `descriptionKeys` names (each as given there).
    /// - Throws: `FormatDescriptionError` naming the key and what it takes.
    init(description fields: [String: String]) throws(FormatDescriptionError)
    /// The advertising data a transmitter sends for it.
    var advertisingData: AdvertisingData { get }
    /// What its specification asks of it on the air, for `audit`; nil (the default): no rules
    /// of its own, and an audit of it judges only what every beacon is held to.
    static var specification: BeaconSpecification? { get }
}

extension RegisteredBeaconFormat {
    public static var specification: BeaconSpecification? { nil }

    /// Its beacon from `init(description:)`; a message names the format (`acme: ...`).
    public static func beacon(described fields: DescribedFields) throws(FormatDescriptionError) -> Beacon {
        do {
            return .registered(RegisteredBeacon(try Self(description: fields.values)))
        } catch {
            throw FormatDescriptionError("\(name): \(error.message)")
        }
    }
}

/// What is wrong with a registered format's description: a message naming the key.
public struct FormatDescriptionError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A registered format's beacon, as `Beacon.registered` holds it: equal when its value is.
public struct RegisteredBeacon: Hashable, Sendable {
    public let value: any RegisteredBeaconFormat

    public init(_ value: some RegisteredBeaconFormat) { self.value = value }

    public static func == (lhs: RegisteredBeacon, rhs: RegisteredBeacon) -> Bool {
        AnyHashable(lhs.value) == AnyHashable(rhs.value)
    }

    public func hash(into hasher: inout Hasher) { AnyHashable(value).hash(into: &hasher) }
}

/// The formats registered besides the codec's own, each once, by name.
public enum BeaconFormats {
    /// The names the codec's own formats take (and `custom`, any advertising data, and
    /// `eddystone`, a frame of a type it does not decode): a registered format takes another.
    public static let builtInNames = Set(ownNames + ["eddystone", "custom"])

    /// The codec's own formats' names, in the order lists show them.
    public static let ownNames = ownDescribed.map { $0.name }

    private static let formats = Mutex<[any RegisteredBeaconFormat.Type]>([])
    /// How many are registered: decoding looks no further while none is (a load, no lock).
    private static let count = Atomic<Int>(0)

    /// Why a format could not be registered.
    public struct RegistrationError: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Adds a format; registering the same type again changes nothing.
    /// - Throws: `RegistrationError` when its name is empty, not lowercase, holds a space, a comma
    ///   or '=', or is taken (by one of the codec's own formats or another registered type).
    public static func register(_ format: any RegisteredBeaconFormat.Type) throws(RegistrationError) {
        let name = format.name
        guard !name.isEmpty, name == name.lowercased(), !name.contains(where: { $0 == "," || $0 == "=" || $0.isWhitespace })
        else {
            throw RegistrationError(description: "a format's name is lowercase, without spaces, commas or '=': got '\(name)'")
        }
        guard !builtInNames.contains(name) else {
            throw RegistrationError(description: "'\(name)' is the name of one of the codec's own formats")
        }
        let result: Result<Void, RegistrationError> = formats.withLock { list in
            if let taken = list.first(where: { $0.name == name }) {
                return taken == format ? .success(())
                    : .failure(RegistrationError(description: "'\(name)' is registered already (\(taken))"))
            }
            list.append(format)
            count.store(list.count, ordering: .releasing)
            return .success(())
        }
        try result.get()
    }

    /// The registered formats, in the order they were registered.
    public static var registered: [any RegisteredBeaconFormat.Type] { formats.withLock { $0 } }

    /// The registered format of that name (as `type=` gives it, in any case).
    public static func named(_ name: String) -> (any RegisteredBeaconFormat.Type)? {
        let name = name.lowercased()
        return formats.withLock { list in list.first { $0.name == name } }
    }

    /// Whether any format is registered.
    static var anyRegistered: Bool { count.load(ordering: .acquiring) > 0 }

    /// The name of the registered format called that (in any case), or nil.
    public static func registeredName(_ name: String) -> String? {
        let name = name.lowercased()
        return formats.withLock { list in list.contains { $0.name == name } ? name : nil }
    }

    /// The formats a description builds: the codec's own, in the order lists show them, then
    /// the registered ones, in the order they were registered.
    public static var described: [any DescribedBeaconFormat.Type] {
        ownDescribed + (anyRegistered ? formats.withLock { list in list.map { $0 as any DescribedBeaconFormat.Type } } : [])
    }

    /// The codec's own formats as a description builds them (`ownNames`' order).
    public static let ownDescribed: [any DescribedBeaconFormat.Type] = [IBeacon.self, AltBeacon.self, EddystoneUID.self,
                                                                         EddystoneURL.self, EddystoneTLM.self, EddystoneEID.self]

    /// The format a description's `type=` names (in any case): the codec's own or a registered one.
    public static func described(named name: String) -> (any DescribedBeaconFormat.Type)? {
        let name = name.lowercased()
        if let own = ownDescribed.first(where: { $0.name == name }) { return own }
        return named(name)
    }

    /// The keys the formats' descriptions take, each once, in the formats' order.
    public static var descriptionKeys: [String] {
        var keys: [String] = []
        for format in described {
            for key in format.descriptionKeys where !keys.contains(key) { keys.append(key) }
        }
        return keys
    }

    /// The registered formats' names, in the order they were registered.
    public static var registeredNames: [String] { formats.withLock { list in list.map { $0.name } } }

    /// The specifications of the formats that state one: the codec's own, then the registered
    /// formats', in the order they were registered.
    public static var specifications: [BeaconSpecification] {
        ownSpecifications + (anyRegistered ? formats.withLock { list in list.compactMap { $0.specification } } : [])
    }

    /// The codec's own formats' specifications.
    private static let ownSpecifications = [IBeacon.specification, AltBeacon.specification, EddystoneUID.specification,
                                            EddystoneURL.specification, EddystoneTLM.specification]

    /// The specification of the format of that name, if it states one (an audit asks per
    /// report: the codec's own are found without a lock or a new list).
    public static func specification(named name: String) -> BeaconSpecification? {
        let name = name.lowercased()
        if let own = ownSpecifications.first(where: { $0.name == name }) { return own }
        guard anyRegistered else { return nil }
        return formats.withLock { list in list.lazy.compactMap { $0.specification }.first { $0.name == name } }
    }

    /// Every format's name a beacon can be heard as: the codec's own and the registered ones.
    public static var allNames: [String] {
        ownNames + registeredNames
    }

    /// The first registered format's beacon in a structure, or nil.
    static func decode(_ structure: ADStructure) throws(CodecError) -> Beacon? {
        guard anyRegistered else { return nil }
        for format in registered {
            if let beacon = try decode(structure, as: format) { return beacon }
        }
        return nil
    }

    private static func decode<F: RegisteredBeaconFormat>(_ structure: ADStructure, as format: F.Type) throws(CodecError) -> Beacon? {
        try format.decode(structure).map { .registered(RegisteredBeacon($0)) }
    }
}
