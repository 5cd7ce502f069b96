// SPDX-License-Identifier: GPL-2.0-or-later

import Synchronization

/// A beacon as `Beacon.registered` holds it: a format's value from outside the codec's own
/// cases (a registered type's, `RegisteredBeaconFormat`; an app's layout's, `LayoutBeacon`).
public protocol RegisteredBeaconValue: BeaconFormat, Hashable {
    /// The advertising data a transmitter sends for it.
    var advertisingData: AdvertisingData { get }
}

/// A beacon format from outside the codec, added by registering its type once
/// (`try BeaconFormats.register(Acme.self)`): decoding then finds it in advertising data, a
/// beacon description (`type=acme,...`) builds it, and everything that asks a beacon's format
/// (the printers, the tracker, regions, audits, advertising) asks it. Its fields, identity and
/// measured power are `BeaconFormat`'s, as for the codec's own formats.
public protocol RegisteredBeaconFormat: RegisteredBeaconValue, DescribedBeaconFormat {
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
    public let value: any RegisteredBeaconValue

    public init(_ value: some RegisteredBeaconValue) { self.value = value }

    public static func == (lhs: RegisteredBeacon, rhs: RegisteredBeacon) -> Bool {
        AnyHashable(lhs.value) == AnyHashable(rhs.value)
    }

    public func hash(into hasher: inout Hasher) { AnyHashable(value).hash(into: &hasher) }
}

