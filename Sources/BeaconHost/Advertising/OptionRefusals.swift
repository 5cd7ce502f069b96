// SPDX-License-Identifier: GPL-2.0-or-later

extension AdvertisingOptions {
    /// Refuses, before anything is sent, every combination a run would refuse whatever the
    /// controller: a non-resolvable address (given, or made for `rotateAddress`) on connectable
    /// advertising; a TX power or an interval past 10.24 s with `--legacy`, or several beacons
    /// one of which has its own parameters other than a random address (legacy beacons take
    /// turns on one set); through the management API (asked for by name), a random address, a
    /// beacon's own address, or `--legacy`/`--extended`. What depends on the controller (its features, its free sets)
    /// is still found out when the run starts.
    /// - Parameter access: the way in asked for; `.automatic` takes raw HCI where the options
    ///   need it (`AdvertisingLaunch.resolve`).
    public func checkBeforeSending(access: KernelAccess) throws(AdvertisingOptionError) {
        if beacons.count > Self.maximumBeacons {
            throw AdvertisingOptionError(Refusal(nil, .tooManyBeacons(most: Self.maximumBeacons)))
        }
        if connectable && address == .generatedNonResolvable {
            throw AdvertisingOptionError(Refusal(.nonResolvableAddress, .connectable))
        }
        for (index, own) in beaconParameters.enumerated() {
            let beacon = BeaconID(index + 1)
            if own.connectable ?? connectable, own.address == .generatedNonResolvable {
                throw AdvertisingOptionError(Refusal(.nonResolvableAddress, beacon: beacon, .connectable))
            }
            // What the backend asked for honours, as it declares it (and refuses at its start).
            if mode == .legacy, let refusal = Advertiser.legacySupport.refusal(own, beacon: beacon, .legacyChosen) {
                throw AdvertisingOptionError(refusal)
            }
            if mode == .legacy, let units = own.intervalUnits, !Self.intervalRange(legacy: true).contains(units) {
                throw AdvertisingOptionError(Refusal(.interval(Self.intervalDescription(units: units)), beacon: beacon,
                                                     .legacyIntervalRangeChosen))
            }
            if access == .management, let refusal = ManagedAdvertiser.settingSupport.refusal(own, beacon: beacon, .kernelSetsItself) {
                throw AdvertisingOptionError(refusal)
            }
        }
        if mode == .legacy && beacons.count > 1,
           let index = BeaconParameters.firstUnableToTakeTurns(beaconParameters, runAddressIsRandom: address != .publicAddress) {
            throw AdvertisingOptionError(beaconParameters[index].turnsRefusal(beacon: BeaconID(index + 1)))
        }
        if mode == .legacy && txPower != nil {
            throw AdvertisingOptionError(Refusal(.txPower, .legacyChosen))
        }
        if mode == .legacy && !Self.intervalRange(legacy: true).contains(intervalUnits) {
            throw AdvertisingOptionError(Refusal(.interval(intervalDescription), .legacyIntervalRangeChosen))
        }
        if access == .management {
            if address != .publicAddress {
                throw AdvertisingOptionError(Refusal(.randomAddress, .kernelChoosesAddress))
            }
            if mode != .automatic {
                throw AdvertisingOptionError(Refusal(.mode(mode), .kernelChoosesCommands))
            }
        }
    }

    /// Whether only HCI commands can honour these options (a mode, a random address, a
    /// beacon's own address): `--access auto` then takes raw HCI.
    /// A beacon whose motion renews its address does too (Eddystone-EID): only there does each
    /// step get an address of its own.
    var needsHCICommands: Bool {
        mode != .automatic || address != .publicAddress || beaconParameters.contains { $0.address != nil }
            || beacons.contains(where: \.renewsAddressAsItMoves)
    }
}
