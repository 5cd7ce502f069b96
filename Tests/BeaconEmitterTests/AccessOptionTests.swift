// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconHost
import Foundation
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
            #expect(result.stderr.contains("--access \(access): it is for kernel adapters"), "\(result.stderr)")
            #expect(result.stderr.contains("name a kernel adapter (--device hciN)"), "\(result.stderr)")
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

/// A beacon field that is not a number where one is expected: the field, the range, the value
/// (it was the argument parser's "The value 'seven' is invalid for '--minor <minor>'").
@Suite struct BeaconFieldMessageTests {
    @Test(arguments: [("minor=seven", "--beacon #1: --minor must be a number from 0 to 65535, got 'seven'"),
                      ("minor=2,measuredPower=loud", "--beacon #1: --measured-power must be a number from -128 to 127 dBm, got 'loud'")])
    func aFieldThatIsNotANumberSaysWhatItTakes(field: String, message: String) throws {
        let spec = "uuid=39ED98FF-2900-441A-802F-9C398FC199D2,major=1,\(field)"
        let result = try runBeaconEmit(["--beacon", spec, "--device", "tcp:127.0.0.1:9"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test func stopRecordedCoversEveryAdapterSoADeviceIsAUsageError() throws {
        let result = try runBeaconEmit(["stop", "--recorded", "--device", "hci0"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("--recorded covers every adapter with records: drop --device and --access"))
    }

    /// `stop --recorded` as a unit's ExecStopPost runs it: with nothing recorded it says so and
    /// succeeds; with a dead run's record and no adapter to reach (these machines have no
    /// Bluetooth) it says why and keeps the record for the next run, never failing the stop.
    @Test func stopRecordedKeepsWhatItCannotReachForTheNextRun() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beacon-emit-state-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let empty = try runBeaconEmit(["stop", "--recorded"], environment: ["STATE_DIRECTORY": directory])
        #expect(empty.status == 0, "\(empty.stderr)")
        #expect(empty.stdout.contains("no advertising instances recorded as beacon-emit's (in \(directory))"), "\(empty.stdout)")
        try InstanceRecord(adapter: "hci0", instances: [2], owner: .init(pid: Int32.max, startTime: 1)).save(in: directory)
        let result = try runBeaconEmit(["stop", "--recorded"], environment: ["STATE_DIRECTORY": directory])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("stop --recorded: hci0: "), "\(result.stdout)")
        #expect(result.stdout.contains("(the records stay for the next run)"), "\(result.stdout)")
        #expect(InstanceRecord.all(in: directory).map(\.record.instances) == [[2]])
    }

    /// A record directory others can write is neither read nor written, and the stop fails
    /// (77) saying why: a unit's ExecStopPost shows it, where exit 0 hid it.
    @Test func stopRecordedFailsOnADirectoryItDoesNotTrust() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beacon-emit-open-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(chmod(directory, 0o777) == 0)
        let result = try runBeaconEmit(["stop", "--recorded"], environment: ["STATE_DIRECTORY": directory])
        #expect(result.status == 77 && result.stderr.contains("stop --recorded: ") && result.stderr.contains("is not to be trusted")
                && result.stdout.isEmpty, "\(result.status) \(result.stderr)")
    }
}
