// SPDX-License-Identifier: GPL-2.0-or-later

/// A beacon found in a packet, with what the packet said about its sender.
public struct BeaconSighting: Hashable, Sendable {
    public var beacon: Beacon
    /// The advertiser, when the packet was an advertising report.
    public var address: BluetoothAddress?
    public var addressType: AddressType?
    /// Received signal strength in dBm, when reported (127, "not available", becomes nil).
    public var rssi: Int8?
    /// Transmit power in dBm: from an extended report, or else the advertising data's
    /// TX Power Level structure.
    public var txPower: Int8?

    public init(beacon: Beacon, address: BluetoothAddress? = nil, addressType: AddressType? = nil,
                rssi: Int8? = nil, txPower: Int8? = nil) {
        self.beacon = beacon
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.txPower = txPower
    }
}
