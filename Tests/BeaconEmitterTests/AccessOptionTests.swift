// SPDX-License-Identifier: GPL-2.0-or-later

import Testing

/// `--access` and `--fail-fast` as a user meets them without an adapter: usage errors for
/// combinations that cannot work, before anything is opened.
@Suite struct AccessOptionTests {
    static let beacon = ["--uuid", "39ED98FF2900441A802F9C398FC199D2", "--major", "101", "--minor", "2"]

    @Test(arguments: ["mgmt", "user-channel"])
    func aKernelWayInOnAnH4LinkIsAUsageError(access: String) throws {
        for command in [["advertise"] + Self.beacon, ["stop"]] {
            let result = try runBeaconEmit(command + ["--device", "tcp:127.0.0.1:9", "--access", access])
            #expect(result.status == 64, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("--access \(access) is for kernel adapters (--device hciN)"))
        }
    }

    @Test func keepWithTheUserChannelIsRefused() throws {
        let result = try runBeaconEmit(Self.beacon + ["--device", "hci0", "--access", "user-channel", "--keep"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("the kernel takes the adapter back, down, when beacon-emit exits"))
    }

    @Test func anUnknownWayInListsTheChoices() throws {
        let result = try runBeaconEmit(Self.beacon + ["--access", "exclusive"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("auto, mgmt, raw, user-channel") || result.stderr.contains("'exclusive'"),
                "\(result.stderr)")
    }

    /// The interval is checked before anything is opened, against the range of the way in use
    /// (it went out and only the controller's refusal stopped it, exit 76).
    @Test(arguments: [(["--interval", "10"], "--interval must be from 20 to 10485759 ms (extended advertising), got 10.0"),
                      (["--interval", "20000", "--legacy"], "--interval must be from 20 to 10240 ms (legacy advertising), got 20000.0"),
                      (["--interval", "20000000"], "--interval must be from 20 to 10485759 ms (extended advertising)")])
    func anIntervalOutsideTheStandardsRangeIsAUsageError(arguments: [String], message: String) throws {
        let result = try runBeaconEmit(Self.beacon + arguments + ["--device", "tcp:127.0.0.1:9"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }
}
