// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconTracking
import Foundation
import LinuxSystem
import Synchronization

extension AdvertisementScanner {
    /// Every advertising report `device` hears, as an asynchronous sequence: the scan is a source
    /// of the library's one loop (`LibraryLoop`, one thread for every stream and broadcast of the
    /// process) from the first iteration, and stops (scanning off, the link closed) when the
    /// iteration ends or the task is cancelled.
    ///
    ///     for try await report in AdvertisementScanner.reports(on: .kernel(index: 0)) {
    ///         print(report.address, try report.sightings())
    ///     }
    ///
    /// - Throws (while iterating): `HostError` when the device cannot be opened or fails.
    public static func reports(on device: DeviceSpecification, options: Options = Options(),
                               bringUp: Bool = false) -> AsyncThrowingStream<ScanReport, any Error> {
        AsyncThrowingStream { continuation in
            // Readable the moment the iteration ends: the loop ends the scan then.
            let wake: WakePipe
            do throws(SystemCallError) {
                wake = try WakePipe()
            } catch {
                continuation.finish(throwing: HostError.kernel(call: error.call, errno: error.errno, adapter: nil, adapters: []))
                return
            }
            continuation.onTermination = { _ in wake.wake() }
            do throws(HostError) {
                try LibraryLoop.shared.perform { loop in
                    do throws(HostError) {
                        let connection = try ControllerConnection.open(device, bringUp: bringUp)
                        let scanner = AdvertisementScanner(controller: connection.controller)
                        do throws(HostError) {
                            try scanner.start(options: options, ownsController: connection.ownsController)
                        } catch {
                            scanner.stop()
                            connection.close()
                            throw error
                        }
                        let scan = ScanSource(scanner: scanner) { report in
                            continuation.yield(report)
                            return true
                        }
                        loop.add(StreamedScan(scan, connection: connection, ended: wake, continuation: continuation))
                    } catch {
                        continuation.finish(throwing: error)
                    }
                }
            } catch {
                continuation.finish(throwing: error)
            }
        }
    }
}

/// A report stream's scan on the library's loop: its reports handed to the stream until the
/// iteration ends (`ended` readable) or the link fails; then scanning is turned off, the link
/// closed, the stream finished, and the source leaves the loop.
private final class StreamedScan: RunLoopSource {
    private let scan: ScanSource
    private let connection: ControllerConnection
    private let ended: WakePipe
    private let continuation: AsyncThrowingStream<ScanReport, any Error>.Continuation
    private(set) var hasEnded = false

    init(_ scan: ScanSource, connection: ControllerConnection, ended: WakePipe,
         continuation: AsyncThrowingStream<ScanReport, any Error>.Continuation) {
        self.scan = scan
        self.connection = connection
        self.ended = ended
        self.continuation = continuation
    }

    var descriptors: [Int32] { hasEnded ? [] : [ended.descriptor] + scan.descriptors }
    var due: ContinuousClock.Instant? { hasEnded ? nil : scan.due }

    func serve(ready: [Int32]) {
        if ready.contains(ended.descriptor) {
            close(failure: nil)
        } else {
            serve()
        }
    }

    func serve() {
        guard !hasEnded else { return }
        scan.serve()
        if scan.ended { close(failure: scan.failure) }
    }

    private func close(failure: HostError?) {
        guard !hasEnded else { return }
        hasEnded = true
        scan.scanner.stop()
        connection.close()
        if let failure {
            continuation.finish(throwing: failure)
        } else {
            continuation.finish()
        }
    }
}
