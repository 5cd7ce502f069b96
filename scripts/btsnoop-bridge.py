#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A capture bridge: accepts one H4 host connection on LISTEN_PORT, relays it to a controller
on 127.0.0.1:UPSTREAM_PORT, and writes every packet both ways to a btsnoop file (datalink 1002,
HCI UART), the format btmon and Android's snoop log use. Written independently of the Swift
code so the committed capture is not produced by the reader that tests replay it with.

    btsnoop-bridge.py LISTEN_PORT UPSTREAM_PORT OUT.btsnoop
"""
import socket
import struct
import sys
import threading
import time

EPOCH_DELTA_US = 0x00DCDDB30F2F8000  # microseconds from 0000-01-01 to 1970-01-01
HEADER_LENGTH = {1: (3, 2, 1), 2: (4, 2, 2), 3: (3, 2, 1), 4: (2, 1, 1)}  # type: (header, len offset, len width)


def packets(stream):
    buffer = b""
    while True:
        chunk = stream.recv(4096)
        if not chunk:
            return
        buffer += chunk
        while buffer:
            kind = buffer[0]
            header, offset, width = HEADER_LENGTH[kind]
            if len(buffer) < 1 + header:
                break
            length = int.from_bytes(buffer[1 + offset:1 + offset + width], "little")
            total = 1 + header + length
            if len(buffer) < total:
                break
            yield buffer[:total]
            buffer = buffer[total:]


def main():
    listen_port, upstream_port, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    out = open(path, "wb")
    out.write(b"btsnoop\0" + struct.pack(">II", 1, 1002))
    lock = threading.Lock()

    def record(packet, received):
        flags = (1 if received else 0) | (2 if packet[0] in (1, 4) else 0)
        stamp = int(time.time() * 1_000_000) + EPOCH_DELTA_US
        with lock:
            out.write(struct.pack(">IIIIq", len(packet), len(packet), flags, 0, stamp) + packet)
            out.flush()

    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", listen_port))
    server.listen(1)
    host, _ = server.accept()
    controller = socket.create_connection(("127.0.0.1", upstream_port))
    for s in (host, controller):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def relay(source, target, received):
        try:
            for packet in packets(source):
                record(packet, received)
                target.sendall(packet)
        finally:
            for s in (source, target):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    threads = [threading.Thread(target=relay, args=(host, controller, False)),
               threading.Thread(target=relay, args=(controller, host, True))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.close()


if __name__ == "__main__":
    main()
