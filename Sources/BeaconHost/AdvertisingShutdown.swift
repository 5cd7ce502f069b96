// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

/// `beacon-emit stop`: turns advertising off whoever turned it on.
public enum AdvertisingShutdown {
    /// Owned controllers are reset (which ends all advertising). Kernel adapters get the
    /// disable command of the mode the controller supports, falling back to the other mode
    /// when it answers Command Disallowed. Advertising that is already off is success.
    /// - Returns: what was done, for the user.
    /// - Throws: `HostError` for any other refusal or link failure.
    public static func disableAll(_ connection: ControllerConnection) throws(HostError) -> String {
        let controller = connection.controller
        if connection.ownsController {
            try controller.send(Reset())
            return "controller reset"
        }
        let capabilities = try AdvertisingCapabilities.read(from: controller, for: AdvertisingOptions(beacons: []))
        if capabilities.supportsExtendedAdvertising {
            do {
                try controller.send(LESetExtendedAdvertisingEnable(enable: false, sets: []))
                return "all extended advertising sets disabled"
            } catch let HostError.controllerRefused(_, status, _) where status == .commandDisallowed {
                // Driven with legacy commands since reset: fall through to the legacy disable.
            }
        }
        try controller.send(LESetAdvertisingEnable(enable: false))
        return "legacy advertising disabled"
    }
}
