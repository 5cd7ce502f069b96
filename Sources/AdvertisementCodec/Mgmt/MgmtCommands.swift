// SPDX-License-Identifier: GPL-2.0-or-later

/// Read Management Version Information (0x0001): which revision of the management API the
/// kernel speaks (1.14 is Linux 4.19's, 1.18 Linux 5.11's with extended advertising parameters).
public struct ReadVersionInformation: MgmtCommand, ParameterlessCommand {
    public static let opcode = MgmtOpcode.readVersionInformation
    public init() {}

    public struct ReturnParameters: CommandReturnParameters {
        public var version: UInt8
        public var revision: UInt16
        public init(version: UInt8, revision: UInt16) {
            self.version = version
            self.revision = revision
        }
        public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
            var reader = ByteReader(bytes, structure: "Read Management Version Information")
            version = try reader.uint8("Version")
            revision = try reader.uint16LE("Revision")
        }
        /// "1.22".
        public var description: String { "\(version).\(revision)" }
    }
}

/// Read Controller Index List (0x0003): the adapters the kernel manages.
public struct ReadControllerIndexList: MgmtCommand, ParameterlessCommand {
    public static let opcode = MgmtOpcode.readControllerIndexList
    public init() {}

    public struct ReturnParameters: CommandReturnParameters {
        public var indices: [UInt16]
        public init(indices: [UInt16]) { self.indices = indices }
        public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
            var reader = ByteReader(bytes, structure: "Read Controller Index List")
            let count = try reader.uint16LE("Num_Controllers")
            indices = []
            for number in 0..<Int(count) { indices.append(try reader.uint16LE("Controller_Index[\(number)]")) }
        }
    }
}

/// Read Controller Information (0x0004): address, version, and which settings are on.
public struct ReadControllerInformation: MgmtCommand, ParameterlessCommand {
    public static let opcode = MgmtOpcode.readControllerInformation
    public init() {}

    public struct ReturnParameters: CommandReturnParameters {
        public var address: BluetoothAddress
        public var bluetoothVersion: UInt8
        public var manufacturer: UInt16
        public var supportedSettings: MgmtSettings
        public var currentSettings: MgmtSettings

        public init(address: BluetoothAddress, bluetoothVersion: UInt8, manufacturer: UInt16,
                    supportedSettings: MgmtSettings, currentSettings: MgmtSettings) {
            self.address = address
            self.bluetoothVersion = bluetoothVersion
            self.manufacturer = manufacturer
            self.supportedSettings = supportedSettings
            self.currentSettings = currentSettings
        }

        /// Reads the fields up to Current_Settings; class of device and names follow, unread.
        public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
            var reader = ByteReader(bytes, structure: "Read Controller Information")
            address = try reader.address("Address")
            bluetoothVersion = try reader.uint8("Bluetooth_Version")
            manufacturer = try reader.uint16LE("Manufacturer")
            supportedSettings = MgmtSettings(rawValue: try reader.uint32LE("Supported_Settings"))
            currentSettings = MgmtSettings(rawValue: try reader.uint32LE("Current_Settings"))
        }
    }
}

/// Set Powered (0x0005). Returns the settings afterwards.
public struct SetPowered: MgmtCommand {
    public static let opcode = MgmtOpcode.setPowered
    public var powered: Bool
    public init(powered: Bool) { self.powered = powered }

    public func encodeParameters(into buffer: inout [UInt8]) { buffer.append(powered ? 1 : 0) }

    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        powered = try MgmtSettingsReturn.readMode(parameters, command: "Set Powered", field: "Powered")
    }

    public typealias ReturnParameters = MgmtSettingsReturn
}

/// Set Low Energy (0x000D): LE on or off. Returns the settings afterwards.
public struct SetLowEnergy: MgmtCommand {
    public static let opcode = MgmtOpcode.setLowEnergy
    public var enabled: Bool
    public init(enabled: Bool) { self.enabled = enabled }

    public func encodeParameters(into buffer: inout [UInt8]) { buffer.append(enabled ? 1 : 0) }

    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        enabled = try MgmtSettingsReturn.readMode(parameters, command: "Set Low Energy", field: "Low_Energy")
    }

    public typealias ReturnParameters = MgmtSettingsReturn
}

