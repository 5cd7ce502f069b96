// SPDX-License-Identifier: GPL-2.0-or-later

/// A beacon of an app's own layout (`BeaconLayout`, android-beacon-library's), under the
/// layout's name: its identifiers, data fields, measured power and company ID as the library
/// reads them. A format like any other (`Beacon.registered`): the printers write it (its
/// identifiers as the library prints them), the tracker keeps it by its layout and identifiers,
/// and a description builds it (`layout=NAME` or the layout itself, `ids`, `data`,
/// `measured-power`, `company-id`). Nothing decodes one from the air without its layout: an app
/// gives its parsers (`decode --layout`, `scan --layout`), as the library's `BeaconParser`s.
public struct LayoutBeacon: RegisteredBeaconValue {
    /// The layout's name (`acme`; `layout` for one given without a name).
    public let name: String
    public let layout: BeaconLayout
    public let reading: BeaconLayout.Reading
    /// What it advertises (or was heard in).
    public let advertisingData: AdvertisingData

    /// The beacon a layout reads in advertising data heard, or nil where it reads none.
    public init?(name: String, layout: BeaconLayout, heard data: AdvertisingData) {
        guard let reading = layout.reading(data) else { return nil }
        self.name = name
        self.layout = layout
        self.reading = reading
        self.advertisingData = data
    }

    /// A beacon to send: identifiers as the library writes them (`BeaconLayout.identifier`), one
    /// for each `i:` in order, data fields (decimal or `0x` hex) one for each `d:`.
    /// - Throws: `BeaconLayout.Invalid` naming the value (`--id 2`) and what its field takes.
    public init(name: String, layout: BeaconLayout, identifiers texts: [String], data dataTexts: [String], measuredPower: Int?,
                companyID: UInt16? = nil) throws(BeaconLayout.Invalid) {
        guard texts.count == layout.identifiers.count else {
            throw BeaconLayout.Invalid("it has \(layout.identifiers.count) identifier\(layout.identifiers.count == 1 ? "" : "s") "
                                       + "(i:), \(texts.count) --id given")
        }
        guard dataTexts.count == layout.dataFields.count else {
            throw BeaconLayout.Invalid("it has \(layout.dataFields.count) data field\(layout.dataFields.count == 1 ? "" : "s") "
                                       + "(d:), \(dataTexts.count) --data given")
        }
        var identifiers: [[UInt8]] = []
        for (index, (field, text)) in zip(layout.identifiers, texts).enumerated() {
            do {
                identifiers.append(try BeaconLayout.identifier(text, for: field))
            } catch {
                throw BeaconLayout.Invalid("--id \(index + 1) (i:\(field.start)-\(field.end)): \(error.message)")
            }
        }
        var data: [UInt64] = []
        for (index, (field, text)) in zip(layout.dataFields, dataTexts).enumerated() {
            do {
                data.append(try BeaconLayout.dataValue(text, for: field))
            } catch {
                throw BeaconLayout.Invalid("--data \(index + 1) (d:\(field.start)-\(field.end)): \(error.message)")
            }
        }
        if companyID != nil, layout.serviceUUID != nil {
            throw BeaconLayout.Invalid("--company-id: the layout sends service data (s:), which has no company ID")
        }
        let company = layout.serviceUUID == nil ? companyID ?? BeaconLayout.testCompanyID : nil
        self.advertisingData = try layout.advertisingData(identifiers: identifiers, data: data, measuredPower: measuredPower,
                                                          companyID: company ?? BeaconLayout.testCompanyID)
        self.name = name
        self.layout = layout
        self.reading = BeaconLayout.Reading(identifiers: identifiers, data: data,
                                            measuredPower: layout.fixedPower ? layout.powerCorrection
                                                : layout.power == nil ? nil : measuredPower,
                                            companyID: company)
    }

    /// The beacon the first of an app's layouts reads in advertising data (as the library's
    /// list of parsers: the first that matches wins), or nil.
    public static func first(of layouts: [(name: String, layout: BeaconLayout)], in data: AdvertisingData) -> LayoutBeacon? {
        for (name, layout) in layouts {
            if let beacon = LayoutBeacon(name: name, layout: layout, heard: data) { return beacon }
        }
        return nil
    }

    /// The beacon the first of an app's layouts reads in advertising data given as bytes, as a
    /// `Beacon`; nil where none reads it (none given, or bytes that are no advertising data).
    public static func first(of layouts: [(name: String, layout: BeaconLayout)], inData bytes: ArraySlice<UInt8>) -> Beacon? {
        guard !layouts.isEmpty, let data = try? AdvertisingData(parsing: bytes) else { return nil }
        return first(of: layouts, in: data)?.beacon
    }

    /// It as a `Beacon` (`Beacon.registered`).
    public var beacon: Beacon { .registered(RegisteredBeacon(self)) }

    /// The layouts of the layout beacons among `beacons`, each once, in order: what a watcher
    /// of those beacons reads the air with (nothing decodes a layout's beacon without it).
    public static func layouts(of beacons: [Beacon]) -> [(name: String, layout: BeaconLayout)] {
        var layouts: [(name: String, layout: BeaconLayout)] = []
        for case let .registered(registered) in beacons {
            guard let beacon = registered.value as? LayoutBeacon,
                  !layouts.contains(where: { $0.name == beacon.name && $0.layout == beacon.layout }) else { continue }
            layouts.append((beacon.name, beacon.layout))
        }
        return layouts
    }

