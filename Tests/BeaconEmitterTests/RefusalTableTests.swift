// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import Synchronization
import Testing

/// Every beacon key with every run option, once: what a run refuses, `--check` refuses, with
/// the same message and exit status 64, and the run refuses it before sending any command;
/// what `--check` passes, a run on the virtual controller (every feature) advertises.
@Suite struct RefusalTableTests {
    static let uuid = "39ED98FF-2900-441A-802F-9C398FC199D2"
    static let beaconKeys = ["", ",interval=30", ",interval=20000", ",txPower=-8", ",address=static", ",address=non-resolvable",
                             ",address=C1:02:03:04:05:06", ",address=public", ",rotateAddress=5",
                             ",rotateAddress=5,address=static", ",pdu=extended", ",channels=37 38"]
    static let runOptions: [[String]] = [[], ["--connectable"], ["--legacy"], ["--extended"], ["--random-address", "static"],
                                         ["--random-address", "non-resolvable"], ["--tx-power", "-4"], ["--interval", "20000"],
                                         ["--phy", "coded"], ["--access", "raw"]]

    @Test func checkAndRunAgreeAndRefuseBeforeSending() throws {
        let combinations = Self.beaconKeys.flatMap { key in Self.runOptions.map { (key, $0) } }
        let results = Mutex<[String]>([])
        // Eight at a time: each run mostly waits (its duration, the virtual radio's start).
        let next = Mutex(0)
        let done = DispatchGroup()
        for _ in 0..<8 {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                while true {
                    let index = next.withLock { value in
                        defer { value += 1 }
                        return value
                    }
                    guard index < combinations.count else { return }
                    Self.check(combinations[index], into: results)
                }
            }
        }
        done.wait()
        let problems = results.withLock { $0 }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    static func check(_ combination: (String, [String]), into results: borrowing Mutex<[String]>) {
        let (key, options) = combination
        let arguments = ["--device", "virtual", "--beacon", "uuid=\(Self.uuid),major=1,minor=1\(key)",
                         "--beacon", "uuid=\(Self.uuid),major=1,minor=2"] + options
        let label = "[\(key)] \(options.joined(separator: " "))"
        do {
            let check = try runBeaconEmit(arguments + ["--check"])
            let run = try runBeaconEmit(arguments + ["--duration", "0.1", "--verbose"])
            var problems: [String] = []
            if check.status != run.status { problems.append("--check exits \(check.status), a run \(run.status): \(run.stderr)") }
            if check.status != 0 {
                if check.status != 64 { problems.append("--check exits \(check.status), not 64") }
                if run.stderr.contains("  > ") { problems.append("the run sent commands before refusing: \(run.stderr)") }
                let message = check.stderr.split(separator: "\n").first.map(String.init) ?? ""
                if message.isEmpty || !run.stderr.contains(message) {
                    problems.append("--check says '\(message)', the run '\(run.stderr)'")
                }
            }
            results.withLock { $0 += problems.map { "\(label): \($0)" } }
        } catch {
            results.withLock { $0.append("\(label): \(error)") }
        }
    }

    /// Through the management API (asked for by name), what only HCI commands can do is
    /// refused by `--check`, before any device is opened; `--access auto` takes raw HCI for it.
    @Test(arguments: [
        (["--beacon", "uuid=\(uuid),major=1,minor=1,address=static"], "beacon 1's address=static: through the management API the kernel chooses"),
        (["--uuid", uuid, "--major", "1", "--minor", "1", "--random-address", "static"], "--random-address: through the management API"),
        (["--uuid", uuid, "--major", "1", "--minor", "1", "--legacy"], "--legacy: through the management API the kernel chooses the HCI commands: use --access raw or user-channel"),
    ])
    func theManagementAPIsRefusalsComeFirst(arguments: [String], message: String) throws {
        let result = try runBeaconEmit(["--device", "hci0", "--access", "mgmt", "--check"] + arguments)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        let automatic = try runBeaconEmit(["--device", "hci0", "--check"] + arguments)
        #expect(automatic.status == 0, "\(automatic.stderr)")
    }
}
