// SPDX-License-Identifier: GPL-2.0-or-later
//
// Against a real controller implementation: rootcanal, started by scripts/with-rootcanal in
// a private network namespace (ROOTCANAL_HCI_PORT). Every connection to its HCI port is a new
// device on one shared radio.

@testable import AdvertisementCodec
@testable import BeaconHost
import Foundation
import BeaconReports
import BeaconTracking
import Testing

let rigPort: UInt16? = ProcessInfo.processInfo.environment["ROOTCANAL_HCI_PORT"].flatMap(UInt16.init)
let rigRequired = ProcessInfo.processInfo.environment["BEACON_EMIT_REQUIRE_RIG"] == "1"
/// Set by scripts/arm64-test when this suite runs as an arm64 binary under qemu-user on another
/// machine: each program starts and runs several times slower than on the hardware it was built
/// for, and qemu's own code buffer takes 128 MiB of each process's address space.
let underEmulation = ProcessInfo.processInfo.environment["BEACON_EMIT_EMULATED"] == "1"

extension Trait where Self == ConditionTrait {
    /// Skips, under emulation only, a test whose bound emulation cannot keep; the reason is
    /// printed with the skip.
    static func notUnderEmulation(_ reason: Comment) -> Self {
        .disabled(if: underEmulation, Comment(rawValue: "under emulation: " + reason.rawValue))
    }
}

/// The reference iBeacon, and the same with minors 1, 2, 3 (bytes written out by hand).
let referenceAdvertisingData = hex("0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5")
let threeBeaconData = [
    hex("0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650001C5"),
    hex("0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650002C5"),
    hex("0201061AFF4C00021539ED98FF2900441A802F9C398FC199D200650003C5"),
]
let referenceArguments = ["--uuid", "39ED98FF-2900-441A-802F-9C398FC199D2", "--major", "101", "--minor", "2"]

/// Bytes from annotated hex (everything after `//` is a comment).
func hex(_ annotated: String) -> [UInt8] {
    (try? HexText.parse(annotated: annotated)) ?? []
}

/// Every test against the shared rootcanal radio, one at a time: advertisements from one test
/// would otherwise reach another's scanner.
@Suite(.serialized, .enabled(if: rigPort != nil, "needs scripts/with-rootcanal"))
enum Rig {}

@Suite struct RigPresenceTests {
    @Test func rigIsThereWhenTheTestScriptRequiresIt() {
        if rigRequired { #expect(rigPort != nil, "scripts/test runs the tests beside rootcanal; ROOTCANAL_HCI_PORT is unset") }
    }
}

/// A second device on the rootcanal radio that scans passively and collects advertising data.
final class TestScanner {
    let scanner: AdvertisementScanner

    init(port: UInt16, active: Bool = false, extended: Bool = false) throws {
        scanner = AdvertisementScanner(controller: HCIController(transport: try StreamTransports.connectTCP(host: "127.0.0.1",
                                                                                                        port: port)))
        try scanner.start(options: .init(active: active, extended: extended))
    }

    /// Reports received until `stop` returns true or `timeout` passes.
    func collect(timeout: Duration, until stop: ([ScanReport]) -> Bool) throws -> [ScanReport] {
        var reports: [ScanReport] = []
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, !stop(reports) {
            if let report = try scanner.nextReport(timeout: ContinuousClock.now.duration(to: deadline)) {
                reports.append(report)
            }
        }
        return reports
    }

    deinit { scanner.close() }
}

/// Every report a `TestScanner` hears, stamped as it arrives by a thread of its own that does
/// nothing else: what the air did, timed by the air rather than by when a busy test got round
/// to reading (a test that sends requests meanwhile would otherwise see its own pauses as
/// silences). The scanner is this log's alone until `stop`.
final class AirLog: @unchecked Sendable {
    private let scanner: TestScanner
    private let lock = NSLock()
    private var reports: [(at: ContinuousClock.Instant, data: [UInt8])] = []
    private var stopping = false
    private let stopped = DispatchSemaphore(value: 0)

    init(scanner: TestScanner) {
        self.scanner = scanner
        Thread.detachNewThread { [self] in
            while !lock.withLock({ stopping }) {
                guard let report = try? self.scanner.scanner.nextReport(timeout: .milliseconds(20)) else { continue }
                let at = ContinuousClock.now
                lock.withLock { reports.append((at, Array(report.data))) }
            }
            stopped.signal()
        }
    }

    /// What was heard so far, in order of arrival.
    var heard: [(at: ContinuousClock.Instant, data: [UInt8])] { lock.withLock { reports } }

    /// Waits until `done` says so or `duration` passes (looking every 10 ms).
    func listen(_ duration: Duration, until done: () -> Bool = { false }) {
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline && !done() { Thread.sleep(forTimeInterval: 0.01) }
    }

    func stop() {
        lock.withLock { stopping = true }
        stopped.wait()
    }
}

/// A second device on the rootcanal radio that advertises with raw legacy HCI commands of its
/// own, not through beacon-emit's code: a vendor's beacon as the tests need one.
final class TestAdvertiser {
    let controller: HCIController

    init(port: UInt16, data: [UInt8], intervalMilliseconds: Double = 100, address: BluetoothAddress? = nil) throws {
        controller = HCIController(transport: try StreamTransports.connectTCP(host: "127.0.0.1", port: port))
        let units = UInt16(intervalMilliseconds / 0.625)
        if let address { try controller.send(LESetRandomAddress(address: address)) }
        try controller.send(LESetAdvertisingParameters(intervalMin: units, intervalMax: units,
                                                       ownAddressType: address == nil ? .publicDevice : .randomDevice))
        try controller.send(LESetAdvertisingData(data: data))
        try controller.send(LESetAdvertisingEnable(enable: true))
    }

    deinit {
        _ = try? controller.send(LESetAdvertisingEnable(enable: false))
        controller.transport.close()
    }
}

extension Rig {
@Suite struct RootcanalTests {
    let port = rigPort ?? 0
    var device: String { "tcp:127.0.0.1:\(port)" }

