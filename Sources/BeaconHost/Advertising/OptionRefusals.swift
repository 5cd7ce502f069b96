// SPDX-License-Identifier: GPL-2.0-or-later

extension AdvertisingOptions {
    /// Refuses, before anything is sent, every combination a run would refuse whatever the
    /// controller: a non-resolvable address (given, or made for `rotateAddress`) on connectable
    /// advertising; a TX power or an interval past 10.24 s with `--legacy`, or several beacons
    /// one of which has its own parameters (legacy beacons take turns on one set); through the
    /// management API (asked for by name), a random address, a beacon's own address, or
    /// `--legacy`/`--extended`. What depends on the controller (its features, its free sets)
    /// is still found out when the run starts.
    /// - Parameter access: the way in asked for; `.automatic` takes raw HCI where the options
    ///   need it (`AdvertisingLaunch.resolve`).
    public func checkBeforeSending(access: KernelAccess) throws(AdvertisingOptionError) {
        if connectable && address == .generatedNonResolvable {
            throw AdvertisingOptionError("--random-address non-resolvable is for non-connectable advertising: a connectable "
                                         + "one needs an address a peer can connect to again (static)")
        }
        for (index, own) in beaconParameters.enumerated() {
            if own.connectable ?? connectable, own.address == .generatedNonResolvable {
                throw AdvertisingOptionError("beacon \(index + 1): a non-resolvable address is for non-connectable "
                                             + (own.addressRotation != nil ? "advertising (rotate-address makes new ones)"
                                                : "advertising") + ": drop --connectable (or connectable=true), or give it "
                                             + "address=static")
            }
            if mode == .legacy, own.phy == .coded {
                throw AdvertisingOptionError("beacon \(index + 1)'s phy coded sends extended advertising, which --legacy turns off")
            }
            if mode == .legacy, own.txPower != nil {
                throw AdvertisingOptionError("beacon \(index + 1)'s TX power needs extended advertising, which --legacy turns off")
            }
            if mode == .legacy, let units = own.intervalUnits, !Self.intervalRange(legacy: true).contains(units) {
                throw AdvertisingOptionError("beacon \(index + 1)'s interval \(Self.intervalDescription(units: units)): "
                                             + "legacy advertising takes " + Self.intervalRangeDescription(legacy: true))
            }
            if access == .management, own.address != nil {
                throw AdvertisingOptionError("beacon \(index + 1)'s own address: through the management API the kernel "
                                             + "picks the address beacons go out from: use --access raw")
            }
        }
        if mode == .legacy && beacons.count > 1,
           let index = beaconParameters.indices.first(where: { beaconParameters[$0] != .run }) {
            throw AdvertisingOptionError("beacon \(index + 1) has its own \(beaconParameters[index].description), and with "
                                         + "--legacy the beacons take turns on one set, which keeps one set of parameters: "
                                         + "give every beacon the run's --interval and --tx-power, or drop --legacy")
        }
        if mode == .legacy && txPower != nil {
            throw AdvertisingOptionError("--tx-power needs extended advertising, which --legacy turns off")
        }
        if mode == .legacy && !Self.intervalRange(legacy: true).contains(intervalUnits) {
            throw AdvertisingOptionError("--interval \(intervalDescription): legacy advertising takes "
                                         + Self.intervalRangeDescription(legacy: true))
        }
        if access == .management {
            if address != .publicAddress {
                throw AdvertisingOptionError("--random-address: through the management API the kernel chooses the address: "
                                             + "use --access raw to set it")
            }
            if mode != .automatic {
                throw AdvertisingOptionError("--\(mode.rawValue) chooses HCI commands, which only --access raw or "
                                             + "user-channel sends: through the management API the kernel chooses them")
            }
        }
    }

    /// Whether only HCI commands can honour these options (a mode, a random address, a
    /// beacon's own address): `--access auto` then takes raw HCI.
    var needsHCICommands: Bool {
        mode != .automatic || address != .publicAddress || beaconParameters.contains { $0.address != nil }
    }
}
