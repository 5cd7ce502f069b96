// SPDX-License-Identifier: GPL-2.0-or-later
#include "climit.h"

#include <string.h>

int climit_decode_ibeacon(const uint8_t *data, size_t length, struct climit_ibeacon *out) {
    int found = -2;
    size_t i = 0;
    while (i < length) {
        size_t field = data[i];
        if (field == 0) break;                       // early end, padding follows
        if (i + 1 + field > length) return -1;       // runs past the end
        const uint8_t *s = data + i + 1;             // type, then field - 1 data bytes
        if (found == -2 && s[0] == 0xFF && field >= 4 && s[1] == 0x4C && s[2] == 0x00 && s[3] == 0x02) {
            if (field != 26 || s[4] != 0x15) return -3;
            memcpy(out->uuid, s + 5, 16);
            out->major = (uint16_t)(s[21] << 8 | s[22]);
            out->minor = (uint16_t)(s[23] << 8 | s[24]);
            out->measured_power = (int8_t)s[25];
            found = 0;
        }
        i += 1 + field;
    }
    return found;
}
