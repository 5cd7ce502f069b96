// SPDX-License-Identifier: GPL-2.0-or-later

#include "chci.h"

#include <errno.h>
#include <stddef.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>

// The H4 type bytes the Swift side writes must be the ones the kernel socket expects.
_Static_assert(HCI_COMMAND_PKT == 0x01, "HCI command packet type");
_Static_assert(HCI_EVENT_PKT == 0x04, "HCI event packet type");

int chci_open_device(int dev_id) {
    errno = 0;
    int fd = hci_open_dev(dev_id);
    return fd < 0 ? -(errno ? errno : EIO) : fd;
}

int chci_close_device(int fd) {
    errno = 0;
    return hci_close_dev(fd) < 0 ? -(errno ? errno : EIO) : 0;
}

int chci_first_up_device(void) {
    errno = 0;
    int id = hci_get_route(NULL);
    return id < 0 ? -(errno ? errno : ENODEV) : id;
}
