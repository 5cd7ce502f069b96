#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Times beacon-emit's start against the shortest possible HCI sequence, on a controller at
127.0.0.1:PORT (each connection a new device on one radio, as rootcanal does).

For each run: a scanner (a second device, driven here) scans; then the emitter starts behind a
relay that timestamps every packet. Measured from just before the process is started:
  - advertising enabled: the Command Complete (status 0) of the advertising enable;
  - first report: the scanner's first report carrying the beacon's UUID.
The minimal client then does the same on a new connection with Reset and only the advertising
commands beacon-emit itself sent (copied from the relay's record, byte for byte).
Then the relay resets the controller under the running emitter (as a bridge, a bootloader or
another program would) and measures, from that reset's Command Complete (the controller usable
again): advertising enabled again, and the second device seeing the beacon again.

The same reset is then slipped under a scenario's beacon (`beacon-emit run`, a file with one
beacon advertised and a wait): the scenario's beacons are kept on the air by the same core and
supervisor as `advertise`'s, and this measures that they come back as fast.

    emitter-timing.py PORT BEACON_EMIT RUNS [SCENARIO_RUNS]      prints one JSON object
"""
import json
import os
import select
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid

HEADER = {1: (3, 2, 1), 2: (4, 2, 2), 3: (3, 2, 1), 4: (2, 1, 1)}  # type: (header, length offset, width)
ENABLE_OPCODES = {0x200A, 0x2039}  # LE Set (Extended) Advertising Enable; first parameter 1 = on
ADVERTISING_OPCODES = {0x2006, 0x2008, 0x200A, 0x2035, 0x2036, 0x2037, 0x2039, 0x203C}


def opcode(packet):
    """The opcode of an H4 command packet."""
    return struct.unpack_from("<H", packet, 1)[0]


def is_enable(packet):
    """Whether an H4 command packet switches advertising on."""
    return opcode(packet) in ENABLE_OPCODES and packet[4:5] == b"\x01"


def packets(sock, buffer=b""):
    """Yields H4 packets from a socket until it closes."""
    while True:
        while buffer:
            kind = buffer[0]
            header, offset, width = HEADER[kind]
            if len(buffer) < 1 + header:
                break
            total = 1 + header + int.from_bytes(buffer[1 + offset:1 + offset + width], "little")
            if len(buffer) < total:
                break
            yield buffer[:total]
            buffer = buffer[total:]
        chunk = sock.recv(65536)
        if not chunk:
            return
        # rootcanal writes an event in pieces; without an immediate ACK, Nagle on its side holds
        # the rest for the 40 ms of a delayed ACK. (beacon-emit's TCP transport does the same.)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
        buffer += chunk


def connect(port):
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def command(sock, stream, code, parameters=b""):
    """Sends a command and waits for its Command Complete; returns the return parameters."""
    sock.sendall(struct.pack("<BHB", 1, code, len(parameters)) + parameters)
    for packet in stream:
        if packet[:2] == b"\x04\x0e" and struct.unpack_from("<H", packet, 4)[0] == code:
            return packet[6:]
        if packet[:2] == b"\x04\x0f" and struct.unpack_from("<H", packet, 5)[0] == code and packet[3] != 0:
            raise RuntimeError(f"command {code:#06x} refused: status {packet[3]:#04x}")
    raise RuntimeError("controller closed the connection")


class Scanner(threading.Thread):
    """A second device scanning; records when a report carrying `needle` first arrives."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.sock = connect(port)
        self.stream = packets(self.sock)
        command(self.sock, self.stream, 0x0C03)  # Reset
        command(self.sock, self.stream, 0x0C01, b"\xff" * 8)  # Set Event Mask
        command(self.sock, self.stream, 0x2001, b"\xff" * 8)  # LE Set Event Mask
        command(self.sock, self.stream, 0x200B, b"\x00\x10\x00\x10\x00\x00\x00")  # passive, 10 ms
        command(self.sock, self.stream, 0x200C, b"\x01\x00")  # enable, duplicates kept
        self.needle = None
        self.seen = {}
        self.sightings = []  # times the current needle was seen, in order
        self.lock = threading.Lock()
        self.start()

    def run(self):
        try:
            for packet in self.stream:
                if packet[:2] == b"\x04\x3e":
                    now = time.monotonic()
                    with self.lock:
                        if self.needle and self.needle in packet:
                            self.seen.setdefault(self.needle, now)
                            self.sightings.append(now)
        except OSError:
            return

    def wait_after(self, moment, timeout=5):
        """The first sighting of the current needle after `moment`, waiting up to `timeout`."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                later = [t for t in self.sightings if t > moment]
            if later:
                return later[0]
            time.sleep(0.0005)
        return None

    def wait_for(self, needle, timeout=5):
        with self.lock:
            self.needle = needle
            self.sightings = []
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                if needle in self.seen:
                    return self.seen[needle]
            time.sleep(0.0005)
        return None


class Relay(threading.Thread):
    """Listens for one host, relays it to the controller, records commands and the enable's completion."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(1)
        self.port = self.server.getsockname()[1]
        self.upstream = port
        self.commands = []
        self.enabled_at = None
        self.reset_at = None      # Command Complete of the reset the relay slipped in
        self.reenabled_at = None  # the next advertising enable's Command Complete after it
        self.controller = None
        self.resetting = False
        self.start()

    def inject_reset(self):
        """Resets the controller as another program would; its answer goes on to the host."""
        self.resetting = True
        self.controller.sendall(b"\x01\x03\x0c\x00")

    def run(self):
        host, _ = self.server.accept()
        host.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        controller = connect(self.upstream)
        self.controller = controller
        pending_enable = set()

        def down():
            try:
                for packet in packets(host):
                    if packet[0] == 1:
                        self.commands.append(packet)
                        if is_enable(packet):
                            pending_enable.add(opcode(packet))
                    controller.sendall(packet)
            except OSError:
                pass
            controller.close()

        threading.Thread(target=down, daemon=True).start()
        try:
            for packet in packets(controller):
                if packet[:2] == b"\x04\x0e":
                    completed, = struct.unpack_from("<H", packet, 4)
                    now = time.monotonic()
                    if completed == 0x0C03 and self.resetting:
                        self.resetting = False
                        self.reset_at = now
                    elif completed in pending_enable and packet[6] == 0:
                        if self.enabled_at is None:
                            self.enabled_at = now
                        elif self.reset_at is not None and self.reenabled_at is None:
                            self.reenabled_at = now
                host.sendall(packet)
        except OSError:
            pass
        host.close()


