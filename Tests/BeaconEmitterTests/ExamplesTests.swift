// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import Testing

/// Every scenario shipped in examples/ is valid as the command reads it.
@Suite struct ExamplesTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../examples").standardized

    @Test func everyExampleScenarioIsValid() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter { $0.hasSuffix(".yaml") }.sorted()
        #expect(files.count >= 5, "\(files)")
        for file in files {
            let result = try runBeaconEmit(["run", "--check", Self.folder.appendingPathComponent(file).path])
            #expect(result.status == 0 && result.stdout.hasSuffix(": valid\n"), "\(file): \(result.stdout)\(result.stderr)")
        }
    }

    @Test func aBrokenScenarioIsRefusedWithItsPlace() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(getpid()).yaml").path
        try "beacons:\n  a: {uuid: 39ED98FF-2900-441A-802F-9C398FC199D2, major: 1, minor: 1}\nsteps:\n  - advertise: b\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try runBeaconEmit(["run", "--check", path])
        #expect(result.status == 65)
        #expect(result.stderr == "beacon-emit: \(path):4:16: no beacon named 'b' (declare it under 'beacons'); there are: a\n",
                "\(result.stderr)")
    }
}