/// The Current_Settings that the mode commands (Set Powered, Set Low Energy) return.
public struct MgmtSettingsReturn: CommandReturnParameters {
    public var currentSettings: MgmtSettings
    public init(currentSettings: MgmtSettings) { self.currentSettings = currentSettings }
    public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(bytes, structure: "Current_Settings")
        currentSettings = MgmtSettings(rawValue: try reader.uint32LE("Current_Settings"))
    }

    /// Reads a mode command's one parameter: 0x00 off, 0x01 on.
    static func readMode(_ parameters: ArraySlice<UInt8>, command: String, field: String) throws(CodecError) -> Bool {
        var reader = ByteReader(parameters, structure: command)
        let value = try reader.uint8(field)
        guard value <= 1 else {
            throw reader.unexpected(field, expected: "0x00 or 0x01", found: value.hexLiteral, at: parameters.startIndex)
        }
        try reader.expectEnd()
        return value == 1
    }
}

/// Read Advertising Features (0x003D): what Add Advertising accepts and which instances are taken.
public struct ReadAdvertisingFeatures: MgmtCommand, ParameterlessCommand {
    public static let opcode = MgmtOpcode.readAdvertisingFeatures
    public init() {}

    public struct ReturnParameters: CommandReturnParameters {
        public var supportedFlags: MgmtAdvertisingFlags
        public var maximumAdvertisingDataLength: UInt8
        public var maximumScanResponseLength: UInt8
        /// Instances the kernel offers (identifiers 1 to this number).
        public var maximumInstances: UInt8
        /// Identifiers of the instances added so far, by any program.
        public var instances: [UInt8]

        public init(supportedFlags: MgmtAdvertisingFlags, maximumAdvertisingDataLength: UInt8,
                    maximumScanResponseLength: UInt8, maximumInstances: UInt8, instances: [UInt8]) {
            self.supportedFlags = supportedFlags
            self.maximumAdvertisingDataLength = maximumAdvertisingDataLength
            self.maximumScanResponseLength = maximumScanResponseLength
            self.maximumInstances = maximumInstances
            self.instances = instances
        }

        public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
            var reader = ByteReader(bytes, structure: "Read Advertising Features")
            supportedFlags = MgmtAdvertisingFlags(rawValue: try reader.uint32LE("Supported_Flags"))
            maximumAdvertisingDataLength = try reader.uint8("Max_Adv_Data_Len")
            maximumScanResponseLength = try reader.uint8("Max_Scan_Rsp_Len")
            maximumInstances = try reader.uint8("Max_Instances")
            let count = try reader.uint8("Num_Instances")
            instances = Array(try reader.bytes(Int(count), "Instance[\(count)]"))
        }

        /// Whether Add Extended Advertising Parameters takes an interval (kernels since 5.11).
        public var acceptsIntervals: Bool { supportedFlags.contains(.intervalParameters) }

        /// The lowest instance identifier the list does not name: the one known to be free.
        ///
        /// Linux 6.x lists only instances numbered up to the count of instances (its comment says
        /// "1-le_num_of_adv_sets are externally visible", its test compares with the count), so a
        /// higher number may be taken and unlisted. The lowest unlisted number is free all the
        /// same: if some instance is hidden, fewer than the count are listed, so a number up to
        /// the count is unlisted, and no instance up to the count is hidden; if none is hidden,
        /// the list is complete.
        public var lowestFreeInstance: UInt8? {
            guard maximumInstances > 0 else { return nil }
            return (1...maximumInstances).first { !instances.contains($0) }
        }

        /// The instance numbers the list proves free: unlisted, and at most one more than the
        /// count listed. Linux 6.x lists only instances numbered up to its count of instances, so
        /// a higher unlisted number may be taken and hidden; but a hidden instance is numbered
        /// above the true count, which includes it and every listed one, so no number up to the
        /// count listed plus one can be hidden.
        public var provablyFreeInstances: [UInt8] {
            guard maximumInstances > 0 else { return [] }
            let top = min(Int(maximumInstances), instances.count + 1)
            return (1...top).map(UInt8.init).filter { !instances.contains($0) }
        }

