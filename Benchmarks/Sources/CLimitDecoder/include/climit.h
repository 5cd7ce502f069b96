// SPDX-License-Identifier: GPL-2.0-or-later
// A hand-written C decoder of an iBeacon advertisement, as a practical limit for the Swift codec:
// the same checks (every AD structure fits, Apple's company ID, type 0x02, length 0x15), no
// allocation, no error detail.
#ifndef CLIMIT_H
#define CLIMIT_H

#include <stddef.h>
#include <stdint.h>

struct climit_ibeacon {
    uint8_t uuid[16];
    uint16_t major;
    uint16_t minor;
    int8_t measured_power;
};

/// Walks the AD structures of `data` and fills `out` from the first iBeacon.
/// Returns 0 on success, -1 for malformed advertising data, -2 when no iBeacon is present,
/// -3 for an iBeacon structure of the wrong length.
int climit_decode_ibeacon(const uint8_t *data, size_t length, struct climit_ibeacon *out);

#endif