    @Test(arguments: [["--legacy"], ["--extended"]])
    func advertisementArrivesByteForByte(mode: [String]) throws {
        let scanner = try TestScanner(port: port)
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "2"] + referenceArguments + mode)
        let reports = try scanner.collect(timeout: .seconds(3)) { $0.contains { Array($0.data) == referenceAdvertisingData } }
        let match = reports.first { Array($0.data) == referenceAdvertisingData }
        #expect(match != nil, "saw \(reports.map { HexText.format($0.data) })")
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        #expect(emitter.stdout.contains(mode == ["--legacy"] ? "legacy advertising" : "extended advertising, 1 set"))
    }

    /// Any payload: a name and manufacturer data, and whole advertising data, heard byte for
    /// byte at a second device, legacy and extended.
    @Test(arguments: [["--legacy"], ["--extended"]])
    func anyPayloadArrivesByteForByte(mode: [String]) throws {
        let payloads: [([String], String)] = [
            (["--name", "MySensor", "--manufacturer-data", "0x0059:01020304"], "02010607FF59000102030409094D7953656E736F72"),
            (["--ad", "0303AAFE04160F1864"], "0303AAFE04160F1864"),
            (["--flags", "04", "--service-uuid", "180F", "--service-data", "180F:64", "--manufacturer-data", "0x0059:0102",
              "--name", "Hi"], "020104" + "03030F18" + "04160F1864" + "05FF59000102" + "03094869"),
        ]
        for (arguments, hex) in payloads {
            let expected = try HexText.parse(hex)
            let scanner = try TestScanner(port: port)
            let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "2"] + arguments + mode)
            let reports = try scanner.collect(timeout: .seconds(3)) { $0.contains { Array($0.data) == expected } }
            #expect(reports.contains { Array($0.data) == expected }, "saw \(reports.map { HexText.format($0.data) })")
            #expect(emitter.wait() == 0, "\(emitter.stderr)")
        }
    }

    /// An app's own layout on the air: a company's manufacturer layout and the library's
    /// Eddystone-UID layout (service data, the UUID listed, the power byte corrected) arrive
    /// byte for byte as computed by hand, and `decode --layout` reads the heard bytes as given.
    @Test func anAppsLayoutArrivesByteForByte() throws {
        let beacons: [([String], String, String)] = [
            (["--layout", LayoutCommandTests.acme, "--id", "0x01020304", "--id", "258", "--data", "0x1234", "--data", "5",
              "--measured-power", "-70"], LayoutCommandTests.acmeBytes, "acme=" + LayoutCommandTests.acme),
            (["--layout", LayoutCommandTests.eddystoneUID, "--id", "0x00112233445566778899", "--id", "0xaabbccddeeff",
              "--measured-power", "-59"], "0201060303AAFE1516AAFE00EE00112233445566778899AABBCCDDEEFF",
             "uid=" + LayoutCommandTests.eddystoneUID),
        ]
        for (arguments, hex, layout) in beacons {
            let expected = try HexText.parse(hex)
            let scanner = try TestScanner(port: port)
            let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "2"] + arguments)
            let reports = try scanner.collect(timeout: .seconds(3)) { $0.contains { Array($0.data) == expected } }
            let heard = try #require(reports.first { Array($0.data) == expected }, "saw \(reports.map { HexText.format($0.data) })")
            #expect(emitter.wait() == 0, "\(emitter.stderr)")
            let decoded = try runBeaconEmit(["decode", "--json", "--layout", layout, HexText.format(heard.data)])
            #expect(decoded.stdout.contains(layout.hasPrefix("acme") ? #""ids":["0x01020304","258"],"dataFields":[4660,5],"measuredPower":-70"#
                                            : #""ids":["0x00112233445566778899","0xaabbccddeeff"],"dataFields":[],"measuredPower":-59"#),
                    "\(decoded.stdout)")
        }
        // scan --layout hears the app's beacon as the app would: a line of its own after the report;
        // monitor --layout: the region of its first identifier is entered, another's is not.
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "7"] + beacons[0].0)
        let scan = try runBeaconEmit(["scan", "-i", device, "--json", "--duration", "2", "--layout", beacons[0].2])
        #expect(scan.stdout.contains(#"{"type":"layout","layout":"acme","ids":["0x01020304","258"],"dataFields":[4660,5],"#
                                     + #""measuredPower":-70,"companyId":"0xFFFF","address":"#), "\(scan.stdout)\(scan.stderr)")
        let inside = try BackgroundProcess.beaconEmit(["monitor", "-i", device, "--json", "--duration", "2", "--layout", beacons[0].2,
                                                       "--id", "0x01020304"])
        let outside = try runBeaconEmit(["monitor", "-i", device, "--json", "--duration", "4", "--layout", beacons[0].2,
                                         "--id", "0x01020305"])
        #expect(inside.wait() == 0)
        #expect(inside.stdout.contains(#""state":"inside","layout":"acme","ids":["0x01020304"]"#), "\(inside.stdout)\(inside.stderr)")
        #expect(outside.stdout.contains(#""state":"outside","layout":"acme","ids":["0x01020305"]"#), "\(outside.stdout)\(outside.stderr)")
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
    }

    /// A layout's name declared on the command line (`--layout acme=LAYOUT`) names it for
    /// `--beacon layout=acme,...` and for a control `add`: the three beacons are heard byte for
    /// byte (the bytes computed by hand), and `list` shows the added one under the layout's name.
    @Test func aDeclaredLayoutNameReachesBeaconAndControl() throws {
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("layout-\(UUID().uuidString).sock").path
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "20", "--control", socket,
                                                        "--layout", "acme=" + LayoutCommandTests.acme, "--id", "0x01020304",
                                                        "--id", "258", "--data", "0x1234", "--data", "5", "--measured-power", "-70",
                                                        "--beacon", "layout=acme,ids=0x01020305 259,data=1 2,measured-power=-60"])
        defer {
            emitter.signal(SIGTERM)
            _ = emitter.wait()
        }
        #expect(emitter.waitForOutput("advertising on"), "\(emitter.stderr)")
        let added = try runBeaconEmit(["control", socket, "add", "layout=acme,ids=0x01020306 260,data=3 4,measured-power=-65"])
        #expect(added.status == 0 && added.stdout.contains(#""dataFields":[3,4],"id":3,"ids":["0x01020306","260"],"layout":"acme","measuredPower":-65,"type":"layout""#),
                "\(added.stdout) \(added.stderr)")
        let undeclared = try runBeaconEmit(["control", socket, "add", "layout=other,ids=1 2,data=3 4,measured-power=-65"])
        #expect(undeclared.status == 1 && undeclared.stderr.contains("no layout is declared as 'other' (declared: acme)"),
                "\(undeclared.stdout) \(undeclared.stderr)")
        // id1 big endian, id2 little endian (i:7-8l), the power byte, data little endian (d:10-11l) then one byte.
        let expected = [LayoutCommandTests.acmeBytes, "0201060EFFFFFF7A010203050301C4010002", "0201060EFFFFFF7A010203060401BF030004"]
            .map { try? HexText.parse($0) }
        let scanner = try TestScanner(port: port)
        let reports = try scanner.collect(timeout: .seconds(6)) { reports in
            expected.allSatisfy { bytes in reports.contains { Array($0.data) == bytes } }
        }
        for bytes in expected {
            let heard = Set(reports.map { HexText.format($0.data) })
            #expect(reports.contains { Array($0.data) == bytes }, "\(bytes.map { HexText.format($0) } ?? "") not heard: \(heard)")
        }
        let list = try runBeaconEmit(["control", socket, "list"])
        #expect(list.stdout.contains(#""dataFields":[1,2],"id":2,"ids":["0x01020305","259"],"layout":"acme","measuredPower":-60,"type":"layout""#),
                "\(list.stdout)")
    }

    /// A name that does not fit beside an iBeacon goes whole into the scan response: an active
    /// scanner gets it from the beacon's address, a passive one never does; `scan --active`
    /// shows it as a scan response.
    @Test(arguments: [["--legacy"], ["--extended"]])
    func aScanResponseIsHeardOnlyWithActiveScanning(mode: [String]) throws {
        let response = try HexText.parse("06094C6F626279")  // Complete Local Name "Lobby"
        let passive = try TestScanner(port: port)
        let active = try TestScanner(port: port, active: true)
        // Runs until stopped, so the CLI's scan below is sure to find it still on the air.
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--name", "Lobby"] + referenceArguments + mode)
        let heard = try active.collect(timeout: .seconds(5)) { reports in
            reports.contains { $0.isScanResponse && $0.data == response }
                && reports.contains { !$0.isScanResponse && $0.data == referenceAdvertisingData }
        }
        let answer = heard.first { $0.isScanResponse && $0.data == response }
        let advertising = heard.first { !$0.isScanResponse && $0.data == referenceAdvertisingData }
        #expect(answer != nil, "active scan saw \(heard.map { HexText.format($0.data) })")
        #expect(answer?.address == advertising?.address)
        let passively = try passive.collect(timeout: .milliseconds(500)) { _ in false }
        #expect(passively.contains { $0.data == referenceAdvertisingData }, "\(passively.map { HexText.format($0.data) })")
        #expect(!passively.contains { $0.isScanResponse || $0.data == response })
        let scan = try runBeaconEmit(["scan", "-i", device, "--active", "--json", "--duplicates", "--duration", "1"])
        #expect(scan.stdoutLines.contains { $0.contains(#""data":"06094C6F626279""#) && $0.contains(#""scanResponse":true"#) },
                "\(scan.stdout) \(scan.stderr)")
        emitter.signal(SIGTERM)
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        // An explicit --scan-response with whole advertising data: the same, its bytes exactly
        // (alone on the air, so the scanner's requests can only go to it).
        let explicit = try TestScanner(port: port, active: true)
        let custom = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "3", "--ad", "020106",
                                                      "--scan-response", "0409414243"] + mode)
        let answered = try explicit.collect(timeout: .seconds(3)) { $0.contains { $0.isScanResponse && $0.data == [0x04, 0x09, 0x41, 0x42, 0x43] } }
        #expect(answered.contains { $0.isScanResponse && $0.data == [0x04, 0x09, 0x41, 0x42, 0x43] },
                "\(answered.map { HexText.format($0.data) })")
        #expect(custom.wait() == 0, "\(custom.stderr)")
    }

    /// Calibrate end to end: the beacon advertised on one device and sampled at another; the
    /// answer is the trimmed mean of the samples kept, inside their spread. Too short a run
    /// and a beacon nobody sends are errors that say so.
    @Test func calibrateMeasuresTheBeaconAtTheScanner() throws {
        let result = try runBeaconEmit(["calibrate", "--device", device, "--scanner", device, "--duration", "2", "--json"]
                                       + referenceArguments)
        #expect(result.status == 0, "\(result.stderr)")
        let reply = try #require(JSONValue(parsing: result.stdoutLines.first ?? ""), "\(result.stdout)")
        let samples = try #require(reply["samples"]?.integer)
        let power = try #require(reply["measuredPower"]?.integer)
        #expect(samples >= Calibration.minimumSamples)
        #expect(reply["kept"]?.integer == samples - 2 * (samples / 10))
        #expect((reply["lowest"]?.integer ?? 0)...(reply["highest"]?.integer ?? 0) ~= power, "\(result.stdout)")
        // On the private virtual radio, both devices its own.
        let virtual = try runBeaconEmit(["calibrate", "--device", "virtual", "--scanner", "virtual", "--duration", "1.5",
                                         "--json"] + referenceArguments)
        #expect(virtual.status == 0, "\(virtual.stderr)")
        #expect((JSONValue(parsing: virtual.stdoutLines.first ?? "")?["samples"]?.integer ?? 0) >= Calibration.minimumSamples,
                "\(virtual.stdout)")
        // In text, and written into a configuration file's entry for the beacon.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("calibrate-\(UUID().uuidString).yaml").path
        try "beacons:\n  - {uuid: 39ED98FF2900441A802F9C398FC199D2, major: 101, minor: 2}\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        // The virtual radio's RSSI spreads widely: over 6 dB the file is left as it was without --force.
        let unforced = try runBeaconEmit(["calibrate", "--device", device, "--scanner", device, "--duration", "1.5",
                                          "--write", path] + referenceArguments)
        let spread = Double(unforced.stdoutLines.first?.firstMatch(of: /standard deviation ([\d.]+) dB/)?.1 ?? "") ?? 0
        if spread > Calibration.meaningfulSpread {
            #expect(unforced.status == 1 && unforced.stderr.contains("--force writes the value anyway"), "\(unforced.stderr)")
            #expect(try String(contentsOfFile: path, encoding: .utf8).contains("measured-power") == false)
        } else {
            #expect(unforced.status == 0, "\(unforced.stderr)")
        }
        let text = try runBeaconEmit(["calibrate", "--device", device, "--scanner", device, "--duration", "1.5",
                                      "--write", path, "--force"] + referenceArguments)
        #expect(text.status == 0, "\(text.stderr)")
        let line = try #require(text.stdoutLines.first)
        #expect(line.wholeMatch(of: /measured power at 1 m: (-?\d+) dBm \(--measured-power \1\); \d+ samples, \d+ kept after dropping the top and bottom 10 %: -?\d+ to -?\d+ dBm, standard deviation [\d.]+ dB/) != nil, "\(line)")
        let written = try String(contentsOfFile: path, encoding: .utf8)
        let value = try #require(line.firstMatch(of: /at 1 m: (-?\d+) dBm/)?.1)
        #expect(written == "beacons:\n  - {uuid: 39ED98FF2900441A802F9C398FC199D2, major: 101, minor: 2, measured-power: \(value)}\n")
        let short = try runBeaconEmit(["calibrate", "--device", device, "--scanner", device, "--duration", "0.2"]
                                      + referenceArguments)
        #expect(short.status == 1)
        #expect(short.stderr.contains("a calibration needs at least 10 samples"), "\(short.stderr)")
        let nobody = try runBeaconEmit(["calibrate", "--scanner", device, "--duration", "0.5", "--uuid",
                                        "00000000-0000-0000-0000-000000000001", "--major", "1", "--minor", "1"])
        #expect(nobody.status == 1)
        #expect(nobody.stderr.contains("the beacon was not heard"), "\(nobody.stderr)")
    }

    /// Data over 31 bytes with --extended-pdu: extended PDUs (properties 0x0000), heard byte
    /// for byte by an extended scanner, with a warning that legacy scanners will not see it.
    @Test(.notUnderEmulation("the CLI's own scan starts seconds late and misses the emitter's 2 s"))
    func extendedPDUsCarryMoreThan31Bytes() throws {
        let payload = String(repeating: "11", count: 40)
        let expected = try HexText.parse("0201062BFF5900" + payload)
        let scanner = try TestScanner(port: port, extended: true)
        let legacyScanner = try TestScanner(port: port)
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "2", "--manufacturer-data",
                                                       "0x0059:" + payload, "--extended-pdu", "-v"])
        let reports = try scanner.collect(timeout: .seconds(3)) { $0.contains { $0.data == expected } }
        #expect(reports.contains { $0.data == expected }, "saw \(reports.map { HexText.format($0.data) })")
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        #expect(emitter.stderr.contains("47 bytes go in extended advertising PDUs"), "\(emitter.stderr)")
        #expect(emitter.stderr.contains("properties 0x0000 (extended PDU)"), "\(emitter.stderr)")
        let legacyHeard = try legacyScanner.collect(timeout: .milliseconds(300)) { _ in false }
        #expect(!legacyHeard.contains { $0.data == expected }, "a legacy scan cannot hear extended PDUs")
        // scan --extended on an H4 controller hears them too.
        let again = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "2", "--manufacturer-data",
                                                     "0x0059:" + payload, "--extended-pdu"])
        let scan = try runBeaconEmit(["scan", "-i", device, "--extended", "--json", "--duration", "1.5"])
        #expect(scan.stdoutLines.contains { $0.contains(#""data":"\#(HexText.format(expected))""#) }, "\(scan.stdout)")
        #expect(again.wait() == 0, "\(again.stderr)")
        let legacy = try runBeaconEmit(["-i", device, "--duration", "1", "--legacy", "--manufacturer-data",
                                        "0x0059:" + payload, "--extended-pdu"])
        #expect(legacy.status == 69)
        #expect(legacy.stderr.contains("data over 31 bytes: needs extended advertising, which legacy commands (asked for) do not "
                                       + "have: drop --legacy"), "\(legacy.stderr)")
    }

    /// A beacon of its own extended PDUs (`pdu=extended`) carries data over 31 bytes beside a
    /// beacon of legacy ones of its own (`pdu=legacy`: else the run's data would send it in
    /// extended ones too), with no `--extended-pdu` for the run: an extended scanner hears its
    /// bytes exactly, a legacy scanner the other beacon's.
    @Test(.notUnderEmulation("the CLI's own scan starts seconds late and misses the emitter's 2 s"))
    func aBeaconOfItsOwnExtendedPDUsCarriesMoreThan31Bytes() throws {
        let payload = String(repeating: "22", count: 40)
        // Flags, then the manufacturer data: length 0x2B (type, company, 40 bytes).
        let long = try HexText.parse("0201062BFF5900" + payload)
        let short = try HexText.parse("0201061AFF4C000215" + "39ED98FF2900441A802F9C398FC199D2" + "00010002C5")
        let scanner = try TestScanner(port: port, extended: true)
        let legacyScanner = try TestScanner(port: port)
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "2",
                                                       "--beacon", "uuid=39ED98FF-2900-441A-802F-9C398FC199D2,major=1,minor=2,pdu=legacy",
                                                       "--beacon", "manufacturer-data=0x0059:\(payload),pdu=extended"])
        let reports = try scanner.collect(timeout: .seconds(3)) { $0.contains { $0.data == long } }
        #expect(reports.contains { $0.data == long }, "saw \(reports.map { HexText.format($0.data) })")
        let legacyHeard = try legacyScanner.collect(timeout: .seconds(1)) { $0.contains { $0.data == short } }
        #expect(legacyHeard.contains { $0.data == short } && !legacyHeard.contains { $0.data == long },
                "\(legacyHeard.map { HexText.format($0.data) })")
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
    }

    /// A scenario's beacon with a scan response: its set is scannable, and an active scanner
    /// gets the scan response exactly.
    @Test func aScenarioBeaconAnswersScans() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("scannable-\(UUID().uuidString).yaml").path
        try "beacons:\n  sensor: {ad: \"020106\", scan-response: \"0409414243\"}\nsteps:\n  - advertise: sensor\n  - wait: 2\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let scanner = try TestScanner(port: port, active: true)
        let run = try BackgroundProcess.beaconEmit(["run", path, "-i", device])
        let response: [UInt8] = [0x04, 0x09, 0x41, 0x42, 0x43]
        let heard = try scanner.collect(timeout: .seconds(3)) { $0.contains { $0.isScanResponse && $0.data == response } }
        #expect(heard.contains { $0.isScanResponse && $0.data == response }, "\(heard.map { HexText.format($0.data) })")
        #expect(run.wait() == 0, "\(run.stderr)")
    }

    @Test(.notUnderEmulation("the scanner's window opens as the emitter is started, which under emulation takes seconds of it"))
    func threeBeaconsFromOneController() throws {
        let scanner = try TestScanner(port: port)
        let specifications = (1...3).map { "uuid=39ED98FF2900441A802F9C398FC199D2,major=101,minor=\($0)" }
        let emitter = try BackgroundProcess.beaconEmit(["-i", device, "--duration", "3"]
                                                       + specifications.flatMap { ["--beacon", $0] })
        let reports = try scanner.collect(timeout: .seconds(4)) { reports in
            threeBeaconData.allSatisfy { data in reports.contains { Array($0.data) == data } }
        }
        for data in threeBeaconData {
            #expect(reports.contains { Array($0.data) == data }, "missing \(HexText.format(data))")
        }
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        #expect(emitter.stdout.contains("extended advertising, 3 sets"))
    }

    /// A beacon's own channels (`channels=37 38`): its set's LE Set Extended Advertising
    /// Parameters carries the map (0x03; the other beacon's 0x07), the beacon is still heard
    /// (rootcanal does not report the channel, so the command's bytes are the check); refused
    /// with --legacy and through the management API before anything is sent.
    @Test func aBeaconsChannelsGoInItsSetsParameters() throws {
        let proxy = try LoggingProxy(upstreamPort: port)
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(proxy.port)", "--duration", "3"] + referenceArguments
                                                       + ["--beacon", "uuid=39ED98FF-2900-441A-802F-9C398FC199D2,major=7,minor=8,channels=37 38"])
        let scanner = try TestScanner(port: port)
        func isOurs(_ data: [UInt8]) -> Bool {
            (try? Beacon.beacons(in: AdvertisingData(parsing: data)))?.contains {
                if case let .iBeacon(beacon) = $0 { return beacon.major == 7 && beacon.minor == 8 }
                return false
            } == true
        }
        let reports = try scanner.collect(timeout: .seconds(3)) { $0.contains { isOurs(Array($0.data)) } }
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        let maps = proxy.commands.filter { $0.opcode == .leSetExtendedAdvertisingParameters }.compactMap {
            try? LESetExtendedAdvertisingParameters(parameters: $0.parameters[...])
        }.map { ($0.handle, $0.primaryChannelMap.rawValue) }
        #expect(maps.contains { $0.1 == 0x03 } && maps.contains { $0.1 == 0x07 }, "\(maps)")
        #expect(reports.contains { isOurs(Array($0.data)) }, "the beacon on channels 37 and 38 is heard")
        let legacy = try runBeaconEmit(["-i", device, "--legacy", "--check", "--beacon", "uuid=39ED98FF-2900-441A-802F-9C398FC199D2,major=7,minor=8,channels=37 38"])
        #expect(legacy.status == 64 && legacy.stderr.contains("beacon 1's channels=37 38: needs extended advertising, which legacy "
                                                                + "commands (asked for) do not have: drop its channels, or drop --legacy"),
                "\(legacy.stderr)")
        let kernel = try runBeaconEmit(["-i", "hci0", "--access", "mgmt", "--check", "--beacon",
                                        "uuid=39ED98FF-2900-441A-802F-9C398FC199D2,major=7,minor=8,channels=37 38"])
        #expect(kernel.status == 64 && kernel.stderr.contains("beacon 1's channels=37 38: through the management API the kernel sets "
                                                                + "it itself"), "\(kernel.stderr)")
    }

    @Test(arguments: [["--legacy"], ["--extended"]])
    func sigtermDisablesAdvertisingOnTheWireBeforeLettingGo(mode: [String]) throws {
        let proxy = try LoggingProxy(upstreamPort: port)
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(proxy.port)"] + referenceArguments + mode)
        #expect(emitter.waitForOutput("advertising on"), "\(emitter.stderr)")
        emitter.signal(SIGTERM)
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        #expect(emitter.stdout.contains("advertising off: received SIGTERM"))
        Thread.sleep(forTimeInterval: 0.1)
        let commands = proxy.commands.map { HexText.format($0.bytes, separator: " ") }
        // enable, Read BD_ADDR (for the start line, once advertising is on), then disable (and remove)
        let expectedTail = mode == ["--legacy"]
            ? ["0A 20 01 01", "09 10 00", "0A 20 01 00"]
            : ["39 20 06 01 01 00 00 00 00", "09 10 00", "39 20 06 00 01 00 00 00 00", "3C 20 01 00"]
        #expect(Array(commands.suffix(expectedTail.count)) == expectedTail, "\(commands)")
        // The controller answered every command, the last disable (and removal) included,
        // before the program closed the link.
        let completes = proxy.events.compactMap { event -> CommandComplete? in
            if case let .commandComplete(complete) = event { return complete }
            return nil
        }
        #expect(completes.count == proxy.commands.count)
        #expect(completes.last?.opcode == proxy.commands.last?.opcode)
        #expect(completes.allSatisfy { $0.status == .success })
        #expect(proxy.hostClosed)
    }

    @Test func keepLeavesAdvertisingOnTheWire() throws {
        let proxy = try LoggingProxy(upstreamPort: port)
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(proxy.port)", "--keep", "--duration", "0.5"]
                                                       + referenceArguments)
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        #expect(emitter.stdout.contains("left advertising on (--keep)"))
        Thread.sleep(forTimeInterval: 0.1)
        // The enable, then only the address read for the start line: nothing turned it off.
        #expect(proxy.commands.suffix(2).map { HexText.format($0.bytes, separator: " ") }
                == ["39 20 06 01 01 00 00 00 00", "09 10 00"])
    }

    @Test(.notUnderEmulation("the scanner's window opens as the emitter is started, which under emulation takes seconds of it"))
    func legacyBeaconsTakeTurns() throws {
        let scanner = try TestScanner(port: port)
        let emitter = try BackgroundProcess.beaconEmit(
            ["-i", device, "--legacy", "--rotation", "200", "--duration", "2",
             "--beacon", "uuid=39ED98FF2900441A802F9C398FC199D2,major=101,minor=1",
             "--beacon", "uuid=39ED98FF2900441A802F9C398FC199D2,major=101,minor=3"])
        let wanted = [threeBeaconData[0], threeBeaconData[2]]
        let reports = try scanner.collect(timeout: .seconds(3)) { reports in
            wanted.allSatisfy { data in reports.contains { Array($0.data) == data } }
        }
        for data in wanted { #expect(reports.contains { Array($0.data) == data }, "missing \(HexText.format(data))") }
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        #expect(emitter.stdout.contains("legacy advertising, beacons taking turns"))
    }

    /// More beacons than the controller's sets (rootcanal has 16): a set each for the first
    /// 15, the other five take turns on the last (one rule with a scenario's), and the
    /// independent scanner hears every one.
    @Test(.notUnderEmulation("the scanner's window opens as the emitter is started, which under emulation takes seconds of it"))
    func beaconsBeyondTheSetsTakeTurnsOnTheLastOne() throws {
        let scanner = try TestScanner(port: port)
        let emitter = try BackgroundProcess.beaconEmit(
            ["-i", device, "--interval", "50", "--rotation", "150", "--duration", "3"]
            + (1...20).flatMap { ["--beacon", "uuid=39ED98FF2900441A802F9C398FC199D2,major=8,minor=\($0)"] })
        var minors = Set<UInt16>()
        _ = try scanner.collect(timeout: .seconds(4)) { reports in
            for report in reports.suffix(1) {
                if case let .iBeacon(beacon)? = (try? report.sightings())?.first?.beacon, beacon.major == 8 { minors.insert(beacon.minor) }
            }
            return minors.count == 20
        }
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        #expect(minors == Set(1...20), "heard \(minors.sorted())")
        #expect(emitter.stdout.contains("extended advertising, 16 sets (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), "
                                        + "beacons 16-20 taking turns on set 15 (more beacons than sets), each heard every 275 ms"),
                "five share set 15's events: 5 x (50 + 5 ms of advDelay): \(emitter.stdout)")
    }

    /// The JSON start event says who takes turns as the text line does: the first beacon in
    /// the turns (by its number) and the set they share.
    @Test func theJSONStartSaysWhoTakesTurns() throws {
        let emitter = try BackgroundProcess.beaconEmit(
            ["-i", device, "--json", "--duration", "0.5"]
            + (1...18).flatMap { ["--beacon", "uuid=39ED98FF2900441A802F9C398FC199D2,major=9,minor=\($0)"] })
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        let start = emitter.stdout.split(separator: "\n").lazy.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }.first { $0["event"] as? String == "advertising" }
        let event = try #require(start, "\(emitter.stdout)")
        #expect(event["rotating"] as? Bool == true && event["sets"] as? Int == 16, "\(event)")
        #expect(event["turnsFrom"] as? Int == 16 && event["turnsOn"] as? Int == 15, "\(event)")
        // Each beacon's line says the mean period a receiver hears it at: its own set's, or shared by three.
        let beacons = emitter.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }.filter { $0["event"] as? String == "beacon" }
        let achieved: [Double] = beacons.map { ($0["achievedInterval"] as? Double) ?? -1 }
        #expect(achieved.count == 18, "\(achieved)")
        #expect(achieved.first == 105 && achieved.dropFirst(15).allSatisfy { $0 == 315 }, "\(achieved)")
    }

    @Test func parametersWhileAdvertisingAreRefused() throws {
        // Right after the program resets the controller, something else turns advertising on
        // (as another host sharing the controller might); the parameters that follow are then
        // refused with 0x0C.
        let parameters = LESetAdvertisingParameters().packet
        let enable = LESetAdvertisingEnable(enable: true).packet
        let proxy = try LoggingProxy(upstreamPort: port, injectAfter: (.reset, [parameters, enable]))
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(proxy.port)", "--legacy", "--duration", "1"]
                                                       + referenceArguments)
        #expect(emitter.wait() == 76)
        #expect(emitter.stderr.contains("controller refused LE Set Advertising Parameters (interval 100 ms = 160 x 0.625 ms): "
                                        + "Command Disallowed (0x0C); the likely cause: advertising is already active"))
        // Nothing is left half-done: the program disabled advertising again before exiting.
        #expect(proxy.commands.last.map { HexText.format($0.bytes) } == "0A200100")
    }

    @Test func controllerStoppingMidRunEndsAFailFastEmitterWithinASecond() throws {
        let binary = try #require(ProcessInfo.processInfo.environment["BEACON_EMIT_ROOTCANAL"])
        let ownPort: UInt16 = 7402
        let rootcanal = try BackgroundProcess(binary, ["-test_port=7401", "-hci_port=\(ownPort)", "-link_port=7403",
                                                       "-link_ble_port=7404"])
        let listening = ContinuousClock.now + .seconds(5)
        while !VirtualController.isListening(port: ownPort) && ContinuousClock.now < listening {
            Thread.sleep(forTimeInterval: 0.01)
        }
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(ownPort)", "--fail-fast"]
                                                       + referenceArguments)
        #expect(emitter.waitForOutput("advertising on"), "\(emitter.stderr)")
        let stopped = ContinuousClock.now
        rootcanal.signal(SIGKILL)
        let status = emitter.wait(timeout: .seconds(5))
        let took = stopped.duration(to: .now)
        rootcanal.wait()
        #expect(status == 74)
        #expect(took < .seconds(1), "took \(took)")
        #expect(emitter.stderr.contains("the controller connection closed while in use"))
    }

    /// A controller reset under the emitter (a bridge, a bootloader) or a hardware error: the
    /// emitter puts the beacon back, seen on the wire and at a second device that starts
    /// scanning only afterwards.
    @Test(arguments: ["reset", "hardware error"])
    func knockedOffMidRunTheBeaconIsPutBack(cause: String) throws {
        let proxy = try LoggingProxy(upstreamPort: port)
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(proxy.port)", "--json", "--duration", "4"]
                                                       + referenceArguments)
        #expect(emitter.waitForOutput("\"event\":\"advertising\""), "\(emitter.stderr)")
        #expect(emitter.stdout.contains("\"sets\":1,\"handles\":[0],"), "\(emitter.stdout)")
        let before = proxy.commands.count
        if cause == "reset" {
            proxy.sendToController(Reset().packet)
        } else {
            proxy.sendToHost(.hardwareError(hardwareCode: 0x2A))
        }
        #expect(emitter.waitForOutput("\"event\":\"restored\""), "\(emitter.stdout) \(emitter.stderr)")
        let scanner = try TestScanner(port: port)
        let reports = try scanner.collect(timeout: .seconds(2)) { $0.contains { Array($0.data) == referenceAdvertisingData } }
        #expect(reports.contains { Array($0.data) == referenceAdvertisingData }, "the second device saw nothing")
        let again = proxy.commands.dropFirst(before).map { HexText.format($0.bytes) }
        // The host resets the controller it owns, then parameters, data and enable again.
        #expect(again.first == "030C00", "\(again)")
        #expect(again.contains { $0.hasPrefix("3720") }, "data set again: \(again)")
        #expect(again.last.map { $0.hasPrefix("392006010100") } == true, "enabled last: \(again)")
        #expect(emitter.stdout.contains(cause == "reset" ? "\"cause\":\"controller-reset\"" : "\"cause\":\"hardware-error\""))
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
    }

    /// A controller that goes away and comes back (rootcanal restarted: a new device): the
    /// emitter reconnects and programs it from scratch.
    @Test func controllerRestartedMidRunIsReconnected() throws {
        let binary = try #require(ProcessInfo.processInfo.environment["BEACON_EMIT_ROOTCANAL"])
        let ownPort: UInt16 = 7412
        let arguments = ["-test_port=7411", "-hci_port=\(ownPort)", "-link_port=7413", "-link_ble_port=7414"]
        func startRootcanal() throws -> BackgroundProcess {
            let process = try BackgroundProcess(binary, arguments)
            let listening = ContinuousClock.now + .seconds(5)
            while !VirtualController.isListening(port: ownPort) && ContinuousClock.now < listening {
                Thread.sleep(forTimeInterval: 0.01)
            }
            return process
        }
        let first = try startRootcanal()
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(ownPort)", "--duration", "6"]
                                                       + referenceArguments)
        #expect(emitter.waitForOutput("advertising on"), "\(emitter.stderr)")
        first.signal(SIGKILL)
        first.wait()
        #expect(emitter.waitForOutput("off the air: the link to"), "\(emitter.stdout) \(emitter.stderr)")
        let second = try startRootcanal()
        #expect(emitter.waitForOutput("back on the air"), "\(emitter.stdout) \(emitter.stderr)")
        let scanner = try TestScanner(port: ownPort)
        let reports = try scanner.collect(timeout: .seconds(2)) { $0.contains { Array($0.data) == referenceAdvertisingData } }
        #expect(reports.contains { Array($0.data) == referenceAdvertisingData }, "the second device saw nothing")
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        second.signal(SIGKILL)
        second.wait()
    }

    @Test func serialPathThroughAPseudoTerminal() throws {
        // A pty bridged to the virtual controller stands in for a UART board.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("beacon-emit-pty-\(getpid())").path
        let bridge = try BackgroundProcess("/usr/bin/socat", ["PTY,link=\(path),rawer", "TCP:127.0.0.1:\(port)"])
        defer {
            // Children of the test runner may start with SIGTERM blocked.
            bridge.signal(SIGKILL)
            bridge.wait()
        }
        let appeared = ContinuousClock.now + .seconds(5)
        while !FileManager.default.fileExists(atPath: path) && ContinuousClock.now < appeared {
            Thread.sleep(forTimeInterval: 0.01)
        }
        let scanner = try TestScanner(port: port)
        let emitter = try BackgroundProcess.beaconEmit(["-i", "serial:\(path):1000000", "--duration", "2"]
                                                       + referenceArguments)
        let reports = try scanner.collect(timeout: .seconds(3)) { $0.contains { Array($0.data) == referenceAdvertisingData } }
        #expect(reports.contains { Array($0.data) == referenceAdvertisingData })
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        #expect(emitter.stdout.contains("advertising on serial:\(path):1000000"))
    }

    @Test func infoReportsTheController() throws {
        let info = try BackgroundProcess.beaconEmit(["info", "-i", device, "--json"])
        #expect(info.wait() == 0)
        #expect(info.stdout.contains(#""hciVersion":"5.3""#))
        #expect(info.stdout.contains(#""extendedAdvertising":true,"advertisingSets":16,"maxAdvertisingDataLength":512"#))
    }

    @Test func stopSucceedsWhenNothingAdvertises() throws {
        let stop = try BackgroundProcess.beaconEmit(["stop", "-i", device])
        #expect(stop.wait() == 0)
        #expect(stop.stdout.contains("advertising off"))
    }

    @Test func virtualDeviceShowsTheRoundTrip() throws {
        let emitter = try BackgroundProcess.beaconEmit(["--device", "virtual", "--duration", "1"] + referenceArguments)
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
        #expect(emitter.stdout.contains("a virtual scanner received it from"))
        #expect(emitter.stdout.contains("30 bytes, identical to the data set"))
    }

    /// A beacon's own interval and TX power in the output: text after its line, JSON in its object.
    @Test func aBeaconsOwnParametersAreShown() throws {
        let beacons = ["--beacon", "uuid=39ED98FF-2900-441A-802F-9C398FC199D2,major=101,minor=1",
                       "--beacon", "uuid=39ED98FF-2900-441A-802F-9C398FC199D2,major=101,minor=2,interval=500,tx-power=-8"]
        let text = try runBeaconEmit(["--device", "virtual", "--duration", "0.5"] + beacons)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("major=101 minor=1 measuredPower=-59dBm\n"), "\(text.stdout)")
        #expect(text.stdout.contains("major=101 minor=2 measuredPower=-59dBm (its own interval 500 ms = 800 x 0.625 ms, "
                                     + "TX power -8 dBm)\n"), "\(text.stdout)")
        let json = try runBeaconEmit(["--device", "virtual", "--duration", "0.5", "--json"] + beacons)
        let objects = json.stdoutLines.compactMap { JSONValue(parsing: $0) }.filter { $0["type"]?.string == "ibeacon" }
        // In the shape control list shows: milliseconds.
        #expect(objects.map { $0["interval"]?.integer } == [nil, 500], "\(json.stdout)")
        #expect(objects.map { $0["txPower"]?.integer } == [nil, -8], "\(json.stdout)")
    }
}
}

