#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# An application's advertisement registered through bluetoothd's D-Bus API
# (org.bluez.LEAdvertisingManager1), as a phone-companion or desktop app would: a broadcast
# with manufacturer data, held until SIGTERM, then unregistered. Used by scripts/vm-checks to
# put bluetoothd's own numbering of instances beside beacon-emit's.
#   dbus-advertise.py ADAPTER COMPANY_ID HEX
import signal
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

PATH = "/org/bluez/example/advertisement0"


class Advertisement(dbus.service.Object):
    def __init__(self, bus, company, payload):
        self.company = company
        self.payload = payload
        super().__init__(bus, PATH)

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {
            "Type": "broadcast",
            "ManufacturerData": dbus.Dictionary({dbus.UInt16(self.company): dbus.Array(self.payload, signature="y")},
                                                signature="qv"),
        }

    @dbus.service.method("org.bluez.LEAdvertisement1")
    def Release(self):
        pass


def main():
    adapter, company, payload = sys.argv[1], int(sys.argv[2], 0), bytes.fromhex(sys.argv[3])
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    manager = dbus.Interface(bus.get_object("org.bluez", "/org/bluez/" + adapter), "org.bluez.LEAdvertisingManager1")
    advertisement = Advertisement(bus, company, [dbus.Byte(b) for b in payload])
    loop = GLib.MainLoop()

    def registered():
        print("registered", flush=True)

    def failed(error):
        print("failed: %s" % error, flush=True)
        loop.quit()

    manager.RegisterAdvertisement(PATH, {}, reply_handler=registered, error_handler=failed)

    def stop(*_):
        try:
            manager.UnregisterAdvertisement(PATH)
            print("unregistered", flush=True)
        except dbus.DBusException as error:
            print("unregister failed: %s" % error, flush=True)
        loop.quit()

    GLib.unix_signal_add(GLib.PRIORITY_HIGH, signal.SIGTERM, stop)
    loop.run()


main()
