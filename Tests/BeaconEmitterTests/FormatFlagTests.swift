// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import ArgumentParser
@testable import BeaconEmitter
import BeaconRig
import Testing

/// The command's one static list of formats (swift-argument-parser needs its flags so) is held
/// equal to the codec's formats a description builds, and each flag's help is its format's line.
@Suite struct FormatFlagTests {
    @Test func theFlagsAreTheFormatsADescriptionBuilds() {
        // Eddystone-URL is selected by its URL (--eddystone-url, url=), not a flag.
        let flagged = BeaconFormats.builtIn.filter { $0.selectingKey == nil }.map { $0.name }
        #expect(FormatFlag.allCases.map(\.rawValue) == flagged)
        for flag in FormatFlag.allCases {
            #expect(FormatFlag.help(for: flag)?.abstract == BeaconFormats.named(flag.rawValue)?.summary)
        }
    }
}
