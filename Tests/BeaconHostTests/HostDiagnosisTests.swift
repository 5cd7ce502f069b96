// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
@testable import BeaconHost
import Foundation
import Testing

/// `doctor`'s judgement: each condition the troubleshooting guide names, as a survey of a box
/// would find it, gives its check's verdict and remedy; a healthy box passes every check.
@Suite struct HostDiagnosisTests {
    /// A box where everything is as it should be: hci0 up, powered, extended advertising.
    static var healthy: HostSurvey {
        let adapter = HostSurvey.Adapter(name: "hci0", index: 0, up: true, address: "00:AA:01:00:00:00")
        return HostSurvey(kernelRelease: "6.12.0", managementVersion: "1.22", adapters: [adapter], adapter: adapter,
                          settings: [.powered, .lowEnergy], radioSwitch: .init(soft: false, hard: false),
                          bluetoothd: .init(name: "bluetoothd", pid: 42), bluetoothdVersion: "5.66", root: false,
                          missingCapabilities: [], executable: "/usr/bin/beacon-emit",
                          controller: .init(version: "5.0", manufacturer: "Intel (0x0002)", extendedAdvertising: true,
                                            advertisingSets: 4, codedPHY: true),
                          instances: .init(maximum: 4, listed: []))
    }

    func diagnosis(_ survey: HostSurvey, _ check: String) throws -> HostDiagnosis {
        try #require(survey.diagnoses.first { $0.check == check }, "no \(check) check in \(survey.diagnoses)")
    }

