// SPDX-License-Identifier: GPL-2.0-or-later
//
// codec-fuzzer: libFuzzer targets over every parser of AdvertisementCodec, and over the host's
// advertise and scan sessions, fed a controller's byte stream (SessionFuzzing.swift).
//
//   FUZZ_TARGET=advertising-data codec-fuzzer [libFuzzer flags] [CORPUS ...]
//
// Built with -DFUZZING and -sanitize=fuzzer it runs libFuzzer (scripts/fuzz does this).
// Built normally it replays files through a target, for reproducing a finding:
//
//   FUZZ_TARGET=hci-event codec-fuzzer crash-1234

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

func selectedTarget() -> FuzzTarget {
    let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
    guard let raw = getenv("FUZZ_TARGET"), let target = FuzzTarget(rawValue: String(cString: raw)) else {
        print("codec-fuzzer: set FUZZ_TARGET to one of: \(names)")
        exit(2)
    }
    return target
}

let target = selectedTarget()
target.prepare()

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
        print("codec-fuzzer: cannot open \(path)")
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
print("codec-fuzzer: \(target.rawValue): replayed \(replayed) input(s) without a finding")
#endif
