// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconTracking
import Testing

/// Calibration on recorded RSSI series whose answers are worked out by hand.
@Suite struct CalibrationTests {
    @Test func theTrimmedMeanRoundedIsTheMeasuredPower() throws {
        // 20 samples: the two lowest (-90, -85) and two highest (-40, -30) go; the other 16
        // (twelve -60, three -58, one -57) average -951 / 16 = -59.4375.
        let samples = [-90, -85, -40, -30] + Array(repeating: -60, count: 12) + [-58, -58, -57, -58]
        let calibration = try Calibration(samples: samples)
        #expect(calibration.sampleCount == 20)
        #expect(calibration.keptCount == 16)
        #expect(calibration.mean == -59.4375)
        #expect(calibration.measuredPower == -59)
        #expect(calibration.lowest == -60 && calibration.highest == -57)
        #expect(abs(calibration.standardDeviation - 0.998044963916) < 1e-9)
    }

    @Test func halvesRoundAwayFromZero() throws {
        let calibration = try Calibration(samples: Array(repeating: -61, count: 5) + Array(repeating: -62, count: 5))
        #expect(calibration.mean == -61.5)
        #expect(calibration.measuredPower == -62)
    }

    @Test func tooFewOrNoSamplesAreClearErrors() {
        #expect(throws: CalibrationError.neverHeard) { try Calibration(samples: []) }
        #expect(throws: CalibrationError.tooFewSamples(9)) { try Calibration(samples: Array(repeating: -59, count: 9)) }
        #expect(CalibrationError.tooFewSamples(1).description.contains("heard 1 time;"))
    }
}
