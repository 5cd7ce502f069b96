// SPDX-License-Identifier: GPL-2.0-or-later

import CGlibcCompat
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The glibc 2.38 functions CGlibcCompat gives a binary linked against an older glibc (the arm64
/// release, linked against Debian 12's): C23's conversions (C17's, and "0b" binary numbers with
/// base 0 or 2), sscanf, strlcpy and strlcat. Expected values are the C23 standard's and BSD's
/// manual's; where C17 and C23 agree, glibc's own strtol is the reference. On a glibc that has
/// them these are the C library's own functions, held to the same rules.
@Suite struct GlibcCompatTests {
    /// The value and how many characters were read.
    private func read<T>(_ text: String, base: Int32, _ convert: (UnsafePointer<CChar>, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, Int32) -> T) -> (T, Int, Int32) {
        text.withCString { start in
            var end: UnsafeMutablePointer<CChar>?
            errno = 0
            let value = convert(start, &end, base)
            let consumed = end.map { UnsafePointer($0) - start } ?? -1
            return (value, consumed, errno)
        }
    }

    /// A C string in a buffer, up to its terminator.
    private func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test(arguments: ["42", "  -17", "+0x1F", "0777", "z", "", "12abc", "-0", "9223372036854775807",
                      "9223372036854775808", "-9223372036854775809", "0b", "0x", "0b2", "  0B", "- 1"])
    func agreesWithC17WhereC17AndC23Agree(text: String) {
        for base: Int32 in [0, 10, 16, 8] {
            let ours = read(text, base: base, __isoc23_strtol)
            let c17 = read(text, base: base, strtol)
            #expect(ours.0 == c17.0 && ours.1 == c17.1 && ours.2 == c17.2, "\(text) base \(base)")
            let oursUnsigned = read(text, base: base, __isoc23_strtoull)
            let c17Unsigned = read(text, base: base, strtoull)
            #expect(oursUnsigned.0 == c17Unsigned.0 && oursUnsigned.1 == c17Unsigned.1, "\(text) base \(base)")
        }
    }

    @Test func readsBinaryNumbersWithBaseZeroOrTwo() {
        for base: Int32 in [0, 2] {
            #expect(read("0b101", base: base, __isoc23_strtol) == (5, 5, 0))
            #expect(read("  -0B1111x", base: base, __isoc23_strtoll) == (-15, 9, 0))
            #expect(read("+0b1", base: base, __isoc23_strtoul) == (1, 4, 0))
            #expect(read("0b1000", base: base, __isoc23_strtoull) == (8, 6, 0))
        }
        // "0b" not followed by a binary digit: the "0" alone, as C17 reads it.
        #expect(read("0b2", base: 0, __isoc23_strtol) == (0, 1, 0))
        // Base 10 and 16 read "0b1" as C17 does: 0 then 'b'; and 0xB1 in hex.
        #expect(read("0b1", base: 10, __isoc23_strtol) == (0, 1, 0))
        #expect(read("0b1", base: 16, __isoc23_strtol) == (0xB1, 3, 0))
    }

    @Test func binaryOverflowClampsAndSetsERANGE() {
        let ones64 = "0b" + String(repeating: "1", count: 64)
        let ones65 = "0b" + String(repeating: "1", count: 65)
        #expect(read(ones64, base: 0, __isoc23_strtoull) == (UInt64.max, 66, 0))
        #expect(read(ones65, base: 0, __isoc23_strtoull) == (UInt64.max, 67, ERANGE))
        #expect(read(ones64, base: 0, __isoc23_strtoll) == (Int64.max, 66, ERANGE))
        let minimum = "-0b1" + String(repeating: "0", count: 63)
        #expect(read(minimum, base: 0, __isoc23_strtoll) == (Int64.min, 67, 0))
        #expect(read("-0b1" + String(repeating: "0", count: 64), base: 0, __isoc23_strtol) == (Int.min, 68, ERANGE))
        // As strtoul does, a negative number is its magnitude negated.
        #expect(read("-0b1", base: 0, __isoc23_strtoul) == (UInt.max, 4, 0))
    }

    @Test func sscanfConvertsAsC17Does() {
        var number: Int32 = 0
        var word = [CChar](repeating: 0, count: 16)
        let count = "17 beacons".withCString { text in
            word.withUnsafeMutableBufferPointer { buffer in
                withUnsafeMutablePointer(to: &number) { pointer in
                    glibc_compat_scan_number_and_word(text, pointer, buffer.baseAddress)
                }
            }
        }
        #expect(count == 2)
        #expect(number == 17)
        #expect(text(word) == "beacons")
    }

    @Test func strlcpyTruncatesAndReturnsTheSourceLength() {
        var buffer = [CChar](repeating: 0x7F, count: 8)
        #expect(strlcpy(&buffer, "beacon", 8) == 6)
        #expect(text(buffer) == "beacon")
        #expect(strlcpy(&buffer, "beacon-emit", 8) == 11)
        #expect(text(buffer) == "beacon-")
        // Size 0 writes nothing.
        buffer[0] = 0x41
        #expect(strlcpy(&buffer, "xyz", 0) == 3)
        #expect(buffer[0] == 0x41)
    }

    @Test func strlcatAppendsWithinTheSize() {
        var buffer = [CChar](repeating: 0, count: 10)
        _ = strlcpy(&buffer, "iBea", 10)
        #expect(strlcat(&buffer, "con", 10) == 7)
        #expect(text(buffer) == "iBeacon")
        #expect(strlcat(&buffer, " 101", 10) == 11)
        #expect(text(buffer) == "iBeacon 1")
        // No terminator within the size: nothing appended; the size plus the source's length.
        var full: [CChar] = Array("abcd".utf8CString.dropLast()).map { CChar($0) }
        #expect(strlcat(&full, "ef", 4) == 6)
        #expect(full == [0x61, 0x62, 0x63, 0x64].map { CChar($0) })
    }
}
