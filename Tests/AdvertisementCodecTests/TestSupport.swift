// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
import Foundation
import Testing

/// Bytes from annotated hex: everything after `//` on a line is a comment; whitespace ignored.
func hex(_ annotated: String) -> [UInt8] {
    let digits = annotated.split(separator: "\n")
        .map { line in line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? String(line) }
        .joined()
        .filter { !$0.isWhitespace }
    var bytes: [UInt8] = []
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        bytes.append(UInt8(digits[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

/// Runs `body` and returns the `CodecError` it throws, recording a failure if it throws none.
func codecError(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> CodecError? {
    do {
        try body()
        Issue.record("expected a CodecError, none was thrown", sourceLocation: sourceLocation)
    } catch let error as CodecError {
        return error
    } catch {
        Issue.record("expected a CodecError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// A small deterministic generator so failures reproduce (SplitMix64).
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension UUID {
    static func random(using generator: inout SeededGenerator) -> UUID {
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
        return UUID(bytes: bytes[...])
    }
}

/// The iBeacon example from Apple's Location and Maps Programming Guide.
let appleExampleUUID = UUID(uuidString: "39ED98FF-2900-441A-802F-9C398FC199D2")!
let appleExampleAdvertisingData = hex("""
    02 01 06                                         // Flags: LE General Discoverable, BR/EDR not supported
    1A FF                                            // length 26, manufacturer specific data
    4C 00                                            // company 0x004C Apple, little-endian
    02 15                                            // iBeacon type, 21 bytes follow
    39 ED 98 FF 29 00 44 1A 80 2F 9C 39 8F C1 99 D2  // proximity UUID in written order
    00 65                                            // major 101
    00 02                                            // minor 2
    C5                                               // measured power -59 dBm
    """)
