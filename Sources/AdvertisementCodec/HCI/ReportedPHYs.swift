// SPDX-License-Identifier: GPL-2.0-or-later

/// The PHYs an extended advertising report says the advertising came on (Core Vol 4 Part E
/// 7.7.65.13): the primary channels' (LE 1M or LE Coded) and the secondary channels' (none for
/// a legacy PDU). Legacy advertising reports carry none: legacy PDUs are LE 1M.
public struct ReportedPHYs: Hashable, Sendable {
    public var primary: UInt8
    public var secondary: UInt8

    public init(primary: UInt8, secondary: UInt8) {
        self.primary = primary
        self.secondary = secondary
    }

    /// A PHY field's name: `1m`, `2m`, `coded`, `none` (0, secondary only), or the value in hex
    /// for one the standard does not define.
    public static func name(_ value: UInt8) -> String {
        definedName(value).map { "\($0)" } ?? "0x" + String(value, radix: 16, uppercase: true)
    }

    /// The name of a value the standard defines (0 to 3), as a literal (no string made per
    /// report); nil for the others.
    public static func definedName(_ value: UInt8) -> StaticString? {
        switch value {
        case 0: "none"
        case 1: "1m"
        case 2: "2m"
        case 3: "coded"
        default: nil
        }
    }

    /// For a line of text: `coded`, or `1m+2m` where the secondary channels' PHY is another.
    public var text: String {
        secondary == 0 || secondary == primary ? Self.name(primary) : "\(Self.name(primary))+\(Self.name(secondary))"
    }
}
