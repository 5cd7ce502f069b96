// SPDX-License-Identifier: GPL-2.0-or-later

@testable import AdvertisementCodec
import Testing

/// The lengths-only walk that finds the TX power level must answer what parsing the data does:
/// the same level for data that fits, the same error (structure, offset, reason) for data that
/// does not.
@Suite struct TxPowerWalkTests {
    func expected(_ bytes: [UInt8]) -> Result<Int8?, CodecError> {
        do throws(CodecError) {
            return .success(try AdvertisingData(parsing: bytes).txPowerLevel)
        } catch {
            return .failure(error)
        }
    }

    /// The structure-by-structure walk, for a slice of a larger input.
    func expected(_ bytes: ArraySlice<UInt8>) -> Result<Int8?, CodecError> {
        var structures = ADStructureReader(bytes)
        var level: Int8? = nil
        do throws(CodecError) {
            while let structure = try structures.next() {
                if level == nil { level = structure.txPowerLevel }
            }
            return .success(level)
        } catch {
            return .failure(error)
        }
    }

    func walked(_ bytes: ArraySlice<UInt8>) -> Result<Int8?, CodecError> {
        do throws(CodecError) {
            return .success(try ADStructureReader.txPowerLevel(in: bytes))
        } catch {
            return .failure(error)
        }
    }

    @Test func agreesWithParsingOnRandomData() {
        var generator = SystemRandomNumberGenerator()
        var failures = 0, levels = 0
        for _ in 0..<20_000 {
            // Pieces: TX power levels, other structures, padding and stray bytes, so data that
            // fits, data that does not and levels all come up often.
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                let random = { UInt8.random(in: 0...255, using: &generator) }
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: bytes += [0x02, 0x0A, random()]
                case 1: let length = Int.random(in: 1...4, using: &generator)
                        bytes += [UInt8(length)] + (0..<length).map { _ in random() }
                case 2: bytes += [0x00]
                default: bytes += (0..<Int.random(in: 1...3, using: &generator)).map { _ in random() }
                }
            }
            let want = expected(bytes)
            #expect(walked(bytes[...]) == want, "\(HexText.format(bytes, separator: " "))")
            // Offsets stay those of the whole input when the data is a slice of it.
            let padded = [0xEE, 0xEE] + bytes
            #expect(walked(padded[2...]) == expected(padded[2...]))
            if case .failure = want { failures += 1 }
            if case .success(.some) = want { levels += 1 }
        }
        #expect(failures > 1000 && levels > 1000)
    }

    @Test func takesTheFirstLevelAndStopsAtPadding() {
        #expect(walked(hex("02 0A F4 02 0A 05")[...]) == .success(-12))
        #expect(walked(hex("02 01 06 00 02 0A 05")[...]) == .success(nil))
        #expect(walked(hex("03 0A F4 00")[...]) == .success(nil))  // not one byte: not a level
    }
}
