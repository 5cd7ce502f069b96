// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import Testing

/// `beacon-emit doctor` as a user runs it on this machine. Each condition with an adapter is
/// checked in the VM (scripts/vm-checks, `doctor`); here, what a machine without Bluetooth
/// shows, and the shape of both outputs.
@Suite struct DoctorCommandTests {
    static let kernelHasBluetooth = FileManager.default.fileExists(atPath: "/sys/module/bluetooth")

    @Test(.enabled(if: !kernelHasBluetooth, "this machine's kernel has Bluetooth: the VM checks cover it"))
    func aKernelWithoutBluetoothFailsFirstWithTheFix() throws {
        let (output, status) = try Readme.run("beacon-emit doctor")
        #expect(status == 1, "\(output)")
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("FAIL kernel      Linux ") == true, "\(output)")
        #expect(lines.first?.contains("errno 97") == true && lines.first?.contains("no Bluetooth in this kernel") == true)
        #expect(lines.dropFirst().first?.contains("fix: load the kernel's Bluetooth support (sudo modprobe bluetooth)") == true,
                "\(output)")
        #expect(lines.last?.hasSuffix("1 failed") == true, "\(output)")
    }

    @Test(.enabled(if: !kernelHasBluetooth, "this machine's kernel has Bluetooth: the VM checks cover it"))
    func itsJSONIsOneObjectPerCheckThenASummary() throws {
        let (output, status) = try Readme.run("beacon-emit doctor --json")
        #expect(status == 1)
        let objects = try output.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
        let checks = objects.dropLast()
        #expect(checks.allSatisfy { ["pass", "warn", "fail"].contains($0["verdict"] as? String ?? "") && $0["finding"] is String })
        #expect(checks.first?["check"] as? String == "kernel" && checks.first?["fix"] is String)
        let summary = try #require(objects.last)
        #expect(summary["summary"] as? String == "fail" && summary["fail"] as? Int == 1, "\(output)")
        for line in output.split(separator: "\n") { try StrictJSON.check(String(line)) }
    }

    /// `info --all` on a kernel without Bluetooth: no adapter, why, and where to look; exit 69.
    /// (On kernels with adapters, the VM check `info-all` lists them.)
    @Test(.enabled(if: !kernelHasBluetooth, "this machine's kernel has Bluetooth: the VM checks cover it"))
    func infoAllWithoutAdaptersSaysWhy() throws {
        let (output, status) = try Readme.run("beacon-emit info --all")
        #expect(status == 69, "\(output)")
        #expect(output.contains("no Bluetooth adapter: ") && output.contains("no Bluetooth in this kernel")
                && output.contains("beacon-emit doctor"), "\(output)")
        let (withDevice, usage) = try Readme.run("beacon-emit info --all -i hci0")
        #expect(usage == 64 && withDevice.contains("--all lists every kernel adapter"), "\(withDevice)")
    }

    @Test func aDeviceThatIsNoKernelAdapterIsAUsageError() throws {
        let (output, status) = try Readme.run("beacon-emit doctor --device tcp:127.0.0.1:1")
        #expect(status == 64)
        #expect(output.contains("doctor looks at kernel adapters"), "\(output)")
    }
}
