// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import ArgumentParser

/// `--layout [NAME=]LAYOUT` and `--id ID ...`: a region of an app's own layout, as the
/// android-beacon-library's `Region(id1, id2, id3)` names one (`monitor`, `audit`).
struct LayoutRegionOptions: ParsableArguments {
    @Option(name: .customLong("layout"), help: ArgumentHelp(
        "A region of your app's own layout instead of --uuid: the layout, named with NAME= in front.",
        valueName: "[name=]layout"))
    var layout: String?

    @Option(name: .customLong("id"), help: ArgumentHelp(
        "With --layout: the region's identifiers, the layout's first ones in order, as the library writes them.",
        valueName: "id"))
    var identifiers: [String] = []

    func validate() throws {
        if layout == nil && !identifiers.isEmpty { throw ValidationError("--id is a layout's identifier: give its --layout") }
        _ = try region()
    }

    /// The region asked for; nil without `--layout`.
    func region() throws -> BeaconLayout.Region? {
        guard let layout else { return nil }
        do {
            return try BeaconLayout.Region(layout: layout, identifiers: identifiers)
        } catch {
            throw ValidationError("--layout: \(error)")
        }
    }
}
