// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// Which advertiser an audit listens to: one address, the advertiser of a beacon (whatever
/// its address, which may rotate), or, with neither, the strongest heard.
public struct AuditChoice: Sendable, Hashable {
    public var address: BluetoothAddress?
    /// iBeacon or AltBeacon identifiers.
    public var region: BeaconRegion?
    /// Eddystone-UID namespace and instance.
    public var namespace: [UInt8]?
    public var instance: [UInt8]?
    /// Eddystone-URL, as it decodes.
    public var url: String?
    /// A region of an app's layout (`audit --layout`): the beacon its data reads as, as the app's
    /// parser reads it.
    public var layout: BeaconLayout.Region?

    public init(address: BluetoothAddress? = nil, region: BeaconRegion? = nil, namespace: [UInt8]? = nil,
                instance: [UInt8]? = nil, url: String? = nil, layout: BeaconLayout.Region? = nil) {
        self.address = address
        self.region = region
        self.namespace = namespace
        self.instance = instance
        self.url = url
        self.layout = layout
    }

    /// Whether a beacon's identifiers choose the advertiser.
    public var byBeacon: Bool { region != nil || namespace != nil || instance != nil || url != nil || layout != nil }

    /// Whether a report's advertising data is the chosen beacon's: read through the layout, or
    /// the beacons it carries asked (`matches`).
    public func chooses(_ data: AdvertisingData) -> Bool {
        if let layout { return layout.contains(data) }
        return ((try? Beacon.beacons(in: data)) ?? []).contains(where: matches)
    }

    /// What chose the advertiser, the same from run to run (`uuid=... major=1`, `address ...`);
    /// nil where nothing did (the strongest is audited).
    public var identity: String? {
        var parts: [String] = []
        if let address { parts.append("address \(address)") }
        if let region {
            if let uuid = region.uuid { parts.append("uuid=\(uuid.uuidString)") }
            if let major = region.major { parts.append("major=\(major)") }
            if let minor = region.minor { parts.append("minor=\(minor)") }
        }
        if let namespace { parts.append("namespace=\(HexText.format(namespace))") }
        if let instance { parts.append("instance=\(HexText.format(instance))") }
        if let url { parts.append("url=\(url)") }
        if let layout {
            parts.append("layout=\(layout.name)")
            parts += layout.identifierTexts.enumerated().map { "id\($0.offset + 1)=\($0.element)" }
        }
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }

    /// Whether a beacon is the one chosen, asked of its format: a region matches the
    /// identifiers it states for regions (none: no match), and each of namespace, instance and
    /// url the description field of that name (`BeaconFormat.descriptionFields`).
    public func matches(_ beacon: Beacon) -> Bool {
        let format = beacon.format
        if let region, format.regionIdentifiers == nil || !region.matches(beacon) { return false }
        // A region alone (the usual choice) asks nothing more of the format, per report.
        guard namespace != nil || instance != nil || url != nil else { return true }
        let fields = format.descriptionFields
        let wanted = [("namespace", namespace.map { HexText.format($0) }), ("instance", instance.map { HexText.format($0) }),
                      ("url", url)]
        return wanted.allSatisfy { key, value in value.map { fields[key] == $0 } ?? true }
    }
}
