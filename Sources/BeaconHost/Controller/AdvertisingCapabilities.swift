// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec
import LinuxSystem

/// What the advertising flow needs to know about a controller, and no more: whether it does
/// extended advertising and, for more than one beacon, with how many sets.
public struct AdvertisingCapabilities: Sendable, Equatable {
    public var supportsExtendedAdvertising: Bool
    /// Advertising sets the controller offers; nil when not read (one beacon needs one set).
    public var numberOfAdvertisingSets: Int?
    /// The LE Coded PHY (long range) is among the controller's LE features.
    public var supportsCodedPHY: Bool

    public init(supportsExtendedAdvertising: Bool, numberOfAdvertisingSets: Int? = nil, supportsCodedPHY: Bool = false) {
        self.supportsExtendedAdvertising = supportsExtendedAdvertising
        self.numberOfAdvertisingSets = numberOfAdvertisingSets
        self.supportsCodedPHY = supportsCodedPHY
    }

    /// Reads what advertising `options` needs to choose its flow (callers with `--legacy` need
    /// nothing and do not call this): the supported commands, the LE features only when the
    /// commands include extended advertising (both must say yes), and the number of sets only
    /// for more than one beacon, or none yet (they come later).
    /// - Throws: `HostError` from the command engine.
    package static func read(from controller: HCIController, for options: AdvertisingOptions) throws(HostError)
        -> AdvertisingCapabilities {
        let commands = try controller.send(ReadLocalSupportedCommands())
        guard commands.supportsExtendedAdvertising else { return AdvertisingCapabilities(supportsExtendedAdvertising: false) }
        let features = try controller.send(LEReadLocalSupportedFeatures()).features
        guard features.contains(.extendedAdvertising) else { return AdvertisingCapabilities(supportsExtendedAdvertising: false) }
        var capabilities = AdvertisingCapabilities(supportsExtendedAdvertising: true,
                                                   supportsCodedPHY: features.contains(.leCodedPHY))
        if options.beacons.count != 1 {
            capabilities.numberOfAdvertisingSets = try readNumberOfSets(from: controller, commands: commands)
        }
        return capabilities
    }

    /// The number of advertising sets, read where the supported-commands bitmap lists the
    /// command; 1 where it does not (BlueZ's emulator offers extended advertising without it).
    static func readNumberOfSets(from controller: HCIController,
                                 commands: ReadLocalSupportedCommands.ReturnParameters) throws(HostError) -> Int {
        commands.supportsReadNumberOfSupportedAdvertisingSets
            ? Int(try controller.send(LEReadNumberOfSupportedAdvertisingSets()).numberOfSets) : 1
    }
}
