// SPDX-License-Identifier: GPL-2.0-or-later

import LinuxSystem
import Testing

/// The loop's epoll set keeps its registrations between waits: a wait on the same descriptors
/// registers nothing, and a descriptor closed and its number opened anew is registered again.
@Suite struct WakeSetTests {
    @Test func waitsOnTheSameDescriptorsRegisterNothing() throws {
        let first = try WakePipe(), second = try WakePipe()
        let set = WakeSet()
        defer { set.close() }
        let both: Set<Int32> = [first.descriptor, second.descriptor]
        set.watch(both)
        #expect(set.registrations >= 2)
        // Other tests in this process close descriptors meanwhile, which makes the next watch
        // register again (as it must): judged over a stretch in which none closed.
        var judged = false
        for _ in 0..<50 where !judged {
            set.watch(both)
            let closes = Descriptor.closeCount, before = set.registrations
            for _ in 0..<100 { set.watch(both) }
            guard Descriptor.closeCount == closes else { continue }
            #expect(set.registrations == before, "100 watches of the same descriptors registered again")
            judged = true
        }
        #expect(judged, "no stretch without a close in this process")
        second.wake()
        #expect(try set.wait(until: .now + .seconds(5)) == [second.descriptor])
        second.drain()
        // One no longer asked for is removed, not waited on.
        set.watch([first.descriptor])
        second.wake()
        #expect(try set.wait(until: .now + .milliseconds(50)).isEmpty)
    }

    @Test func aClosedDescriptorsNumberOpenedAnewIsWatched() throws {
        let set = WakeSet()
        defer { set.close() }
        let old = try WakePipe.pair()
        set.watch([old.read])
        _ = try set.wait(until: .now)
        Descriptor(old.read).close()
        Descriptor(old.write).close()
        // The lowest free numbers come back: the new pipe's read end is very likely the old
        // one's number, which left the epoll set when it closed.
        let new = try WakePipe.pair()
        defer {
            Descriptor(new.read).close()
            Descriptor(new.write).close()
        }
        set.watch([new.read])
        var byte: UInt8 = 1
        _ = try withUnsafeBytes(of: &byte) { bytes throws(SystemCallError) in
            try Descriptor(new.write).write(bytes, name: "write(pipe)")
        }
        #expect(try set.wait(until: .now + .seconds(5)) == [new.read])
    }
}
