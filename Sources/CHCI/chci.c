// SPDX-License-Identifier: GPL-2.0-or-later

#include "chci.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/filter.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>

// The H4 type bytes the Swift side writes must be the ones the kernel socket expects.
_Static_assert(HCI_COMMAND_PKT == 0x01, "HCI command packet type");
_Static_assert(HCI_EVENT_PKT == 0x04, "HCI event packet type");
_Static_assert(HCI_CHANNEL_USER == CHCI_CHANNEL_USER && HCI_CHANNEL_CONTROL == CHCI_CHANNEL_CONTROL
               && HCI_CHANNEL_MONITOR == CHCI_CHANNEL_MONITOR, "HCI socket channels");

static int negative_errno(int fallback) { return -(errno ? errno : fallback); }

int chci_open_device(int dev_id) {
    errno = 0;
    int fd = hci_open_dev(dev_id);
    if (fd < 0) return negative_errno(EIO);
    struct hci_filter filter;
    hci_filter_clear(&filter);
    hci_filter_set_ptype(HCI_EVENT_PKT, &filter);
    // Commands other programs send on the adapter (the kernel among them): the emitter watches
    // for those that knock its advertising off. Without CAP_NET_RAW the kernel drops this bit.
    hci_filter_set_ptype(HCI_COMMAND_PKT, &filter);
    hci_filter_all_events(&filter);
    if (setsockopt(fd, SOL_HCI, HCI_FILTER, &filter, sizeof(filter)) < 0) {
        int saved = errno;
        hci_close_dev(fd);
        return -saved;
    }
    return fd;
}

int chci_close_device(int fd) {
    errno = 0;
    return hci_close_dev(fd) < 0 ? negative_errno(EIO) : 0;
}

int chci_first_up_device(void) {
    errno = 0;
    int id = hci_get_route(NULL);
    return id < 0 ? negative_errno(ENODEV) : id;
}

int chci_device_up(int dev_id) {
    int ctl = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    if (ctl < 0) return -errno;
    int result = 0;
    if (ioctl(ctl, HCIDEVUP, dev_id) < 0 && errno != EALREADY) result = -errno;
    close(ctl);
    return result;
}

int chci_device_is_up(int dev_id) {
    struct hci_dev_info info;
    errno = 0;
    if (hci_devinfo(dev_id, &info) < 0) return negative_errno(ENODEV);
    return hci_test_bit(HCI_UP, &info.flags) ? 1 : 0;
}

int chci_device_list(int *ids, int *up, int capacity) {
    if (capacity <= 0 || capacity > HCI_MAX_DEV) capacity = HCI_MAX_DEV;
    int ctl = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    if (ctl < 0) return -errno;
    struct hci_dev_list_req *list = calloc(1, sizeof(*list) + capacity * sizeof(struct hci_dev_req));
    if (!list) { close(ctl); return -ENOMEM; }
    list->dev_num = capacity;
    int result;
    if (ioctl(ctl, HCIGETDEVLIST, list) < 0) {
        result = -errno;
    } else {
        for (int i = 0; i < list->dev_num; i++) {
            ids[i] = list->dev_req[i].dev_id;
            up[i] = hci_test_bit(HCI_UP, &list->dev_req[i].dev_opt) ? 1 : 0;
        }
        result = list->dev_num;
    }
    free(list);
    close(ctl);
    return result;
}

int chci_open_channel(int dev_id, int channel) {
    int fd = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    if (fd < 0) return -errno;
    struct sockaddr_hci address;
    memset(&address, 0, sizeof(address));
    address.hci_family = AF_BLUETOOTH;
    address.hci_dev = dev_id < 0 ? HCI_DEV_NONE : (unsigned short)dev_id;
    address.hci_channel = (unsigned short)channel;
    if (bind(fd, (struct sockaddr *)&address, sizeof(address)) < 0) {
        int saved = errno;
        close(fd);
        return -saved;
    }
    return fd;
}

int chci_open_device_events(void) {
    int fd = chci_open_channel(-1, HCI_CHANNEL_RAW);
    if (fd < 0) return fd;
    struct hci_filter filter;
    hci_filter_clear(&filter);
    hci_filter_set_ptype(HCI_EVENT_PKT, &filter);
    hci_filter_set_event(EVT_STACK_INTERNAL, &filter);
    if (setsockopt(fd, SOL_HCI, HCI_FILTER, &filter, sizeof(filter)) < 0) {
        int saved = errno;
        close(fd);
        return -saved;
    }
    return fd;
}

int chci_device_exists(int dev_id) {
    struct hci_dev_info info;
    errno = 0;
    return hci_devinfo(dev_id, &info) < 0 ? negative_errno(ENODEV) : 1;
}

int chci_device_address(int dev_id, unsigned char address[6]) {
    struct hci_dev_info info;
    errno = 0;
    if (hci_devinfo(dev_id, &info) < 0) return negative_errno(ENODEV);
    memcpy(address, info.bdaddr.b, 6);
    return 0;
}

int chci_filter_monitor_control(int fd) {
    // The monitor header's opcode is little-endian at offset 0: keep 14 to 17 (management
    // socket opened, closed, command, event), drop the rest (every adapter's HCI traffic).
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 1),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 4),
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 14, 0, 2),
        BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 17, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, 0x40000),
        BPF_STMT(BPF_RET | BPF_K, 0),
    };
    struct sock_fprog program = { .len = sizeof(code) / sizeof(code[0]), .filter = code };
    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof(program)) < 0 ? -errno : 0;
}

const char *chci_company_name(int id) {
    const char *name = bt_compidtostr(id);
    if (name == NULL || strcmp(name, "not assigned") == 0 || strcmp(name, "internal use") == 0) return NULL;
    return name;
}
