// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconTracking
import Foundation
import LinuxSystem
import Synchronization

extension AdvertisementScanner {
    /// Every advertising report `device` hears, as an asynchronous sequence: the scan runs on a
    /// thread of its own from the first iteration and stops (scanning off, the link closed)
    /// when the iteration ends or the task is cancelled.
    ///
    ///     for try await report in AdvertisementScanner.reports(on: .kernel(index: 0)) {
    ///         print(report.address, try report.sightings())
    ///     }
    ///
    /// - Throws (while iterating): `HostError` when the device cannot be opened or fails.
    public static func reports(on device: DeviceSpecification, options: Options = Options(),
                               bringUp: Bool = false) -> AsyncThrowingStream<ScanReport, any Error> {
        AsyncThrowingStream { continuation in
            let ended = Mutex(false)
            // Wakes the scan's wait the moment the iteration ends: nothing polls the flag.
            let wake: WakePipe
            do throws(SystemCallError) {
                wake = try WakePipe()
            } catch {
                continuation.finish(throwing: HostError.kernel(call: error.call, errno: error.errno, adapter: nil, adapters: []))
                return
            }
            continuation.onTermination = { _ in
                ended.withLock { $0 = true }
                wake.wake()
            }
            let thread = Thread {
                do throws(HostError) {
                    let connection = try ControllerConnection.open(device, bringUp: bringUp)
                    let scanner = AdvertisementScanner(controller: connection.controller)
                    defer {
                        scanner.stop()
                        connection.close()
                    }
                    try scanner.start(options: options, ownsController: connection.ownsController)
                    // The loop: the scanner's link, and the wake pipe as its signal.
                    let scan = ScanSource(scanner: scanner) { report in
                        continuation.yield(report)
                        return true
                    }
                    _ = try scan.run(until: nil, interrupt: wake.descriptor, proceed: { !ended.withLock { $0 } },
                                     what: "the scan")
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            thread.name = "beacon scan"
            thread.start()
        }
    }
}
