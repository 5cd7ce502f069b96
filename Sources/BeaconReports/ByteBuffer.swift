// SPDX-License-Identifier: GPL-2.0-or-later

/// Bytes in memory of their own, for writers that append a few bytes at a time: a writer
/// reserves room for the most it will write (`reserve`), then writes without checks. (An
/// `[UInt8]` checks uniqueness and capacity on every append, which was a third of `decode`.)
/// Not copyable: one owner, freed with it.
struct ByteBuffer: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    /// Where a buffer of no capacity points: never written, never freed.
    nonisolated(unsafe) private static let nowhere = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)

    /// An empty buffer; with no capacity it allocates nothing (until something is reserved),
    /// so an empty one costs nothing to make and swap in.
    init(capacity: Int = 0) {
        self.capacity = max(0, capacity)
        base = self.capacity > 0 ? .allocate(capacity: self.capacity) : Self.nowhere
    }

    deinit {
        if capacity > 0 { base.deallocate() }
    }

    /// Makes room for `extra` more bytes, so that many may be written unchecked.
    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if capacity &- count < extra { grow(toHold: count + extra) }
    }

    @inline(never)
    private mutating func grow(toHold needed: Int) {
        let larger = max(needed, capacity * 2, 64)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.initialize(from: base, count: count)
        if capacity > 0 { base.deallocate() }
        base = moved
        capacity = larger
    }

    /// Appends a byte within room already reserved.
    @inline(__always)
    mutating func appendReserved(_ byte: UInt8) {
        base[count] = byte
        count &+= 1
    }

    /// Appends bytes within room already reserved.
    @inline(__always)
    mutating func appendReserved(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress else { return }
        (base + count).initialize(from: source.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        count &+= bytes.count
    }

    /// Appends text known at compile time within room already reserved.
    @inline(__always)
    mutating func appendReserved(_ text: StaticString) {
        text.withUTF8Buffer { appendReserved(UnsafeRawBufferPointer($0)) }
    }

    /// Writes up to `most` bytes (reserved first) through a pointer; `body` returns how many it wrote.
    @inline(__always)
    mutating func appendReserving(_ most: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        reserve(most)
        count &+= body(base + count)
    }

    mutating func append(_ byte: UInt8) {
        reserve(1)
        appendReserved(byte)
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        reserve(bytes.count)
        appendReserved(bytes)
    }

    mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { append(UnsafeRawBufferPointer($0)) }
    }

    /// Appends the UTF-8 of a string.
    mutating func append(utf8 text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    /// The most bytes `appendDecimal` writes: a sign and 20 digits.
    static let decimalMost = 21

    /// Writes an integer in decimal, within `decimalMost` bytes reserved.
    @inline(__always)
    mutating func appendDecimalReserved(negative: Bool, magnitude: UInt64) {
        if negative { appendReserved(UInt8(ascii: "-")) }
        // Most numbers written are small (RSSI, powers, a distance's metres): up to three
        // digits without counting them in a loop.
        if magnitude < 1000 {
            let small = UInt16(truncatingIfNeeded: magnitude)
            if small < 10 {
                appendReserved(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: small))
            } else if small < 100 {
                appendReserved(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: small / 10))
                appendReserved(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: small % 10))
            } else {
                appendReserved(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: small / 100))
                appendReserved(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: small / 10 % 10))
                appendReserved(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: small % 10))
            }
            return
        }
        var digits = 1
        var limit: UInt64 = 10
        while digits < 20 && magnitude >= limit {
            digits += 1
            limit &*= 10
        }
        appendReserving(digits) { text in
            // From the last digit back, two at a time from a table of 00 to 99.
            let pairs = Self.digitPairs.utf8Start
            var rest = magnitude
            var index = digits
            while rest >= 100 {
                let pair = Int(rest % 100)
                rest /= 100
                index -= 2
                text[index] = pairs[2 * pair]
                text[index + 1] = pairs[2 * pair + 1]
            }
            if rest >= 10 {
                text[index - 2] = pairs[2 * Int(rest)]
                text[index - 1] = pairs[2 * Int(rest) + 1]
            } else {
                text[index - 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest)
            }
            return digits
        }
    }

    private static let digitPairs: StaticString = """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """

    /// Writes an integer in decimal.
    mutating func appendDecimal(_ value: some BinaryInteger) {
        reserve(Self.decimalMost)
        appendDecimalReserved(negative: value < 0, magnitude: UInt64(truncatingIfNeeded: value.magnitude))
    }

    /// Drops the bytes from `index` on (what a writer wrote for something that then failed).
    mutating func removeLast(from index: Int) {
        precondition(index >= 0 && index <= count, "ByteBuffer.removeLast(from:) out of range")
        count = index
    }

    mutating func removeAll() {
        count = 0
    }

    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Writes the bytes to a file descriptor (all of them, as `OutputBuffer.writeAll`) and empties the buffer.
    mutating func write(to descriptor: Int32) {
        withUnsafeBytes { OutputBuffer.writeAll($0, to: descriptor) }
        removeAll()
    }

    /// The bytes as UTF-8 text.
    func string() -> String {
        withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }
}
