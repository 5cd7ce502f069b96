// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
import BeaconReports

/// What a scenario's observer gave while it waited.
public enum Observation: Sendable {
    case report(ScanReport)
    case deadline
    /// A signal asked the run to end.
    case interrupted
}
