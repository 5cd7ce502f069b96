// SPDX-License-Identifier: GPL-2.0-or-later
//
// Thin shims over BlueZ's libbluetooth for kernel HCI sockets. They exist because the
// macros and structures involved (hci_filter_*, HCIDEVUP, hci_dev_info's flags) do not
// import into Swift, and because libbluetooth reports failure through errno, which Swift
// cannot read reliably after the call returns: each shim returns -errno instead.
// Nothing here has protocol logic.

#ifndef CHCI_H
#define CHCI_H

#include <stdint.h>

/// Opens a raw HCI socket bound to adapter `dev_id` (hci_open_dev) with a filter that
/// passes every event and the commands other programs send. Returns the file descriptor, or -errno (-EAFNOSUPPORT when the
/// kernel has no Bluetooth, -ENODEV when there is no such adapter).
int chci_open_device(int dev_id);

/// Closes a descriptor from chci_open_device (hci_close_dev). Returns 0 or -errno.
int chci_close_device(int fd);

/// The first adapter that is up (hci_get_route(NULL)). Returns its id, or -errno.
int chci_first_up_device(void);

/// Brings adapter `dev_id` up (ioctl HCIDEVUP). Already up is success. Returns 0 or -errno.
int chci_device_up(int dev_id);

/// Whether adapter `dev_id` is up (HCIGETDEVINFO): 1 up, 0 down, or -errno.
int chci_device_is_up(int dev_id);

/// Fills `ids` and `up` with up to `capacity` adapters (HCIGETDEVLIST). Returns the count,
/// or -errno.
int chci_device_list(int *ids, int *up, int capacity);

/// The channels of `chci_open_channel`, as the kernel numbers them (HCI_CHANNEL_*).
enum { CHCI_CHANNEL_USER = 1, CHCI_CHANNEL_MONITOR = 2, CHCI_CHANNEL_CONTROL = 3 };

/// Opens an HCI socket bound to `channel` of adapter `dev_id` (-1: no adapter, for the
/// management and monitor channels). CHCI_CHANNEL_CONTROL is the kernel's management interface (what
/// bluetoothd and btmgmt use); CHCI_CHANNEL_USER takes the adapter for this socket alone
/// (-EBUSY while it is up, -EUSERS when another program holds it). Returns the descriptor,
/// or -errno. The struct sockaddr_hci it binds does not import into Swift.
int chci_open_channel(int dev_id, int channel);

/// A raw HCI socket bound to no adapter whose filter keeps only the kernel's own device
/// events (EVT_STACK_INTERNAL: an adapter registered, unregistered, up, down). Without
/// CAP_NET_RAW the kernel's filter for unprivileged sockets drops them: nothing arrives.
/// Returns the descriptor, or -errno.
int chci_open_device_events(void);

/// On a monitor-channel socket, a socket filter that keeps only the messages about management
/// sockets (opened, closed, command, event), so the kernel drops every adapter's HCI traffic
/// before it is queued. Returns 0 or -errno.
int chci_filter_monitor_control(int fd);

/// 1 when adapter `dev_id` exists (up or down), or -errno (-ENODEV when it does not).
int chci_device_exists(int dev_id);

/// Copies adapter `dev_id`'s public address (HCIGETDEVINFO, least significant byte first, as
/// on the wire) into `address`. Returns 0, or -errno (-ENODEV when it does not exist).
int chci_device_address(int dev_id, unsigned char address[6]);

/// The company that Bluetooth SIG identifier `id` is assigned to, from libbluetooth's copy of
/// the SIG's list (bt_compidtostr), or NULL where the list has no name for it.
const char *chci_company_name(int id);

#endif
