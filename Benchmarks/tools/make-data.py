#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes the benchmark inputs, the same bytes for the same seed on every machine.

    make-data.py lines OUT COUNT    advertising-data hex, one per line, mixed formats:
                                    iBeacon 50 %, AltBeacon 10 %, Eddystone UID/URL/TLM 10 % each,
                                    advertising data without a beacon 5 %, invalid 5 %
    make-data.py btsnoop OUT COUNT  a btsnoop capture (datalink 1002, H4) holding COUNT LE
                                    advertising reports, one per event as controllers send them,
                                    with the commands and completes a scan starts with: a busy
                                    room of 1000 transmitters, each repeating its advertisement
                                    (telemetry frames change each time) at a varying RSSI
"""
import random
import struct
import sys

SEED = 20261122
EPOCH_DELTA_US = 0x00DCDDB30F2F8000  # microseconds from 0000-01-01 to 1970-01-01
START_US = 1_795_000_000_000_000 + EPOCH_DELTA_US


def ad(kind, data):
    return bytes([len(data) + 1, kind]) + data


def flags():
    return ad(0x01, b"\x06")


def ibeacon(rng):
    body = b"\x4c\x00\x02\x15" + rng.randbytes(16) + struct.pack(">HHb", rng.randrange(65536),
                                                                   rng.randrange(65536), rng.randrange(-80, -40))
    return flags() + ad(0xFF, body)


def altbeacon(rng):
    body = struct.pack("<H", rng.choice([0x0118, 0xFFFF, 0x004C])) + b"\xbe\xac" + rng.randbytes(20)
    return flags() + ad(0xFF, body + struct.pack("b", rng.randrange(-80, -40)) + bytes([rng.randrange(256)]))


def eddystone(rng, frame):
    if frame == "uid":
        payload = b"\x00" + struct.pack("b", rng.randrange(-30, 5)) + rng.randbytes(16) + b"\x00\x00"
    elif frame == "url":
        name = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randrange(3, 10)))
        payload = (b"\x10" + struct.pack("b", rng.randrange(-30, 5)) + bytes([rng.randrange(4)]) + name.encode()
                   + bytes([rng.randrange(7)]))
    else:
        payload = b"\x20\x00" + struct.pack(">HhII", rng.randrange(2000, 3300), rng.randrange(-2560, 10240),
                                            rng.randrange(1 << 32), rng.randrange(1 << 32))
    return flags() + ad(0x03, b"\xaa\xfe") + ad(0x16, b"\xaa\xfe" + payload)


def plain(rng):
    name = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(rng.randrange(4, 12)))
    return flags() + ad(0x09, name.encode()) + ad(0x0A, struct.pack("b", rng.randrange(-20, 5)))


def advertisement(rng):
    roll = rng.random()
    if roll < 0.50:
        return ibeacon(rng)
    if roll < 0.60:
        return altbeacon(rng)
    if roll < 0.70:
        return eddystone(rng, "uid")
    if roll < 0.80:
        return eddystone(rng, "url")
    if roll < 0.90:
        return eddystone(rng, "tlm")
    if roll < 0.95:
        return plain(rng)
    data = ibeacon(rng)
    return data[:rng.randrange(4, len(data) - 1)]  # a length byte that runs past the end


def lines(path, count):
    rng = random.Random(SEED)
    with open(path, "w") as out:
        for _ in range(count):
            out.write(advertisement(rng).hex().upper() + "\n")


def btsnoop(path, count):
    rng = random.Random(SEED + 1)
    stamp = START_US

    def record(packet, received):
        nonlocal stamp
        stamp += rng.randrange(200, 2000)
        flags_ = (1 if received else 0) | (2 if packet[0] in (1, 4) else 0)
        return struct.pack(">IIIIq", len(packet), len(packet), flags_, 0, stamp) + packet

    def command(opcode, parameters):
        return b"\x01" + struct.pack("<HB", opcode, len(parameters)) + parameters

    def complete(opcode):
        return b"\x04\x0e\x04\x01" + struct.pack("<H", opcode) + b"\x00"

    with open(path, "wb") as out:
        out.write(b"btsnoop\0" + struct.pack(">II", 1, 1002))
        for opcode, parameters in ((0x200B, b"\x00\x10\x00\x10\x00\x00\x00"), (0x200C, b"\x01\x00")):
            out.write(record(command(opcode, parameters), False))
            out.write(record(complete(opcode), True))
        def well_formed():
            data = advertisement(rng)
            while data[0] + 1 > len(data):  # keep the capture's reports well formed
                data = advertisement(rng)
            return data

        transmitters = [(rng.randbytes(6), rng.randrange(2), well_formed()) for _ in range(1000)]
        chunk = []
        for index in range(count):
            address, address_type, data = rng.choice(transmitters)
            if data.startswith(b"\x02\x01\x06\x03\x03\xaa\xfe") and data[11] == 0x20:  # telemetry moves on
                data = data[:14] + rng.randbytes(len(data) - 14)
            report = (b"\x01" + bytes([rng.choice([0, 3]), address_type]) + address
                      + bytes([len(data)]) + data + struct.pack("b", rng.randrange(-100, -30)))
            event = b"\x3e" + bytes([len(report) + 1]) + b"\x02" + report
            chunk.append(record(b"\x04" + event, True))
            if len(chunk) == 4096 or index == count - 1:
                out.write(b"".join(chunk))
                chunk = []


if __name__ == "__main__":
    mode, path, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    {"lines": lines, "btsnoop": btsnoop}[mode](path, count)
