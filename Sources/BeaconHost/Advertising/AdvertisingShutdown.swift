// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `beacon-emit stop`: turns off what beacon-emit left on, and nothing else.
package enum AdvertisingShutdown {
    /// Owned controllers (H4 links, the user channel) are reset, which ends all advertising.
    /// On a kernel adapter's raw socket, the sets beacon-emit uses (handles counting down from
    /// `Advertiser.highestHandle`) are disabled and removed, up to the first that does not exist;
    /// without extended advertising, the one legacy advertiser is disabled (it has no owner to
    /// tell apart). Advertising that is already off is success.
    /// - Returns: what was done, for the user.
    /// - Throws: `HostError` for any other refusal or link failure.
    public static func disable(_ connection: ControllerConnection) throws(HostError) -> String {
        let controller = connection.controller
        if connection.ownsController {
            try controller.send(Reset())
            return "controller reset"
        }
        let capabilities = try AdvertisingCapabilities.read(from: controller, for: AdvertisingOptions(beacons: []))
        if capabilities.supportsExtendedAdvertising {
            var removed: [UInt8] = []
            do {
                for handle in stride(from: Advertiser.highestHandle, to: Advertiser.highestHandle - 16, by: -1) {
                    do {
                        try controller.send(LESetExtendedAdvertisingEnable(enable: false, sets: [.init(handle: handle)]))
                    } catch let HostError.controllerRefused(_, status, _)
                                where status == .unknownAdvertisingIdentifier || status == .invalidCommandParameters {
                        break
                    }
                    try controller.send(LERemoveAdvertisingSet(handle: handle))
                    removed.append(handle)
                }
                return removed.isEmpty ? "no advertising set of beacon-emit's was there"
                    : "advertising set(s) \(removed.map(String.init).joined(separator: ", ")) disabled and removed"
            } catch let HostError.controllerRefused(_, status, _) where status == .commandDisallowed {
                // Driven with legacy commands since reset: fall through to the legacy disable.
            }
        }
        try controller.sendDisable(LESetAdvertisingEnable(enable: false))
        return "legacy advertising disabled (or already off)"
    }

    /// Removes the management instances that beacon-emit runs recorded for the adapter, that
    /// still exist and whose run is over (killed, crashed, or left on with `--keep`), then their
    /// records. Instances it did not add, and those of a run still going, are never touched.
    /// - Parameter keptToo: also the instances left on by request (`stop`); a new run leaves them.
    /// - Returns: what was done, for the user.
    /// - Throws: `HostError` when the kernel refuses.
    @discardableResult
    public static func removeRecordedInstances(_ client: MgmtClient, keptToo: Bool = true,
                                               directory: String = InstanceRecord.directory()) throws(HostError) -> String {
        let adapter = client.adapter
        if let untrusted = InstanceRecord.distrust(directory) { return "\(untrusted)" }
        let records = InstanceRecord.all(adapter: adapter, in: directory)
        guard !records.isEmpty else {
            return "no advertising instances recorded as beacon-emit's (in \(directory))"
        }
        // What the list proves gone is skipped; a listed number, or one the kernel may hide
        // from its list (Linux 6.x lists only numbers up to its count), is removed.
        var gone: Set<UInt8>? = nil
        var removed: [UInt8] = []
        var running: [String] = []
        for (record, path) in records {
            if let owner = record.owner, owner.isRunning, owner.pid != CurrentProcess.id {
                running.append("\(record.instances.map(String.init).joined(separator: ", ")) (pid \(owner.pid))")
                continue
            }
            if record.kept && !keptToo { continue }
            if gone == nil { gone = Set(try client.send(ReadAdvertisingFeatures()).provablyFreeInstances) }
            for instance in record.instances where gone?.contains(instance) == false {
                if try client.removeInstance(instance) { removed.append(instance) }
                gone?.insert(instance)
            }
            InstanceRecord.remove(path: path)
        }
        var what = removed.isEmpty ? "beacon-emit's recorded instances were already gone"
            : "removed instance(s) \(removed.map(String.init).joined(separator: ", ")) that beacon-emit added"
        if !running.isEmpty {
            what += "; left those of beacon-emit runs still going: instance(s) \(running.joined(separator: "; ")) "
                + "(stop them with SIGTERM or systemctl stop)"
        }
        return what
    }

    /// Before a run adds anything: removes what ended runs left on the adapter (not what
    /// `--keep` left). Never stops the run: a failure is said, and `beacon-emit stop` can finish.
    /// - Returns: what to tell the user; nil when there was nothing to do.
    public static func removeWhatEndedRunsLeft(_ client: MgmtClient, directory: String = InstanceRecord.directory()) -> String? {
        do {
            let what = try removeRecordedInstances(client, keptToo: false, directory: directory)
            return what.hasPrefix("removed")
                ? "an earlier run of beacon-emit on \(client.adapter) ended without cleaning up: \(what)" : nil
        } catch {
            return "could not remove what an earlier run of beacon-emit left on \(client.adapter) (\(error)); "
                + "`beacon-emit stop -i \(client.adapter)` removes it once the kernel lets it"
        }
    }

    /// `stop --recorded` (a unit's ExecStopPost): for every adapter with records in `directory`,
    /// removes what runs that are over left on the air.
    /// - Returns: what was done per adapter; an adapter that cannot be reached says why (its
    ///   records stay for the next run).
    public static func removeEveryRecordedInstance(directory: String = InstanceRecord.directory()) -> [String] {
        if let untrusted = InstanceRecord.distrust(directory) { return ["\(untrusted)"] }
        let adapters = Set(InstanceRecord.all(in: directory).map(\.record.adapter)).sorted()
        if adapters.isEmpty { return ["no advertising instances recorded as beacon-emit's (in \(directory))"] }
        return adapters.map { adapter in
            guard adapter.hasPrefix("hci"), let index = Int(adapter.dropFirst(3)) else { return "\(adapter): not an adapter" }
            do {
                let socket = try KernelSocketTransport.openManagement()
                defer { socket.close() }
                let client = MgmtClient(transport: socket, index: UInt16(index))
                return "\(adapter): " + (try removeRecordedInstances(client, directory: directory))
            } catch {
                return "\(adapter): \(error) (the records stay for the next run)"
            }
        }
    }
}
