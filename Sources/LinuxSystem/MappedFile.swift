// SPDX-License-Identifier: GPL-2.0-or-later

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The rest of a regular file, mapped read-only from a descriptor's offset: read with no copy,
/// its pages given back as they are done with, the offset moved to where reading goes on.
public final class MappedFile {
    private let descriptor: Int32
    private let map: UnsafeMutableRawPointer
    private let length: Int
    /// The descriptor's offset when mapped, and where it lies in the mapping (page-aligned start).
    private let offset: off_t
    private let lead: Int
    private let page: Int
    private var released = 0
    /// The bytes from the descriptor's offset to the end of the file.
    public let bytes: UnsafeBufferPointer<UInt8>

    /// The rest of the file open on `descriptor`, from its offset; nil where it is not a
    /// regular file, nothing is left, or the mapping is refused (what uses it reads instead).
    public init?(restOf descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        let offset = lseek(descriptor, 0, SEEK_CUR)
        guard offset >= 0, info.st_size > offset else { return nil }
        let page = CurrentProcess.pageSize
        let aligned = offset / off_t(page) * off_t(page)
        let length = Int(info.st_size - aligned)
        guard let map = mmap(nil, length, PROT_READ, MAP_PRIVATE, descriptor, aligned),
              map != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
        self.descriptor = descriptor
        self.map = map
        self.length = length
        self.offset = offset
        self.page = page
        lead = Int(offset - aligned)
        bytes = UnsafeBufferPointer(start: UnsafePointer(map.assumingMemoryBound(to: UInt8.self)) + lead,
                                    count: Int(info.st_size - offset))
    }

    /// Gives back the whole pages before byte `position` of `bytes` (they are read from the
    /// file again if touched), so that resident memory stays that of what is still in use.
    public func release(before position: Int) {
        let done = (lead + position) / page * page
        guard done > released else { return }
        madvise(map + released, done - released, MADV_DONTNEED)
        released = done
    }

    /// Moves the descriptor's offset to byte `position` of `bytes`, for reading to go on from.
    public func setOffset(to position: Int) {
        lseek(descriptor, offset + off_t(position), SEEK_SET)
    }

    deinit { munmap(map, length) }
}
