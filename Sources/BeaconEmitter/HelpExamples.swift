// SPDX-License-Identifier: GPL-2.0-or-later

/// The examples each command's help ends with, run by the tests (`HelpExamplesTests`): those
/// that name no adapter as they are, the others on the virtual radio (hci0 and hci1 its two
/// devices there, a command that runs until stopped interrupted after a few seconds); those
/// of commands that only look at kernel adapters (doctor, stop) on one that is not there.
enum HelpExamples {
    static let byCommand: [String: [String]] = [
        "advertise": [
            "beacon-emit -i hci0 --uuid random --major 101 --minor 2",
            "beacon-emit -i hci0 --eddystone-url https://example.com --interval 200",
            "beacon-emit -i hci0 --json --duration 60 --uuid random --major 1 --minor 2",
        ],
        "scan": [
            "beacon-emit scan -i hci0",
            "beacon-emit scan -i hci0 --json --duration 10",
        ],
        "audit": [
            "beacon-emit audit --scanner hci1 --duration 10",
            "beacon-emit audit --scanner hci1 --duration 10 --junit audit.xml",
        ],
        "verify": [
            "beacon-emit verify -i hci0 --scanner hci1 --uuid random --major 1 --minor 2",
            "beacon-emit verify -i hci0 --scanner hci1 --eddystone-url https://example.com",
        ],
        "calibrate": [
            "beacon-emit calibrate -i hci0 --scanner hci1 --uuid random --major 1 --minor 2",
            "beacon-emit calibrate --scanner hci1 --uuid random --major 1 --minor 2 --json",
        ],
        "monitor": [
            "beacon-emit monitor -i hci0 --uuid 39ED98FF-2900-441A-802F-9C398FC199D2",
            "beacon-emit monitor -i hci0 --uuid 39ED98FF2900441A802F9C398FC199D2 --json",
        ],
        "run": [
            "beacon-emit run examples/enter-exit.yaml --check",
            "beacon-emit run examples/enter-exit.yaml -i hci0 --scanner hci1 --json",
        ],
        "replay": [
            "beacon-emit replay examples/lobby.btsnoop --check",
            "beacon-emit replay examples/lobby.btsnoop -i hci0 --speed 2 --json",
            "beacon-emit replay examples/lobby.btsnoop -i hci0 --sets 1 --turn 0.5",
        ],
        "control": [
            "beacon-emit control /tmp/beacons.sock list",
            "beacon-emit control /tmp/beacons.sock add uuid=random,major=1,minor=7",
            "beacon-emit control /tmp/beacons.sock update 1 minor=8",
        ],
        "stop": [
            "beacon-emit stop -i hci0",
            "beacon-emit stop --recorded",
        ],
        "info": [
            "beacon-emit info -i hci0",
            "beacon-emit info -i hci0 --json",
            "beacon-emit info --all",
        ],
        "doctor": [
            "beacon-emit doctor",
            "beacon-emit doctor -i hci0 --json",
        ],
        "decode": [
            "beacon-emit decode 0201060303AAFE0E16AAFE10EE036578616D706C6507",
            "beacon-emit encode --uuid random --major 1 --minor 2 | beacon-emit decode",
        ],
        "encode": [
            "beacon-emit encode --uuid random --major 101 --minor 2",
            "beacon-emit encode --eddystone-url https://example.com --hci --extended",
            "beacon-emit encode --name Sensor --manufacturer-data 0x0059:0102 --json",
        ],
    ]

    /// The examples in the command's discussion, for the manual page only (what
    /// `--experimental-dump-help` gives `generate-manual`); `--help` prints them at its end
    /// (`block`, from `BeaconEmit.main`), where the argument parser puts no discussion.
    static func text(_ command: String) -> String {
        guard CommandLine.arguments.contains("--experimental-dump-help") else { return "" }
        return "\n\n" + block(command)
    }

    /// The examples as the end of `--help` shows them.
    static func block(_ command: String) -> String {
        guard let examples = byCommand[command], !examples.isEmpty else { return "" }
        return "EXAMPLES:\n" + examples.map { "  " + $0 }.joined(separator: "\n")
    }
}
