// SPDX-License-Identifier: GPL-2.0-or-later

import LinuxSystem
import Testing

/// Waiting for a child is woken by its end (a pidfd), not by checking every few milliseconds.
@Suite struct ChildProcessTests {
    @Test func aWaitEndsWithTheChildAndSaysHow() throws {
        let child = try ChildProcess(arguments: ["sh", "-c", "sleep 0.2; exit 3"], output: .discard, errors: .discard)
        #expect(child.wait(until: .now + .milliseconds(20)) == nil, "still running")
        // (A kernel from 5.3 on gives a descriptor of the child's; under an emulator that lacks
        // pidfd_open the 5 ms check runs instead: the same answers either way.)
        #expect(child.wait(until: .now + .seconds(30)) == .exited(3))
        #expect(child.wait(until: .now) == .exited(3), "asked again: the same")
        let killed = try ChildProcess(arguments: ["sleep", "30"], output: .discard, errors: .discard)
        killed.stop(grace: .seconds(5))
        #expect(killed.termination == .signalled(15))
    }
}