@Suite struct KernelSocketTests {
    /// On a kernel without Bluetooth (these build machines), hci0 gives the documented error.
    @Test(.enabled(if: socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue), 1) < 0 && errno == EAFNOSUPPORT))
    func kernelWithoutBluetoothIsAClearError() throws {
        let result = try runBeaconEmit(["-i", "hci0"] + referenceArguments)
        #expect(result.status == 69)
        #expect(result.stderr.contains("this kernel has no Bluetooth support (AF_BLUETOOTH)"))
        #expect(!result.stderr.contains("Fatal"))
    }
}

extension Rig {
@Suite struct ConfigFileTests {
    @Test(.notUnderEmulation("the scanner's window opens as the emitter is started, which under emulation takes seconds of it"), arguments: [
        """
        beacons:
          - uuid: 39ED98FF-2900-441A-802F-9C398FC199D2
            major: 101
            minor: 2
          - url: https://www.example.com/x
        """,
        #"{"beacons": [{"uuid": "39ED98FF2900441A802F9C398FC199D2", "major": 101, "minor": 2}, {"type": "eddystone-url", "url": "https://www.example.com/x"}]}"#,
    ])
    func yamlAndJSONConfigurationsBothArrive(text: String) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("beacons-\(UUID().uuidString).conf").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let expected = [
            referenceAdvertisingData,
            hex("""
                02 01 06  03 03 AA FE             // flags; 16-bit UUIDs: FEAA
                0F 16 AA FE                       // service data FEAA, 14 bytes follow
                10 EE 01                          // URL frame, -18 dBm at 0 m, https://www.
                65 78 61 6D 70 6C 65 00 78        // "example" ".com/" "x"
                """),
        ]
        let scanner = try TestScanner(port: rigPort ?? 0)
        let emitter = try BackgroundProcess.beaconEmit(["-i", "tcp:127.0.0.1:\(rigPort ?? 0)", "--config", path,
                                                        "--duration", "2"])
        let reports = try scanner.collect(timeout: .seconds(3)) { reports in
            expected.allSatisfy { data in reports.contains { Array($0.data) == data } }
        }
        for data in expected { #expect(reports.contains { Array($0.data) == data }, "missing \(HexText.format(data))") }
        #expect(emitter.wait() == 0, "\(emitter.stderr)")
    }

    /// A mistake in the file is input that does not decode (65, as in a scenario), named at its place.
    @Test func badEntryIsADataErrorNamingIt() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bad-\(UUID().uuidString).yaml").path
        try "beacons:\n  - uuid: 39ED98FF2900441A802F9C398FC199D2\n    major: 70000\n    minor: 1\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try runBeaconEmit(["-i", "tcp:127.0.0.1:1", "--config", path])
        #expect(result.status == 65)
        #expect(result.stderr.contains("--config \(path):3:12: beacon 1: "), "at the value: \(result.stderr)")
        #expect(result.stderr.contains("--major must be from 0 to 65535, got 70000"))
    }
}
}