def run_ours(port, binary, scanner, scenario=None):
    """`advertise` (or, with `scenario`, the path of a scenario file to write, `run`)."""
    beacon = uuid.uuid4()
    relay = Relay(port)
    start = time.monotonic()
    device = f"tcp:127.0.0.1:{relay.port}"
    if scenario:
        with open(scenario, "w") as file:
            file.write(f"beacons:\n  lobby: {{uuid: {str(beacon).upper()}, major: 1, minor: 2}}\n"
                       "steps:\n  - advertise: lobby\n  - wait: 6\n")
        arguments = [binary, "run", scenario, "-i", device]
    else:
        arguments = [binary, "-i", device, "--uuid", str(beacon).upper(), "--major", "1", "--minor", "2", "--duration", "6"]
    process = subprocess.Popen(arguments, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen = scanner.wait_for(beacon.bytes)
    while relay.enabled_at is None and time.monotonic() - start < 5:
        time.sleep(0.0005)
    time.sleep(0.3)
    relay.inject_reset()
    while (relay.reset_at is None or relay.reenabled_at is None) and time.monotonic() - start < 5:
        time.sleep(0.0005)
    # Reports already on their way when the controller was reset are not the beacon back.
    seen_again = scanner.wait_after(relay.reenabled_at or relay.reset_at or start, timeout=2)
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=10)
    if relay.enabled_at is None or seen is None:
        raise RuntimeError("beacon-emit did not enable advertising, or nothing was seen")
    if relay.reenabled_at is None or seen_again is None:
        raise RuntimeError("beacon-emit did not put the beacon back after a controller reset")
    flow = relay.commands
    first_advertising = next(i for i, c in enumerate(flow) if opcode(c) in ADVERTISING_OPCODES)
    enable_index = next(i for i, c in enumerate(flow) if is_enable(c))
    return {"enabled": relay.enabled_at - start, "seen": seen - start, "roundTrips": enable_index + 1,
            "backEnabled": relay.reenabled_at - relay.reset_at, "backSeen": seen_again - relay.reset_at,
            "commands": [opcode(c) for c in flow[:enable_index + 1]],
            "advertising": flow[first_advertising:enable_index + 1], "uuid": beacon.bytes}


def run_minimal(port, advertising, old_uuid, scanner):
    """Reset, then beacon-emit's own advertising commands (a fresh UUID swapped into the data)."""
    beacon = uuid.uuid4()
    start = time.monotonic()
    sock = connect(port)
    stream = packets(sock)
    command(sock, stream, 0x0C03)
    # A disable is left out: after Reset nothing advertises.
    needed = [p for p in advertising if opcode(p) not in ENABLE_OPCODES or is_enable(p)]
    for packet in needed:
        command(sock, stream, opcode(packet), packet[4:].replace(old_uuid, beacon.bytes))
    enabled = time.monotonic()
    seen = scanner.wait_for(beacon.bytes)
    sock.close()
    if seen is None:
        raise RuntimeError("the minimal client's beacon was not seen")
    return {"enabled": enabled - start, "seen": seen - start, "roundTrips": 1 + len(needed)}


def main():
    port, binary, runs = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    scenario_runs = int(sys.argv[4]) if len(sys.argv) > 4 else runs
    scanner = Scanner(port)
    ours, minimal, scenario = [], [], []
    path = os.path.join(tempfile.gettempdir(), f"emitter-timing-{os.getpid()}.yaml")
    try:
        for _ in range(scenario_runs):
            scenario.append(run_ours(port, binary, scanner, scenario=path))
            time.sleep(0.2)
    finally:
        if os.path.exists(path):
            os.remove(path)
    for _ in range(runs):
        result = run_ours(port, binary, scanner)
        ours.append(result)
        time.sleep(0.2)
        minimal.append(run_minimal(port, result["advertising"], result["uuid"], scanner))
        time.sleep(0.2)
    median = lambda rows, key: statistics.median(r[key] for r in rows) * 1000
    print(json.dumps({
        "oursEnabledMs": median(ours, "enabled"), "oursSeenMs": median(ours, "seen"),
        "minimalEnabledMs": median(minimal, "enabled"), "minimalSeenMs": median(minimal, "seen"),
        "oursRoundTrips": ours[0]["roundTrips"], "minimalRoundTrips": minimal[0]["roundTrips"],
        "backEnabledMs": median(ours, "backEnabled"), "backSeenMs": median(ours, "backSeen"),
        "backWorstSeenMs": max(r["backSeen"] for r in ours) * 1000,
        "scenarioBackEnabledMs": median(scenario, "backEnabled"), "scenarioBackSeenMs": median(scenario, "backSeen"),
        "scenarioBackWorstSeenMs": max(r["backSeen"] for r in scenario) * 1000, "scenarioRuns": scenario_runs,
        "oursCommands": [f"{c:#06x}" for c in ours[0]["commands"]], "runs": runs,
    }))


if __name__ == "__main__":
    main()
