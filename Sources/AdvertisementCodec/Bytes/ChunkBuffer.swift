// SPDX-License-Identifier: GPL-2.0-or-later

/// Bytes that arrive in chunks and are consumed from the front (the buffer behind the H4
/// stream decoder and the btsnoop parser). Consumed bytes are dropped lazily, so appending
/// and consuming stay linear in the bytes that pass through.
struct ChunkBuffer: Sendable {
    /// Storage; the unconsumed bytes are `storage[readIndex...]`.
    private(set) var storage: [UInt8] = []
    private(set) var readIndex = 0
    /// Bytes dropped from the front of `storage` so far.
    private var dropped = 0

    /// Bytes received and not yet consumed.
    var count: Int { storage.count - readIndex }

    /// Offset in the whole stream of `storage[index]`.
    func streamOffset(ofStorageIndex index: Int) -> Int { dropped + index }

    mutating func append(_ bytes: some Sequence<UInt8>) {
        if readIndex > 0, readIndex >= storage.count / 2 {
            storage.removeFirst(readIndex)
            dropped += readIndex
            readIndex = 0
        }
        storage.append(contentsOf: bytes)
    }

    /// The unconsumed byte at `offset`. Callers keep `offset < count`.
    subscript(offset: Int) -> UInt8 { storage[readIndex + offset] }

    /// The big-endian 32-bit number in the unconsumed bytes at `offset`. Callers keep
    /// `offset + 4 <= count`.
    func uint32BE(at offset: Int) -> UInt32 {
        precondition(offset >= 0 && offset <= count - 4, "ChunkBuffer.uint32BE(at:) past the end")
        return storage.withUnsafeBytes { UInt32(bigEndian: $0.loadUnaligned(fromByteOffset: readIndex + offset, as: UInt32.self)) }
    }

    /// `length` unconsumed bytes from `offset`, indexed as in `storage`.
    func slice(from offset: Int, length: Int) -> ArraySlice<UInt8> {
        storage[(readIndex + offset)..<(readIndex + offset + length)]
    }

    /// Marks `length` bytes consumed.
    mutating func consume(_ length: Int) {
        readIndex += length
        if readIndex == storage.count {
            dropped += storage.count
            storage.removeAll(keepingCapacity: true)
            readIndex = 0
        }
    }
}
