// SPDX-License-Identifier: GPL-2.0-or-later

import BeaconHost
import BeaconMetrics
import BeaconRig

/// An emitter's metrics and the endpoint that serves them, wired to what the run has.
final class MetricsExporter {
    let metrics: EmitterMetrics
    let endpoint: MetricsEndpoint

    private init(address: MetricsAddress, adapter: String) throws(MetricsError) {
        let metrics = EmitterMetrics(adapter: adapter, version: BuildVersion.text)
        self.metrics = metrics
        let endpoint = try MetricsEndpoint(address: address) { metrics.exposition() }
        self.endpoint = endpoint
        metrics.endpointCounts = { [unowned endpoint] in endpoint.counts.byOutcome }
        endpoint.changes = { [unowned metrics] in metrics.changes }
    }

    /// The endpoint at `address` (nil: none), listening, its URL said; it answers once the loop
    /// runs. Opened before anything is sent, so that a port in use stops the run there.
    /// - Parameter device: the `adapter` label (hci0, an adapter's address, tcp:HOST:PORT).
    /// - Throws: `HostError.unsupported` for the virtual device (its network namespace is
    ///   private: no scraper reaches it) or an endpoint that does not open (a port in use).
    static func open(_ address: MetricsAddress?, device: DeviceSpecification,
                     progress: (String) -> Void) throws(HostError) -> MetricsExporter? {
        guard let address else { return nil }
        if device == .virtual {
            throw .unsupported("--metrics does not go with the virtual device, which runs in a network namespace of its own "
                               + "that no scraper reaches")
        }
        let adapter = switch device {
        case let .kernel(index): index.map { "hci\($0)" } ?? "default"
        case let .adapter(address): "\(address)"
        default: device.description
        }
        do {
            let exporter = try MetricsExporter(address: address, adapter: adapter)
            progress("metrics: http://\(MetricsAddress(host: address.host, port: exporter.endpoint.port))/metrics")
            return exporter
        } catch {
            throw .unsupported(error.description)
        }
    }

    /// Reads the beacons, the control socket's refusals and the canary at each scrape.
    func watch(_ session: any LiveAdvertising, server: ControlServer?, canary: CanarySource?) {
        metrics.sample = {
            let running = session.running
            let heard = canary.map { canary in
                zip(running, canary.states).map { beacon, state in
                    (id: beacon.id.rawValue, heard: !state.unheard && state.lastHeard != nil, lastHeard: state.lastHeard)
                }
            }
            return EmitterMetrics.Sample(beacons: running.count, canary: heard, controlRefusals: server?.refusals.counts ?? [:])
        }
    }

    func noteControl(_ command: String, _ outcome: ControlHandler.Outcome) {
        metrics.noteControl(command: command, outcome: EmitterMetrics.Outcome(rawValue: outcome.rawValue) ?? .error)
    }
}