        /// The highest number the list proves free (`provablyFreeInstances`), not in `excluding`.
        ///
        /// bluetoothd numbers the advertisements applications register from 1 upward in a
        /// bitmap of its own and never reads who else added an instance, so the higher a number,
        /// the later it reaches it; only a number proven free is ever written, so that nobody
        /// else's hidden instance is overwritten.
        public func highestFreeInstance(excluding: Set<UInt8> = []) -> UInt8? {
            provablyFreeInstances.last { !excluding.contains($0) }
        }

        /// Whether the controller has legacy advertising only: the kernel offers a secondary
        /// PHY (and the TX power) only with extended advertising. Through the management API
        /// it then advertises non-connectable instances every 100 to 150 ms whatever interval
        /// an instance asks for, and takes turns between instances in software.
        public var legacyAdvertisingOnly: Bool { !supportedFlags.contains(.secondary1M) }

        /// At most how many more instances can be added (fewer where some are hidden).
        public var freeInstanceCount: Int { max(0, Int(maximumInstances) - instances.count) }
    }
}

/// Add Advertising (0x003E): an instance with the kernel's default interval.
public struct AddAdvertising: MgmtCommand {
    public static let opcode = MgmtOpcode.addAdvertising
    public var instance: UInt8
    public var flags: MgmtAdvertisingFlags
    /// Seconds on the air per turn when several instances take turns; 0 for the default (2 s).
    public var duration: UInt16
    /// Seconds until the kernel removes the instance; 0 for never.
    public var timeout: UInt16
    public var advertisingData: [UInt8]
    public var scanResponse: [UInt8]

    public init(instance: UInt8, flags: MgmtAdvertisingFlags = [], duration: UInt16 = 0, timeout: UInt16 = 0,
                advertisingData: [UInt8], scanResponse: [UInt8] = []) throws(CodecError) {
        guard advertisingData.count <= 255, scanResponse.count <= 255 else {
            throw CodecError(structure: "Add Advertising", offset: 0, reason: .unexpectedValue(
                field: "Adv_Data_Len", expected: "at most 255 bytes", found: "\(max(advertisingData.count, scanResponse.count))"))
        }
        self.instance = instance
        self.flags = flags
        self.duration = duration
        self.timeout = timeout
        self.advertisingData = advertisingData
        self.scanResponse = scanResponse
    }

    public func encodeParameters(into buffer: inout [UInt8]) {
        buffer.append(instance)
        buffer.appendLE(flags.rawValue)
        buffer.appendLE(duration)
        buffer.appendLE(timeout)
        buffer.append(UInt8(advertisingData.count))
        buffer.append(UInt8(scanResponse.count))
        buffer += advertisingData
        buffer += scanResponse
    }

    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "Add Advertising")
        instance = try reader.uint8("Instance")
        flags = MgmtAdvertisingFlags(rawValue: try reader.uint32LE("Flags"))
        duration = try reader.uint16LE("Duration")
        timeout = try reader.uint16LE("Timeout")
        let dataLength = try reader.uint8("Adv_Data_Len")
        let responseLength = try reader.uint8("Scan_Rsp_Len")
        advertisingData = Array(try reader.bytes(Int(dataLength), "Adv_Data"))
        scanResponse = Array(try reader.bytes(Int(responseLength), "Scan_Rsp"))
        try reader.expectEnd()
    }

    public typealias ReturnParameters = MgmtInstanceReturn
}

/// Remove Advertising (0x003F): one instance, or with 0 every instance (which beacon-emit never sends).
public struct RemoveAdvertising: MgmtCommand {
    public static let opcode = MgmtOpcode.removeAdvertising
    public var instance: UInt8
    public init(instance: UInt8) { self.instance = instance }

    public func encodeParameters(into buffer: inout [UInt8]) { buffer.append(instance) }

    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "Remove Advertising")
        instance = try reader.uint8("Instance")
        try reader.expectEnd()
    }

    public typealias ReturnParameters = MgmtInstanceReturn
}

/// Add Extended Advertising Parameters (0x0054): an instance with an interval and TX power,
/// put on the air by the Add Extended Advertising Data that follows.
public struct AddExtendedAdvertisingParameters: MgmtCommand {
    public static let opcode = MgmtOpcode.addExtendedAdvertisingParameters
    public var instance: UInt8
    /// Advertising flags, and which of the fields below count (`durationParameter`, ...).
    public var flags: MgmtAdvertisingFlags
    public var duration: UInt16
    public var timeout: UInt16
    /// In 0.625 ms units, 0x000020 to 0xFFFFFF.
    public var minimumInterval: UInt32
    public var maximumInterval: UInt32
    public var txPower: Int8

