// SPDX-License-Identifier: GPL-2.0-or-later
//
// Thin shims over BlueZ's libbluetooth for kernel HCI sockets. They exist because
// libbluetooth reports failure through errno, which Swift cannot read reliably after the
// call returns: each shim returns -errno instead. Nothing here has protocol logic.

#ifndef CHCI_H
#define CHCI_H

/// Opens a raw HCI socket bound to adapter `dev_id` (hci_open_dev). Returns the file
/// descriptor, or -errno (-EAFNOSUPPORT when the kernel has no Bluetooth).
int chci_open_device(int dev_id);

/// Closes a descriptor from chci_open_device (hci_close_dev). Returns 0 or -errno.
int chci_close_device(int fd);

/// The first adapter that is up (hci_get_route(NULL)). Returns its id, or -errno.
int chci_first_up_device(void);

#endif
