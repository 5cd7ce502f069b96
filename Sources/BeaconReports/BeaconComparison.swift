// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// A beacon found by its identifiers, and what else in its advertising data differs from
/// what was described: `verify` by identity. A vendor's beacon rarely matches byte for byte
/// (another measured power, a name, its own Flags); what the user stated is checked, the rest
/// is reported.
public enum BeaconComparison {
    /// One field that differs: its name, as described and as heard ("absent" where one side
    /// has none), and whether the user stated it (a stated field that differs fails).
    public struct Difference: Sendable, Hashable {
        public var field: String
        public var expected: String
        public var heard: String
        public var stated: Bool
    }

    /// The fields a user can state besides the identifiers, by what stated them.
    public struct Stated: Sendable, Hashable {
        public var measuredPower = false
        public var flags = false
        public var name = false
        /// `--manufacturer-data` (the company IDs given), `--service-data`, `--service-uuid`.
        public var manufacturerData = false
        public var serviceData = false
        public var serviceUUIDs = false
        /// AltBeacon's company ID.
        public var company = false

        public init(measuredPower: Bool = false, flags: Bool = false, name: Bool = false, manufacturerData: Bool = false,
                    serviceData: Bool = false, serviceUUIDs: Bool = false, company: Bool = false) {
            self.measuredPower = measuredPower
            self.flags = flags
            self.name = name
            self.manufacturerData = manufacturerData
            self.serviceData = serviceData
            self.serviceUUIDs = serviceUUIDs
            self.company = company
        }
    }

    /// Whether `heard` is the same beacon as `described` by its identifiers (iBeacon and
    /// AltBeacon: the three IDs; Eddystone-UID: namespace and instance; Eddystone-URL: the
    /// URL). Beacons without identifiers (TLM, custom data) are never the same by identity.
    /// (The identifiers are the ones each format writes as identifying it: `BeaconFormat`.)
    public static func sameIdentity(_ described: Beacon, _ heard: Beacon) -> Bool {
        let (a, b) = (described.format, heard.format)
        guard a.formatName.description == b.formatName.description else { return false }
        let identifiers = a.identifiers
        return !identifiers.isEmpty && identifiers == b.identifiers
    }

    /// Whether a beacon has identifiers to be found by.
    public static func hasIdentity(_ beacon: Beacon) -> Bool {
        !beacon.format.identifiers.isEmpty
    }

    /// The beacon in `data` with `described`'s identifiers, if any.
    public static func find(_ described: Beacon, in data: [UInt8]) -> Beacon? {
        // A layout's beacon is read with its layout (nothing decodes one without it).
        guard let parsed = try? AdvertisingData(parsing: data),
              let beacons = try? LayoutBeacon.beacons(in: parsed, reading: LayoutBeacon.layouts(of: [described])) else { return nil }
        return beacons.first { sameIdentity(described, $0) }
    }

    /// What differs between the described beacon's advertising data and what was heard, field
    /// by field: the beacon's measured power and its format's other fields besides its
    /// identifiers (AltBeacon's company and reserved byte), then
    /// each AD structure beside the beacon's by its type (manufacturer data by company, service
    /// data by UUID), those heard that were not described as well.
    public static func differences(described: Beacon, heard data: [UInt8], stated: Stated) -> [Difference] {
        guard let heardBeacon = find(described, in: data) else { return [] }
        var differences: [Difference] = []
        func add(_ field: String, _ expected: String, _ heard: String, _ isStated: Bool) {
            if expected != heard { differences.append(Difference(field: field, expected: expected, heard: heard, stated: isStated)) }
        }
        add("measuredPower", described.measuredPower.map { "\($0) dBm" } ?? "none",
            heardBeacon.measuredPower.map { "\($0) dBm" } ?? "none", stated.measuredPower)
        // The format's other fields (AltBeacon's company and reserved byte), as it writes them.
        var expectedFields = OtherFields()
        described.writeFields(to: &expectedFields)
        var heardFields = OtherFields()
        heardBeacon.writeFields(to: &heardFields)
        // The power is compared above, in one unit (Eddystone also writes it at 0 m).
        for (key, value) in expectedFields.fields where key != "measuredPower" && key != "txPowerAt0m" {
            add(key, value, heardFields.fields.first { $0.key == key }?.text ?? "absent", key == "companyId" && stated.company)
        }
        // A layout's beacon is its layout's structure (manufacturer or service data), not another.
        let layouts = LayoutBeacon.layouts(of: [described])
        func beside(_ structures: [ADStructure]) -> [(key: String, structure: ADStructure)] {
            others(in: structures.filter { structure in !layouts.contains { $0.layout.reading(structure) != nil } })
        }
        let expected = beside(described.advertisingData.structures)
        let heard = beside((try? AdvertisingData(parsing: data))?.structures ?? [])
        for (key, structure) in expected {
            let value = heard.first { $0.key == key }?.structure
            add(key, text(structure), value.map(text) ?? "absent", isStated(structure.type, stated))
        }
        for (key, structure) in heard where !expected.contains(where: { $0.key == key }) {
            add(key, "absent", text(structure), false)
        }
        return differences
    }

    /// The AD structures beside a beacon's own (its manufacturer data, Eddystone's service data
    /// and service UUID list), each with a key naming it.
    private static func others(in structures: [ADStructure]) -> [(key: String, structure: ADStructure)] {
        structures.compactMap { structure in
            if let (company, payload) = structure.manufacturerData {
                if company == .apple && Array(payload.prefix(2)) == [0x02, 0x15] { return nil }
                if Array(payload.prefix(2)) == [0xBE, 0xAC] { return nil }
                return ("\(structure.type) \(company)", structure)
            }
            if let service = structure.serviceData16 {
                if service.uuid == EddystoneFrame.serviceUUID { return nil }
                return ("\(structure.type) 0x\(HexText.format([UInt8(service.uuid >> 8), UInt8(service.uuid & 0xFF)]))", structure)
            }
            if structure.type == .completeServiceUUIDs16, Array(structure.data) == [0xAA, 0xFE] { return nil }
            return ("\(structure.type)", structure)
        }
    }

    private static func text(_ structure: ADStructure) -> String {
        if structure.type == .completeLocalName || structure.type == .shortenedLocalName {
            return "\"\(String(decoding: structure.data, as: UTF8.self))\""
        }
        return HexText.format(structure.data, separator: " ")
    }

    private static func isStated(_ type: ADType, _ stated: Stated) -> Bool {
        switch type {
        case .flags: stated.flags
        case .completeLocalName, .shortenedLocalName: stated.name
        case .manufacturerSpecificData: stated.manufacturerData
        case .serviceData16, .serviceData32, .serviceData128: stated.serviceData
        case .completeServiceUUIDs16, .completeServiceUUIDs32, .completeServiceUUIDs128,
             .incompleteServiceUUIDs16, .incompleteServiceUUIDs32, .incompleteServiceUUIDs128: stated.serviceUUIDs
        default: false
        }
    }
}

/// The fields a format writes besides its identifiers, each as text shows its value.
private struct OtherFields: BeaconFieldWriter {
    var fields: [(key: String, text: String)] = []

    mutating func field(_ key: StaticString, _ value: BeaconFieldValue, text: BeaconFieldText, identifies: Bool) {
        guard !identifies else { return }
        if case let .token(token) = text, let equals = token.firstIndex(of: "=") {
            fields.append(("\(key)", String(token[token.index(after: equals)...])))
        } else {
            fields.append(("\(key)", value.text))
        }
    }
}
