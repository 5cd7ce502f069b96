// SPDX-License-Identifier: GPL-2.0-or-later

// Scanning commands, legacy and extended (Core Vol 4 Part E 7.8.10, 7.8.11, 7.8.64, 7.8.65).

/// LE_Scan_Type: passive listens only; active sends scan requests.
public struct ScanType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let passive = ScanType(rawValue: 0x00)
    public static let active = ScanType(rawValue: 0x01)
}

/// HCI_LE_Set_Scan_Parameters (0x200B). Interval and window in 0.625 ms units.
public struct LESetScanParameters: HCICommand {
    public static let opcode = HCIOpcode.leSetScanParameters
    public var scanType: ScanType
    public var interval: UInt16
    public var window: UInt16
    public var ownAddressType: OwnAddressType
    public var filterPolicy: UInt8

    public init(scanType: ScanType = .passive, interval: UInt16 = 0x0010, window: UInt16 = 0x0010,
                ownAddressType: OwnAddressType = .publicDevice, filterPolicy: UInt8 = 0) {
        self.scanType = scanType
        self.interval = interval
        self.window = window
        self.ownAddressType = ownAddressType
        self.filterPolicy = filterPolicy
    }

    public func encodeParameters(into buffer: inout [UInt8]) {
        buffer.append(scanType.rawValue)
        buffer.appendLE(interval)
        buffer.appendLE(window)
        buffer.append(ownAddressType.rawValue)
        buffer.append(filterPolicy)
    }

    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "LE Set Scan Parameters")
        scanType = ScanType(rawValue: try reader.uint8("scan type"))
        interval = try reader.uint16LE("scan interval")
        window = try reader.uint16LE("scan window")
        ownAddressType = OwnAddressType(rawValue: try reader.uint8("own address type"))
        filterPolicy = try reader.uint8("scanning filter policy")
        try reader.expectEnd()
    }
}

/// HCI_LE_Set_Scan_Enable (0x200C).
public struct LESetScanEnable: HCICommand {
    public static let opcode = HCIOpcode.leSetScanEnable
    public var enable: Bool
    public var filterDuplicates: Bool

    public init(enable: Bool, filterDuplicates: Bool = false) {
        self.enable = enable
        self.filterDuplicates = filterDuplicates
    }

    public func encodeParameters(into buffer: inout [UInt8]) {
        buffer.append(enable ? 1 : 0)
        buffer.append(filterDuplicates ? 1 : 0)
    }

    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "LE Set Scan Enable")
        enable = try reader.boolean("scan enable")
        filterDuplicates = try reader.boolean("filter duplicates")
        try reader.expectEnd()
    }
}

/// HCI_LE_Set_Extended_Scan_Parameters (0x2041): per PHY, type, interval and window.
public struct LESetExtendedScanParameters: HCICommand {
    public static let opcode = HCIOpcode.leSetExtendedScanParameters

    /// The settings for one PHY.
    public struct PHYParameters: Hashable, Sendable {
        public var scanType: ScanType
        public var interval: UInt16
        public var window: UInt16
        public init(scanType: ScanType = .passive, interval: UInt16 = 0x0010, window: UInt16 = 0x0010) {
            self.scanType = scanType
            self.interval = interval
            self.window = window
        }
    }

    public var ownAddressType: OwnAddressType
    public var filterPolicy: UInt8
    /// Bit 0: LE 1M, bit 2: LE Coded; one `phys` entry per set bit, in bit order.
    public var scanningPHYs: UInt8
    public var phys: [PHYParameters]

    /// - Throws: `CodecError` if `phys` does not have one entry per bit set in `scanningPHYs`.
    public init(ownAddressType: OwnAddressType = .publicDevice, filterPolicy: UInt8 = 0,
                scanningPHYs: UInt8 = 0x01, phys: [PHYParameters] = [PHYParameters()]) throws(CodecError) {
        guard scanningPHYs.nonzeroBitCount == phys.count else {
            throw CodecError(structure: "LE Set Extended Scan Parameters", offset: 2, reason: .unexpectedValue(
                field: "scanning PHYs", expected: "one parameter set per PHY bit (\(scanningPHYs.nonzeroBitCount))",
                found: "\(phys.count) sets"))
        }
        self.ownAddressType = ownAddressType
        self.filterPolicy = filterPolicy
        self.scanningPHYs = scanningPHYs
        self.phys = phys
    }

    public func encodeParameters(into buffer: inout [UInt8]) {
        buffer.append(ownAddressType.rawValue)
        buffer.append(filterPolicy)
        buffer.append(scanningPHYs)
        for phy in phys {
            buffer.append(phy.scanType.rawValue)
            buffer.appendLE(phy.interval)
            buffer.appendLE(phy.window)
        }
    }

    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "LE Set Extended Scan Parameters")
        ownAddressType = OwnAddressType(rawValue: try reader.uint8("own address type"))
        filterPolicy = try reader.uint8("scanning filter policy")
        scanningPHYs = try reader.uint8("scanning PHYs")
        phys = []
        for index in 0..<scanningPHYs.nonzeroBitCount {
            phys.append(PHYParameters(scanType: ScanType(rawValue: try reader.uint8("scan type [\(index)]")),
                                      interval: try reader.uint16LE("scan interval [\(index)]"),
                                      window: try reader.uint16LE("scan window [\(index)]")))
        }
        try reader.expectEnd()
    }
}

/// HCI_LE_Set_Extended_Scan_Enable (0x2042). Duration in 10 ms units, period in 1.28 s units.
public struct LESetExtendedScanEnable: HCICommand {
    public static let opcode = HCIOpcode.leSetExtendedScanEnable
    public var enable: Bool
    /// 0x00 off, 0x01 on, 0x02 on and reset each period.
    public var filterDuplicates: UInt8
    public var duration: UInt16
    public var period: UInt16

    public init(enable: Bool, filterDuplicates: UInt8 = 0, duration: UInt16 = 0, period: UInt16 = 0) {
        self.enable = enable
        self.filterDuplicates = filterDuplicates
        self.duration = duration
        self.period = period
    }

    public func encodeParameters(into buffer: inout [UInt8]) {
        buffer.append(enable ? 1 : 0)
        buffer.append(filterDuplicates)
        buffer.appendLE(duration)
        buffer.appendLE(period)
    }

    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "LE Set Extended Scan Enable")
        enable = try reader.boolean("scan enable")
        filterDuplicates = try reader.uint8("filter duplicates")
        duration = try reader.uint16LE("duration")
        period = try reader.uint16LE("period")
        try reader.expectEnd()
    }
}
