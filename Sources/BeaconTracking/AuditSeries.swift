// SPDX-License-Identifier: GPL-2.0-or-later

/// What an audit heard over time, for a picture (`audit --report`): the time of each report of
/// the advertising measured, and each RSSI with its time, in seconds.
public struct AuditSeries: Sendable {
    public var times: [Double] = []
    public var rssi: [(at: Double, dBm: Int8)] = []

    public init(times: [Double] = [], rssi: [(at: Double, dBm: Int8)] = []) {
        self.times = times
        self.rssi = rssi
    }
}
