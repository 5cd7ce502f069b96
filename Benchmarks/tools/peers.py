#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The Python decoders a user would otherwise reach for, each run over a file of advertising-data
hex lines the way `beacon-emit decode --json` runs: one JSON object per beacon on standard
output, one message per line that fails on standard error. Prints "decoded N failed M" to
standard error at the end.

    peers.py beacontools FILE      beacontools.parse_packet
    peers.py homeassistant FILE    bluetooth-data-tools (parse_advertisement_data_bytes) + ibeacon-ble
"""
import json
import sys


def beacontools_decoder():
    from beacontools import parse_packet
    from beacontools.packet_types import (EddystoneEncryptedTLMFrame, EddystoneTLMFrame, EddystoneUIDFrame,
                                          EddystoneURLFrame, IBeaconAdvertisement)

    def decode(data):
        frame = parse_packet(data)
        if isinstance(frame, IBeaconAdvertisement):
            return {"type": "ibeacon", "uuid": frame.uuid.upper(), "major": frame.major, "minor": frame.minor,
                    "measuredPower": frame.tx_power}
        if isinstance(frame, EddystoneUIDFrame):
            return {"type": "eddystone-uid", "namespace": frame.namespace, "instance": frame.instance,
                    "txPowerAt0m": frame.tx_power}
        if isinstance(frame, EddystoneURLFrame):
            return {"type": "eddystone-url", "url": frame.url, "txPowerAt0m": frame.tx_power}
        if isinstance(frame, (EddystoneTLMFrame, EddystoneEncryptedTLMFrame)):
            return {"type": "eddystone-tlm", "batteryMillivolts": frame.voltage, "temperature": frame.temperature,
                    "advertisingPduCount": frame.advertising_count, "uptimeSeconds": frame.seconds_since_boot}
        return None

    return decode


def homeassistant_decoder():
    from bluetooth_data_tools import parse_advertisement_data_bytes
    from home_assistant_bluetooth import BluetoothServiceInfo
    from ibeacon_ble import iBeaconParser

    import asyncio
    parser = iBeaconParser()
    asyncio.run(parser.async_setup())  # loads the OUI table the parser looks vendors up in

    def decode(data):
        name, uuids, service_data, manufacturer_data, _ = parse_advertisement_data_bytes(data)
        info = BluetoothServiceInfo(name=name or "", address="00:00:00:00:00:00", rssi=-127,
                                    manufacturer_data=manufacturer_data, service_data=service_data,
                                    service_uuids=uuids, source="local")
        beacon = parser.parse(info)
        if beacon is None:
            return None
        return {"type": "ibeacon", "uuid": str(beacon.uuid).upper(), "major": beacon.major, "minor": beacon.minor,
                "measuredPower": beacon.power}

    return decode


def main():
    decode = {"beacontools": beacontools_decoder, "homeassistant": homeassistant_decoder}[sys.argv[1]]()
    decoded = failed = 0
    out = sys.stdout
    err = sys.stderr
    with open(sys.argv[2]) as lines:
        for number, line in enumerate(lines, 1):
            try:
                found = decode(bytes.fromhex(line))
            except Exception as error:  # the peers raise anything on malformed input
                found = None
                err.write(f"line {number}: {error!r}\n")
            if found is None:
                failed += 1
                continue
            decoded += 1
            out.write(json.dumps(found, separators=(",", ":")) + "\n")
    err.write(f"decoded {decoded} failed {failed}\n")


if __name__ == "__main__":
    main()