    @Test func aHealthyBoxPassesEveryCheck() {
        let survey = Self.healthy
        #expect(survey.verdict == .pass)
        #expect(survey.diagnoses.map(\.check) == ["kernel", "management", "permission", "adapter", "rfkill", "powered",
                                                  "bluetoothd", "controller", "privacy", "instances", "leftovers", "others"])
        #expect(survey.diagnoses.allSatisfy { $0.verdict == .pass && $0.remedy == nil }, "\(survey.diagnoses)")
    }

    @Test func aKernelWithoutBluetoothFailsAndSaysWhyFirst() throws {
        var survey = Self.healthy
        survey.bluetoothProblem = "socket(AF_BLUETOOTH): Address family not supported by protocol (errno 97)"
        #expect(survey.verdict == .fail)
        #expect(survey.diagnoses.first == HostDiagnosis("kernel", .fail, "Linux 6.12.0: " + survey.bluetoothProblem!,
                                                        remedy: .loadBluetooth(otherNetworkNamespace: false)))
        survey.inOtherNetworkNamespace = true
        #expect(try diagnosis(survey, "kernel").remedy == .loadBluetooth(otherNetworkNamespace: true))
    }

    @Test func anRfkillBlockFailsSayingWhichSwitch() throws {
        var survey = Self.healthy
        survey.radioSwitch = .init(soft: true, hard: false)
        #expect(try diagnosis(survey, "rfkill") == HostDiagnosis("rfkill", .fail, "hci0 is blocked by software (rfkill)",
                                                                  remedy: .unblock(hard: false)))
        survey.radioSwitch = .init(soft: false, hard: true)
        #expect(try diagnosis(survey, "rfkill").remedy == .unblock(hard: true))
        #expect(survey.verdict == .fail)
    }

    @Test func anAdapterDownOrPoweredOffFails() throws {
        var survey = Self.healthy
        survey.adapter?.up = false
        survey.settings = [.lowEnergy]
        #expect(try diagnosis(survey, "powered") == HostDiagnosis("powered", .fail, "hci0 is down",
                                                                   remedy: .bringUp(adapter: "hci0", index: 0)))
        survey.adapter?.up = true
        #expect(try diagnosis(survey, "powered").finding == "hci0 is up but powered off")
        survey.settings = [.powered]
        #expect(try diagnosis(survey, "powered").verdict == .warn)
    }

    @Test func missingCapabilitiesFailWithTheBinarysPath() throws {
        var survey = Self.healthy
        survey.missingCapabilities = ["CAP_NET_ADMIN", "CAP_NET_RAW"]
        let found = try diagnosis(survey, "permission")
        #expect(found.verdict == .fail && found.remedy == .grantCapabilities(executable: "/usr/bin/beacon-emit"))
        survey.root = true
        #expect(try diagnosis(survey, "permission").verdict == .pass)
    }

    @Test func bluetoothdStoppedIsAWarningNotAFailure() throws {
        var survey = Self.healthy
        survey.bluetoothd = nil
        #expect(try diagnosis(survey, "bluetoothd").remedy == .startBluetoothd)
        #expect(survey.verdict == .warn)
    }

    @Test func aLegacyOnlyControllerIsAWarningThatSaysWhatItMeans() throws {
        var survey = Self.healthy
        survey.controller?.extendedAdvertising = false
        let found = try diagnosis(survey, "controller")
        #expect(found.verdict == .warn && found.remedy == .extendedController)
        #expect(found.finding.contains("legacy advertising only") && found.finding.contains("whatever interval is asked"))
        survey.controller = nil
        survey.controllerProblem = "hci0 is down"
        #expect(try diagnosis(survey, "controller").finding == "capabilities not read: hci0 is down")
    }

    @Test func instancesAreToldApartByWhoseTheyAre() throws {
        var survey = Self.healthy
        survey.instances = .init(maximum: 5, listed: [1, 2, 3, 4])
        survey.records = [.init(instances: [2], pid: 100, running: true, kept: false),
                          .init(instances: [3, 9], pid: 101, running: false, kept: false),
                          .init(instances: [4], pid: 102, running: false, kept: true)]
        let instances = try diagnosis(survey, "instances")
        #expect(instances.verdict == .warn && instances.remedy == .otherPrograms)
        #expect(instances.finding == "4 of 5 advertising instances in use; running beacon-emit: 2; "
                + "another program's (bluetoothd's, btmgmt's): 1")
        let leftovers = survey.diagnoses.filter { $0.check == "leftovers" }
        #expect(leftovers.map(\.verdict) == [.fail, .warn])
        #expect(leftovers.first?.remedy == .removeLeftovers(adapter: "hci0"))
        #expect(leftovers.first?.finding.hasPrefix("instance(s) 3 on hci0") == true, "a gone instance (9) is not named")
        #expect(survey.verdict == .fail)
    }

    @Test func privacyOnIsAWarning() throws {
        var survey = Self.healthy
        survey.settings = [.powered, .lowEnergy, .privacy]
        #expect(try diagnosis(survey, "privacy").remedy == .privacyOff(index: 0))
    }

    @Test func anAdapterThatIsNotThereNamesThoseThatAre() throws {
        var survey = Self.healthy
        survey.adapter = nil
        survey.missingAdapter = "hci3"
        #expect(try diagnosis(survey, "adapter") == HostDiagnosis("adapter", .fail,
                                                                   "no adapter hci3; there are: hci0 (up, 00:AA:01:00:00:00)",
                                                                   remedy: .chooseAdapter(among: ["hci0"])))
        survey.missingAdapter = nil
        survey.adapters = []
        #expect(try diagnosis(survey, "adapter").remedy == .connectAdapter)
    }

    @Test func otherProgramsAndServicesAreJudged() throws {
        var survey = Self.healthy
        survey.others = [.init(name: "hcitool", pid: 77)]
        #expect(try diagnosis(survey, "others").finding.hasSuffix("hcitool (pid 77)"))
        survey.services = [.init(name: "lobby", state: "failed"), .init(name: "door", state: "active"),
                           .init(name: "hall", state: "inactive"), .init(name: "lab", state: nil)]
        #expect(["lobby", "door", "hall", "lab"].map { name in survey.diagnoses.first { $0.check == "service \(name)" }?.verdict }
                == [.fail, .pass, .warn, .pass])
    }

    @Test func theEffectiveCapabilitiesAreReadFromTheStatusFile() {
        #expect(HostSurvey.missingCapabilities(status: "Name:\tx\nCapEff:\t0000000000003000\n").isEmpty)
        #expect(HostSurvey.missingCapabilities(status: "CapEff:\t0000000000001000\n") == ["CAP_NET_RAW"])
        #expect(HostSurvey.missingCapabilities(status: "CapEff:\t0000000000000000\n") == ["CAP_NET_ADMIN", "CAP_NET_RAW"])
        #expect(HostSurvey.missingCapabilities(status: nil) == ["CAP_NET_ADMIN", "CAP_NET_RAW"])
    }

    @Test func theAdaptersRfkillSwitchIsFoundByName() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rfkill-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (entry, type, name, soft) in [("rfkill0", "wlan", "phy0", "1"), ("rfkill1", "bluetooth", "hci1", "0"),
                                          ("rfkill2", "bluetooth", "hci0", "1")] {
            try FileManager.default.createDirectory(atPath: "\(directory)/\(entry)", withIntermediateDirectories: true)
            for (file, value) in [("type", type), ("name", name), ("soft", soft), ("hard", "0")] {
                try "\(value)\n".write(toFile: "\(directory)/\(entry)/\(file)", atomically: true, encoding: .utf8)
            }
        }
        #expect(HostSurvey.radioSwitch(of: "hci0", in: directory) == .init(soft: true, hard: false))
        #expect(HostSurvey.radioSwitch(of: "hci1", in: directory) == .init(soft: false, hard: false))
        #expect(HostSurvey.radioSwitch(of: "hci2", in: directory) == nil)
    }
}
