// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import Foundation

public struct ExpectationError: Error, CustomStringConvertible {
    var part: String
    var unknownKey: String? = nil
    var nearest: String? = nil
    public var description: String {
        if let unknownKey {
            return "--expect: no beacon has a key '\(unknownKey)'" + (nearest.map { " (did you mean '\($0)'?)" } ?? "")
                + ": the keys are those of --json's output: " + Expectation.keys.sorted().joined(separator: ", ")
        }
        return "--expect: \"\(part)\" is not KEY=VALUE (the keys of --json's output, comma-separated: type=ibeacon,major=101)"
    }
}
