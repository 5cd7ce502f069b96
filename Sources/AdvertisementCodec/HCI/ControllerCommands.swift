// SPDX-License-Identifier: GPL-2.0-or-later

// Controller and baseband, and informational commands (Core Vol 4 Part E 7.3, 7.4).

/// HCI_Reset (0x0C03).
public struct Reset: HCICommand, ParameterlessCommand {
    public static let opcode = HCIOpcode.reset
    public init() {}
}

/// HCI_Set_Event_Mask (0x0C01).
public struct SetEventMask: HCICommand {
    public static let opcode = HCIOpcode.setEventMask
    /// Bit 61: LE Meta event. Without it no advertising report reaches the host.
    public static let leMetaEventBit: UInt64 = 1 << 61
    /// The controller's default mask after reset (Core Vol 4 Part E 7.3.1), plus LE Meta.
    public static let defaultWithLEMeta = SetEventMask(mask: 0x0000_1FFF_FFFF_FFFF | leMetaEventBit)

    public var mask: UInt64
    public init(mask: UInt64) { self.mask = mask }

    public func encodeParameters(into buffer: inout [UInt8]) { buffer.appendLE(mask) }
    public init(parameters: ArraySlice<UInt8>) throws(CodecError) {
        var reader = ByteReader(parameters, structure: "Set Event Mask")
        mask = try reader.uint64LE("event mask")
        try reader.expectEnd()
    }
}

/// HCI_Read_Local_Version_Information (0x1001).
public struct ReadLocalVersionInformation: HCICommand, ParameterlessCommand {
    public static let opcode = HCIOpcode.readLocalVersionInformation
    public init() {}

    public struct ReturnParameters: CommandReturnParameters {
        /// Core specification version (Assigned Numbers): 0x09 = 5.0, 0x0C = 5.3.
        public var hciVersion: UInt8
        public var hciSubversion: UInt16
        public var lmpVersion: UInt8
        /// Bluetooth SIG company identifier of the controller's manufacturer.
        public var companyIdentifier: CompanyIdentifier
        public var lmpSubversion: UInt16

        public init(hciVersion: UInt8, hciSubversion: UInt16, lmpVersion: UInt8,
                    companyIdentifier: CompanyIdentifier, lmpSubversion: UInt16) {
            self.hciVersion = hciVersion
            self.hciSubversion = hciSubversion
            self.lmpVersion = lmpVersion
            self.companyIdentifier = companyIdentifier
            self.lmpSubversion = lmpSubversion
        }

        public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
            var reader = ByteReader(bytes, structure: "Read Local Version Information return parameters")
            hciVersion = try reader.uint8("HCI version")
            hciSubversion = try reader.uint16LE("HCI subversion")
            lmpVersion = try reader.uint8("LMP version")
            companyIdentifier = CompanyIdentifier(try reader.uint16LE("company identifier"))
            lmpSubversion = try reader.uint16LE("LMP subversion")
        }

        /// The Core version the HCI version byte stands for ("5.3"), if known.
        public var coreVersion: String? {
            let names = ["1.0b", "1.1", "1.2", "2.0", "2.1", "3.0", "4.0", "4.1", "4.2", "5.0", "5.1", "5.2",
                         "5.3", "5.4", "6.0", "6.1"]
            return Int(hciVersion) < names.count ? names[Int(hciVersion)] : nil
        }
    }
}

/// HCI_Read_Local_Supported_Commands (0x1002): a 64-byte bitmap.
public struct ReadLocalSupportedCommands: HCICommand, ParameterlessCommand {
    public static let opcode = HCIOpcode.readLocalSupportedCommands
    public init() {}

    public struct ReturnParameters: CommandReturnParameters {
        public var bitmap: [UInt8]
        public init(bitmap: [UInt8]) { self.bitmap = bitmap }

        public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
            var reader = ByteReader(bytes, structure: "Read Local Supported Commands return parameters")
            bitmap = Array(try reader.bytes(64, "supported commands"))
        }

        /// Whether octet `octet`, bit `bit` of the bitmap is set (the table in Core Vol 4 Part E 6.27).
        public func supports(octet: Int, bit: Int) -> Bool {
            octet >= 0 && octet < bitmap.count && bit >= 0 && bit < 8 && bitmap[octet] & (1 << bit) != 0
        }

        /// LE Set Extended Advertising Parameters: octet 36, bit 2.
        public var supportsExtendedAdvertising: Bool { supports(octet: 36, bit: 2) }
        /// LE Read Maximum Advertising Data Length: octet 36, bit 6.
        public var supportsReadMaximumAdvertisingDataLength: Bool { supports(octet: 36, bit: 6) }
        /// LE Read Number of Supported Advertising Sets: octet 36, bit 7.
        public var supportsReadNumberOfSupportedAdvertisingSets: Bool { supports(octet: 36, bit: 7) }
        /// LE Set Extended Scan Parameters and Enable: octet 37, bits 5 and 6.
        public var supportsExtendedScanning: Bool { supports(octet: 37, bit: 5) && supports(octet: 37, bit: 6) }
    }
}

/// HCI_Read_BD_ADDR (0x1009).
public struct ReadBDAddr: HCICommand, ParameterlessCommand {
    public static let opcode = HCIOpcode.readBDAddr
    public init() {}

    public struct ReturnParameters: CommandReturnParameters {
        public var address: BluetoothAddress
        public init(address: BluetoothAddress) { self.address = address }
        public init(parsing bytes: ArraySlice<UInt8>) throws(CodecError) {
            var reader = ByteReader(bytes, structure: "Read BD_ADDR return parameters")
            address = try reader.address("BD_ADDR")
        }
    }
}
