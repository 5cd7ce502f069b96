// SPDX-License-Identifier: GPL-2.0-or-later

import AdvertisementCodec

extension AdvertisingOptions {
    /// What an hcitool script sets up (`HcitoolScript`), as beacon-emit advertises it: the
    /// script's data and scan response byte for byte as one beacon, its interval (the minimum
    /// of its range), connectable for ADV_IND, and its random address where the parameters
    /// say to advertise from one. What the script does that beacon-emit does otherwise is said
    /// in `warnings`: a range of intervals, advertising left off at its end, commands that are
    /// not about advertising (not sent).
    /// - Throws: `AdvertisingOptionError` for a script that sets no data, or directed advertising.
    public static func from(hcitoolScript script: HcitoolScript, file: String)
        throws(AdvertisingOptionError) -> (options: AdvertisingOptions, warnings: [String]) {
        guard let data = script.data else {
            throw AdvertisingOptionError("\(file): no advertising data: the script has no `hcitool cmd 0x08 0x0008` line")
        }
        var warnings: [String] = script.warnings.map { "\(file): \($0)" }
        var options = AdvertisingOptions(beacons: [.custom(CustomAdvertisement(data: data, scanResponse: script.scanResponse))])
        if let parameters = script.parameters {
            options.intervalUnits = UInt32(parameters.intervalMin)
            if parameters.intervalMax != parameters.intervalMin {
                warnings.append("\(file): the parameters allow \(parameters.intervalMin)-\(parameters.intervalMax) x 0.625 ms; "
                                + "beacon-emit advertises at the minimum, \(parameters.intervalMin) x 0.625 ms")
            }
            switch parameters.advertisingType {
            case .connectableUndirected: options.connectable = true
            case .nonConnectableUndirected: break
            case .scannableUndirected where script.scanResponse == nil:
                warnings.append("\(file): ADV_SCAN_IND without a scan response: advertised non-connectable (ADV_NONCONN_IND)")
            case .scannableUndirected: break
            default:
                throw AdvertisingOptionError("\(file): \(parameters.advertisingType) (directed advertising) is not what "
                                             + "beacon-emit advertises: use ADV_NONCONN_IND (03), ADV_SCAN_IND (02) or ADV_IND (00)")
            }
            if parameters.ownAddressType == .randomDevice {
                guard let address = script.randomAddress else {
                    throw AdvertisingOptionError("\(file): the parameters advertise from a random address, but the script "
                                                 + "sets none (`hcitool cmd 0x08 0x0005 ...`)")
                }
                options.address = .random(address)
            }
        }
        if script.enabled == false {
            warnings.append("\(file): the script ends with advertising off; beacon-emit advertises what it set up all the same")
        }
        for other in script.others {
            warnings.append("\(file): line \(other.line): \(other.setting): not about advertising, not sent")
        }
        return (options, warnings)
    }
}