    public init(instance: UInt8, flags: MgmtAdvertisingFlags, duration: UInt16 = 0, timeout: UInt16 = 0,
                minimumInterval: UInt32, maximumInterval: UInt32, txPower: Int8 = 127) {
        self.instance = instance
        self.flags = flags
        self.duration = duration
        self.timeout = timeout
        self.minimumInterval = minimumInterval
        self.maximumInterval = maximumInterval
        self.txPower = txPower
    }

    public func encodeParameters(into buffer: inout [UInt8]) {
        buffer.append(instance)
        buffer.appendLE(flags.rawValue)
        buffer.appendLE(duration)
        buffer.appendLE(timeout)
        buffer.appendLE(minimumInterval)
        buffer.appendLE(maximumInterval)
        buffer.append(UInt8(bitPattern: txPower))
    }

    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "Add Extended Advertising Parameters")
        instance = try reader.uint8("Instance")
        flags = MgmtAdvertisingFlags(rawValue: try reader.uint32LE("Flags"))
        duration = try reader.uint16LE("Duration")
        timeout = try reader.uint16LE("Timeout")
        minimumInterval = try reader.uint32LE("MinInterval")
        maximumInterval = try reader.uint32LE("MaxInterval")
        txPower = try reader.int8("TxPower")
        try reader.expectEnd()
    }

    public struct ReturnParameters: CommandReturnParameters {
        public var instance: UInt8
        /// What the controller chose, in dBm.
        public var txPower: Int8
        public var maximumAdvertisingDataLength: UInt8
        public var maximumScanResponseLength: UInt8

        public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
            var reader = ByteReader(bytes, structure: "Add Extended Advertising Parameters")
            instance = try reader.uint8("Instance")
            txPower = try reader.int8("TxPower")
            maximumAdvertisingDataLength = try reader.uint8("MaxAdvDataLen")
            maximumScanResponseLength = try reader.uint8("MaxScanRspLen")
        }
    }
}

/// Add Extended Advertising Data (0x0055): the data of an instance whose parameters were
/// added; the kernel then enables it.
public struct AddExtendedAdvertisingData: MgmtCommand {
    public static let opcode = MgmtOpcode.addExtendedAdvertisingData
    public var instance: UInt8
    public var advertisingData: [UInt8]
    public var scanResponse: [UInt8]

    public init(instance: UInt8, advertisingData: [UInt8], scanResponse: [UInt8] = []) throws(CodecError) {
        guard advertisingData.count <= 255, scanResponse.count <= 255 else {
            throw CodecError(structure: "Add Extended Advertising Data", offset: 0, reason: .unexpectedValue(
                field: "Advertising Data Length", expected: "at most 255 bytes",
                found: "\(max(advertisingData.count, scanResponse.count))"))
        }
        self.instance = instance
        self.advertisingData = advertisingData
        self.scanResponse = scanResponse
    }

    public func encodeParameters(into buffer: inout [UInt8]) {
        buffer.append(instance)
        buffer.append(UInt8(advertisingData.count))
        buffer.append(UInt8(scanResponse.count))
        buffer += advertisingData
        buffer += scanResponse
    }

    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "Add Extended Advertising Data")
        instance = try reader.uint8("Instance")
        let dataLength = try reader.uint8("Advertising Data Length")
        let responseLength = try reader.uint8("Scan Response Length")
        advertisingData = Array(try reader.bytes(Int(dataLength), "Advertising Data"))
        scanResponse = Array(try reader.bytes(Int(responseLength), "Scan Response"))
        try reader.expectEnd()
    }

    public typealias ReturnParameters = MgmtInstanceReturn
}

/// The instance identifier that the advertising commands return.
public struct MgmtInstanceReturn: CommandReturnParameters {
    public var instance: UInt8
    public init(instance: UInt8) { self.instance = instance }
    public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(bytes, structure: "advertising instance")
        instance = try reader.uint8("Instance")
    }
}
