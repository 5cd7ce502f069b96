// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// `beacon-emit stop`: turns off what beacon-emit left on, and nothing else.
public enum AdvertisingShutdown {
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

    /// Removes the management instances that beacon-emit recorded for the adapter and that
    /// still exist, then the record. Instances it did not add are never touched.
    /// - Returns: what was done, for the user.
    /// - Throws: `HostError` when the kernel refuses.
    public static func removeRecordedInstances(_ connection: ManagementConnection) throws(HostError) -> String {
        let client = connection.client
        let adapter = client.adapter
        guard let record = InstanceRecord.load(adapter: adapter) else {
            return "no advertising instances recorded as beacon-emit's (in \(InstanceRecord.directory()))"
        }
        let present = Set(try client.send(ReadAdvertisingFeatures()).instances)
        var removed: [UInt8] = []
        for instance in record.instances where present.contains(instance) {
            if try client.removeInstance(instance) { removed.append(instance) }
        }
        InstanceRecord.remove(adapter: adapter)
        return removed.isEmpty ? "beacon-emit's recorded instances were already gone"
            : "removed instance(s) \(removed.map(String.init).joined(separator: ", ")) that beacon-emit added"
    }
}
