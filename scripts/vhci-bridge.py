#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A kernel adapter made of a rootcanal controller: opens /dev/vhci (the kernel makes a new
hciN) and relays H4 packets between it and one connection to rootcanal's HCI port. Prints
`hciN` once the kernel has numbered it.

SIGUSR1 unplugs the adapter (closes /dev/vhci: the kernel removes hciN) while the connection,
and so the controller and its address, stays; SIGUSR2 plugs it back in (opens /dev/vhci
again: the same controller comes back under whatever number the kernel gives it then, printed
again). What the controller sends while unplugged is dropped. For testing that an emitter
naming an adapter by its address follows it to a new number.

    vhci-bridge.py HCI_PORT
"""
import os
import select
import signal
import socket
import sys

HEADER = {0x04: (2, 1, 1), 0x02: (4, 2, 2), 0x03: (3, 2, 1), 0x05: (4, 2, 2)}  # type: (header, len offset, width)


def take(buffer):
    """The first whole H4 packet in `buffer` and the rest, or (None, buffer)."""
    if not buffer:
        return None, buffer
    header, offset, width = HEADER[buffer[0]]
    if len(buffer) < 1 + header:
        return None, buffer
    length = int.from_bytes(buffer[1 + offset:1 + offset + width], "little")
    if buffer[0] == 0x05:
        length &= 0x3FFF
    end = 1 + header + length
    if len(buffer) < end:
        return None, buffer
    return buffer[:end], buffer[end:]


def plug():
    """Opens /dev/vhci as a primary controller; the descriptor and the kernel's index."""
    vhci = os.open("/dev/vhci", os.O_RDWR)
    os.write(vhci, bytes([0xFF, 0x00]))
    answer = os.read(vhci, 16)
    if len(answer) < 4 or answer[0] != 0xFF:
        sys.exit(f"vhci-bridge: /dev/vhci answered {answer.hex()}, not the new index")
    print(f"hci{answer[2] | answer[3] << 8}", flush=True)
    return vhci


def main():
    controller = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    controller.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    wanted = []
    signal.signal(signal.SIGUSR1, lambda *_: wanted.append("unplug"))
    signal.signal(signal.SIGUSR2, lambda *_: wanted.append("plug"))
    signal.signal(signal.SIGTERM, lambda *_: wanted.append("end"))
    vhci = plug()
    buffer = b""
    while True:
        while wanted:
            action = wanted.pop(0)
            if action == "end":
                return
            if action == "unplug" and vhci is not None:
                os.close(vhci)
                vhci = None
            elif action == "plug" and vhci is None:
                buffer = b""
                vhci = plug()
        watched = [controller] + ([vhci] if vhci is not None else [])
        try:
            ready, _, _ = select.select(watched, [], [], 0.1)
        except InterruptedError:
            continue
        if vhci is not None and vhci in ready:
            try:
                controller.sendall(os.read(vhci, 4096))
            except OSError:
                pass
        if controller in ready:
            chunk = controller.recv(65536)
            if not chunk:
                return
            buffer += chunk
            while True:
                packet, buffer = take(buffer)
                if packet is None:
                    break
                if vhci is not None:
                    os.write(vhci, packet)


if __name__ == "__main__":
    main()
