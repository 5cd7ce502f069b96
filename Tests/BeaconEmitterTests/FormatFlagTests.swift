// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
@testable import BeaconEmitter
import BeaconRig
import Testing

/// The command's one static list of formats (swift-argument-parser needs its flags so) is held
/// equal to the formats a description builds, and those to the codec's own.
@Suite struct FormatFlagTests {
    @Test func theFlagsAreTheFormatsADescriptionBuilds() {
        #expect(FormatFlag.allCases.map(\.rawValue) == BeaconDescription.Format.allCases.map(\.rawValue))
        #expect(FormatFlag.allCases.allSatisfy { $0.described != nil })
        // Eddystone-URL is built by its URL (--eddystone-url, url=), not a flag.
        #expect(Set(FormatFlag.allCases.map(\.rawValue) + ["eddystone-url"]) == Set(BeaconFormats.ownNames))
    }
}