    /// The beacons in advertising data heard (`Beacon.beacons(in:)`), and after them the first
    /// of `layouts`' beacons in it: what a watcher of beacons it sent itself hears.
    /// - Throws: `CodecError` as `Beacon.beacons(in:)` does.
    public static func beacons(in data: AdvertisingData, reading layouts: [(name: String, layout: BeaconLayout)])
        throws(CodecError) -> [Beacon] {
        var beacons = try Beacon.beacons(in: data)
        if !layouts.isEmpty, let beacon = first(of: layouts, in: data) { beacons.append(beacon.beacon) }
        return beacons
    }

    /// The identifiers as the library prints them (`Identifier.toString()`).
    public var identifierTexts: [String] { reading.identifiers.map(BeaconLayout.text(ofIdentifier:)) }

    /// Equal when the layout, its name and what it reads are (not the rest of the data heard).
    public static func == (lhs: LayoutBeacon, rhs: LayoutBeacon) -> Bool {
        lhs.name == rhs.name && lhs.layout == rhs.layout && lhs.reading == rhs.reading
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(reading)
    }
}

extension LayoutBeacon: BeaconFormat {
    public var formatName: StaticString { "layout" }
    public var displayName: StaticString { "layout" }

    /// `layout acme: ids=0x01020304,258 dataFields=4660,5 measuredPower=-70dBm company=0xFFFF`;
    /// JSON `"layout":"acme","ids":[...],"dataFields":[...],"measuredPower":-70,"companyId":"0xFFFF"`.
    /// (The layout's name is letters, digits, '-', '_' and '.': `BeaconLayout.named`.)
    public func writeFields(to writer: inout some BeaconFieldWriter & ~Copyable) {
        writer.field("layout", .text(name), text: .token(name + ":"), identifies: true)
        writer.field("ids", .strings(identifierTexts), text: .plain, identifies: true)
        writer.field("dataFields", .unsignedIntegers(reading.data), text: reading.data.isEmpty ? .omitted : .plain)
        if let power = reading.measuredPower {
            writer.integer("measuredPower", power, unit: "dBm")
        } else {
            writer.field("measuredPower", .null, text: .omitted)
        }
        if let company = reading.companyID {
            writer.field("companyId", .text(CompanyIdentifier(company).description), text: .named("company", unit: ""))
        }
    }

    public var measuredPowerAt1m: Int? { reading.measuredPower }

    /// The layout as given (`NAME=LAYOUT`), its identifiers, data, power and company ID.
    public var descriptionFields: [String: String] {
        var fields = ["type": Self.name, "layout": name == Self.name ? layout.text : "\(name)=\(layout.text)",
                      "ids": identifierTexts.joined(separator: " ")]
        if !reading.data.isEmpty { fields["data"] = reading.data.map(String.init).joined(separator: " ") }
        if let power = reading.measuredPower, !layout.fixedPower { fields["measured-power"] = "\(power)" }
        if let company = reading.companyID { fields["company-id"] = CompanyIdentifier(company).description }
        if advertisingData.bytes.count > AdvertisingData.legacyMaximumLength { fields["extended-pdu"] = "true" }
        return fields
    }
}

extension LayoutBeacon: DescribedBeaconFormat {
    public static let name = "layout"
    public static let descriptionKeys = ["layout", "ids", "data", "measured-power", "company-id"]
    public static let numberRanges = DescribedFields.measuredPowerRange
    public static let summary = "A beacon of an app's android-beacon-library layout: --layout [NAME=]LAYOUT, --id and --data "
        + "for each i: and d: term, --measured-power, --company-id."
    public static let selectingKey: String? = "layout"

    /// `layout` is the layout itself (`[NAME=]m:2-2=7a,...`) or the name of one declared
    /// (`BeaconFormats.register(layout:named:)`: a file's `layouts:`, the command's
    /// `--layout NAME=LAYOUT`); `ids` and `data` list values separated by spaces.
    public static func beacon(described fields: DescribedFields) throws(FormatDescriptionError) -> Beacon {
        guard let text = fields["layout"] else { throw FormatDescriptionError("missing --layout (an android-beacon-library layout)") }
        let named: (name: String, layout: BeaconLayout)
        do throws(BeaconLayout.Invalid) {
            if text.contains(":") {
                let (name, layout) = try BeaconLayout.named(text)
                named = (name ?? Self.name, layout)
            } else if let layout = BeaconFormats.layout(named: text) {
                named = (text, layout)
            } else {
                let known = BeaconFormats.layoutNames
                throw BeaconLayout.Invalid("no layout is declared as '\(text)' ("
                                           + (known.isEmpty ? "none is" : "declared: " + known.joined(separator: ", ")) + "): "
                                           + "give the layout itself, or declare it (a file's 'layouts:', --layout \(text)=LAYOUT)")
            }
        } catch {
            throw FormatDescriptionError("--layout \(text): \(error.message)")
        }
        let power = try fields.optionalInteger("measured-power", -128...127, unit: " dBm")
        let company = try fields.company("company-id")
        do throws(BeaconLayout.Invalid) {
            return .registered(RegisteredBeacon(
                try LayoutBeacon(name: named.name, layout: named.layout, identifiers: Self.list(fields["ids"]),
                                 data: Self.list(fields["data"]), measuredPower: power, companyID: company?.rawValue)))
        } catch {
            throw FormatDescriptionError("--layout \(text): \(error.message)")
        }
    }

    /// A description's list: values separated by spaces.
    private static func list(_ text: String?) -> [String] { text?.split(separator: " ").map(String.init) ?? [] }
}
