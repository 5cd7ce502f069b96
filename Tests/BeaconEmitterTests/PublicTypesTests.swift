// SPDX-License-Identifier: GPL-2.0-or-later

import Foundation
import Testing

/// BeaconHost's public types, as the compiler sees them (its symbol graph of the module this
/// build made), are the list docs/library.md gives, one line each; and no more of them than
/// the bound below, which only goes down: a new public type takes the place of one made
/// `package`.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["BEACON_EMIT_EMULATED"] == nil,
                "the symbol graph is read with this machine's toolchain, of this machine's build"))
struct PublicTypesTests {
    /// The most public types BeaconHost has (there were 36 on 2026-12-05).
    static let mostPublicTypes = 32

    /// The section's entries: "- `Name`: what it is for."
    static func documented() throws -> [String] {
        let text = try String(contentsOf: Readme.root.appendingPathComponent("docs/library.md"), encoding: .utf8)
        guard let start = text.range(of: "\n## BeaconHost's public types\n") else { return [] }
        let section = text[start.upperBound...]
        let body = section.range(of: "\n## ").map { section[..<$0.lowerBound] } ?? section
        return body.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("- `"), let end = line.dropFirst(3).firstIndex(of: "`") else { return nil }
            return String(line[line.index(line.startIndex, offsetBy: 3)..<end])
        }
    }

    /// The public types of the BeaconHost module beside this test bundle, by their dotted names.
    static func compiled() throws -> [String] {
        let products = URL(fileURLWithPath: try beaconEmitPath()).deletingLastPathComponent()
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("symbols-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: output) }
        var machine = utsname()
        uname(&machine)
        let architecture = withUnsafeBytes(of: machine.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        var arguments = ["swift", "symbolgraph-extract", "-module-name", "BeaconHost",
                         "-I", products.appendingPathComponent("Modules").path,
                         "-target", "\(architecture)-unknown-linux-gnu", "-minimum-access-level", "public",
                         "-output-dir", output.path]
        for module in ["CHCI", "CLinux"] {
            arguments += ["-Xcc", "-fmodule-map-file=" + products.appendingPathComponent("\(module).build/module.modulemap").path]
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let said = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "swift symbolgraph-extract: \(String(decoding: said, as: UTF8.self))")
        let graph = try JSONSerialization.jsonObject(with: Data(contentsOf: output.appendingPathComponent("BeaconHost.symbols.json")))
        let symbols = (graph as? [String: Any])?["symbols"] as? [[String: Any]] ?? []
        let kinds: Set = ["swift.struct", "swift.enum", "swift.class", "swift.protocol", "swift.typealias", "swift.actor"]
        return symbols.compactMap { symbol in
            guard let kind = (symbol["kind"] as? [String: Any])?["identifier"] as? String, kinds.contains(kind),
                  symbol["accessLevel"] as? String == "public" || symbol["accessLevel"] as? String == "open",
                  let path = symbol["pathComponents"] as? [String] else { return nil }
            return path.joined(separator: ".")
        }.sorted()
    }

    @Test func theDocumentedListIsTheModules() throws {
        let documented = try Self.documented()
        let compiled = try Self.compiled()
        #expect(!compiled.isEmpty && compiled.contains("BeaconAdvertisement"), "the symbol graph named no type: \(compiled)")
        #expect(documented == documented.sorted(), "docs/library.md lists them in alphabetical order")
        #expect(Set(compiled).subtracting(documented).sorted() == [], "public in BeaconHost, not in docs/library.md")
        #expect(Set(documented).subtracting(compiled).sorted() == [], "in docs/library.md, not public in BeaconHost")
        #expect(compiled.count <= Self.mostPublicTypes,
                "BeaconHost has \(compiled.count) public types, more than \(Self.mostPublicTypes): make what only the package uses `package`")
    }
}
