// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import BeaconTracking
import BeaconHost
import BeaconReports

/// What a step asked of other machines, once they answered.
public struct StepSettlement: Sendable {
    /// One message per failure: a refusal, or a box that dropped out.
    public var failures: [String] = []
    /// Each box the step changed, and the time from the step's first request to that box's
    /// last reply (the change applied there).
    public var applied: [(host: String, seconds: Double)] = []
    /// A signal asked the run to end while the step waited for the boxes.
    public var interrupted = false

    public init(failures: [String] = [], applied: [(host: String, seconds: Double)] = [], interrupted: Bool = false) {
        self.failures = failures
        self.applied = applied
        self.interrupted = interrupted
    }
}
