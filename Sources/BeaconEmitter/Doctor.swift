// SPDX-License-Identifier: GPL-2.0-or-later

import ArgumentParser
import BeaconHost
import BeaconReports

/// `beacon-emit doctor`: the box looked at as the troubleshooting guide would, with what to do.
struct Doctor: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check this box for beacons: the kernel, the adapter, permissions, the controller, other programs.",
        discussion: """
            One line per check, PASS, WARN or FAIL, with what to do about each that is not a pass: \
            Bluetooth in the kernel and its management API version; the adapter (present, rfkill, up and \
            powered); bluetoothd and its version; root or the two capabilities; the controller's LE features \
            (extended advertising, its sets, the Coded PHY) and what a legacy-only controller means; LE privacy; \
            the kernel's advertising instances, whose they are, and those ended runs left on the air; other \
            programs holding Bluetooth sockets; and each configuration's service. Opens no advertising and \
            changes nothing. Exit status 0 when nothing fails (warnings included), 1 when a check fails.
            """ + guide("troubleshooting.md") + HelpExamples.text("doctor"))

    @Option(name: [.customShort("i"), .customLong("device")], help: ArgumentHelp(
        "The kernel adapter to look at: hci0 (or 0) or its address. Default: the first that is up.", valueName: "adapter"),
        transform: parsed(DeviceSpecification.init(parsing:)))
    var device: DeviceSpecification?

    @Flag(help: "One JSON object per check, then a summary line.")
    var json = false

    func validate() throws {
        switch device {
        case nil, .kernel?, .adapter?: break
        case let other?: throw ValidationError("doctor looks at kernel adapters: --device hciN or an adapter's address, not \(other)")
        }
    }

    func run() throws {
        let survey = HostSurvey.take(adapter: device)
        let diagnoses = survey.diagnoses
        let worst = diagnoses.map(\.verdict).max() ?? .pass
        for diagnosis in diagnoses {
            let fix = diagnosis.remedy.map(Self.advice)
            if json {
                var object = JSONObject()
                object.add("check", diagnosis.check)
                object.add("verdict", diagnosis.verdict.rawValue)
                object.add("finding", diagnosis.finding)
                if let fix { object.add("fix", fix) }
                print(object.line)
            } else {
                let verdict = diagnosis.verdict.rawValue.uppercased().padding(toLength: 5, withPad: " ", startingAt: 0)
                let check = diagnosis.check.padding(toLength: 11, withPad: " ", startingAt: 0)
                print("\(verdict)\(check) \(diagnosis.finding)")
                if let fix, diagnosis.verdict != .pass { print("                 fix: \(fix)") }
            }
        }
        let count = { (verdict: HostDiagnosis.Verdict) in diagnoses.filter { $0.verdict == verdict }.count }
        if json {
            var object = JSONObject()
            object.add("summary", worst.rawValue)
            object.add("pass", count(.pass))
            object.add("warn", count(.warn))
            object.add("fail", count(.fail))
            print(object.line)
        } else {
            print("\(count(.pass)) passed, \(count(.warn)) warnings, \(count(.fail)) failed")
        }
        if worst == .fail { throw ExitCode(1) }
    }

    /// A remedy in the command line's own words.
    static func advice(_ remedy: HostDiagnosis.Remedy) -> String {
        switch remedy {
        case let .loadBluetooth(otherNetworkNamespace):
            return otherNetworkNamespace ? "run it in the host's network namespace (podman or docker run --net=host)"
                : "load the kernel's Bluetooth support (sudo modprobe bluetooth); without a kernel adapter, use "
                  + "--device virtual, tcp:HOST:PORT or serial:PATH"
        case .connectAdapter:
            return "plug in an adapter (a Bluetooth 5 USB dongle; lsusb shows it), or use --device virtual"
        case let .chooseAdapter(among):
            return among.isEmpty ? "plug in an adapter, or use --device virtual"
                : "name one of them: --device \(among.joined(separator: " or "))"
        case let .bringUp(adapter, index):
            return "add --up to beacon-emit's options (--device \(adapter) --up), or sudo btmgmt --index \(index) power on"
        case let .unblock(hard):
            return hard ? "switch the radio on (a hardware switch, or Bluetooth enabled in the firmware settings)"
                : "sudo rfkill unblock bluetooth"
        case .startBluetoothd:
            return "sudo systemctl enable --now bluetooth; or give beacon-emit --up, which powers the adapter itself"
        case let .grantCapabilities(executable):
            return "sudo setcap cap_net_raw,cap_net_admin+eip \(executable) (once), or run as root"
        case .extendedController:
            return "one beacon at the kernel's rate needs nothing; for --interval, --tx-power, --phy coded or several "
                + "beacons at once, use a controller with extended advertising (Bluetooth 5 with LE extended "
                + "advertising) with --device hciN"
        case let .privacyOff(index):
            return "sudo btmgmt --index \(index) privacy off where scanners key beacons by address; "
                + "or --access raw with --random-address static for an address that stays"
        case let .removeLeftovers(adapter):
            return "beacon-emit stop --recorded (the next run on \(adapter) removes them too)"
        case let .stopKept(adapter):
            return "beacon-emit stop -i \(adapter) when they should go"
        case .otherPrograms:
            return "they share the air and the advertising instances; stop them where a test needs the adapter alone, "
                + "or use --access user-channel"
        case let .inspectService(name):
            return "journalctl -u beacon-emit@\(name); sudo systemctl restart beacon-emit@\(name)"
        }
    }
}
