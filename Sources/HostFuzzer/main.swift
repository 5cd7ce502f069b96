// SPDX-License-Identifier: GPL-2.0-or-later
//
// host-fuzzer: libFuzzer targets that play a controller. Each input is the byte stream a
// controller sends on an H4 link; it is fed through a transport into the host's sessions
// (advertising with its supervision, scanning with ranging and printing), which must end with
// a HostError or carry on, never trap.
//
//   FUZZ_TARGET=advertise-session host-fuzzer [libFuzzer flags] [CORPUS ...]
//
// Built with -DFUZZING and -sanitize=fuzzer it runs libFuzzer (scripts/fuzz does this).
// Built normally it replays files through a target, for reproducing a finding.

#if canImport(Glibc)
import Glibc
#endif

func selectedTarget() -> HostFuzzTarget {
    let names = HostFuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
    guard let raw = getenv("FUZZ_TARGET"), let target = HostFuzzTarget(rawValue: String(cString: raw)) else {
        print("host-fuzzer: set FUZZ_TARGET to one of: \(names)")
        exit(2)
    }
    return target
}

let target = selectedTarget()

#if FUZZING
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

// libFuzzer's runtime references this symbol even when driven through LLVMFuzzerRunDriver.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    target.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzTestOneInput(data, size) })
#else
var replayed = 0
for path in CommandLine.arguments.dropFirst() {
    guard let file = fopen(path, "rb") else {
        print("host-fuzzer: cannot open \(path)")
        exit(1)
    }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        if count <= 0 { break }
        bytes += buffer[0..<count]
    }
    fclose(file)
    target.run(bytes)
    replayed += 1
}
print("host-fuzzer: \(target.rawValue): replayed \(replayed) input(s) without a finding")
#endif
