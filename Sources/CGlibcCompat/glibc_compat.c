// SPDX-License-Identifier: GPL-2.0-or-later
// See include/glibc_compat.h: glibc 2.38's C23 conversions and strlcpy/strlcat, defined only when
// the C library linked against is older.
#include "glibc_compat.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GLIBC__) && !__GLIBC_PREREQ(2, 38)

int glibc_compat_defines_functions(void) { return 1; }

// Where a C23 binary number starts in `nptr` ("0b" or "0B" and a binary digit after optional
// space and sign), or NULL: the rest is read as C17 reads it. *negative says the sign.
static const char *binary_digits(const char *nptr, int base, int *negative) {
    if (base != 0 && base != 2) return NULL;
    const char *p = nptr;
    while (*p == ' ' || (*p >= '\t' && *p <= '\r')) p++;
    *negative = 0;
    if (*p == '+' || *p == '-') *negative = *p++ == '-';
    if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B') && (p[2] == '0' || p[2] == '1')) return p + 2;
    return NULL;
}

// The magnitude of a binary number at `digits` (no sign, no prefix), ULLONG_MAX and ERANGE when
// it does not fit.
static unsigned long long binary_magnitude(const char *digits, char **endptr) {
    unsigned long long value = 0;
    int overflow = 0;
    const char *p = digits;
    for (; *p == '0' || *p == '1'; p++) {
        if (value > ULLONG_MAX >> 1) overflow = 1;
        value = (value << 1) | (unsigned long long)(*p - '0');
    }
    if (endptr) *endptr = (char *)p;
    if (overflow) { errno = ERANGE; return ULLONG_MAX; }
    return value;
}

// A signed result within [min, max]: -magnitude or magnitude, clamped with ERANGE.
static long long signed_binary(unsigned long long magnitude, int negative, long long min, long long max) {
    if (negative) {
        if (magnitude > (unsigned long long)max + 1) { errno = ERANGE; return min; }
        return magnitude == (unsigned long long)max + 1 ? min : -(long long)magnitude;
    }
    if (magnitude > (unsigned long long)max) { errno = ERANGE; return max; }
    return (long long)magnitude;
}

// An unsigned result within [0, max]: as strtoul, a negative number is the magnitude negated.
static unsigned long long unsigned_binary(unsigned long long magnitude, int negative, unsigned long long max) {
    if (magnitude > max) { errno = ERANGE; return max; }
    return negative ? (max - magnitude + 1) & max : magnitude;
}

long __isoc23_strtol(const char *nptr, char **endptr, int base) {
    int negative;
    const char *digits = binary_digits(nptr, base, &negative);
    if (!digits) return strtol(nptr, endptr, base);
    return (long)signed_binary(binary_magnitude(digits, endptr), negative, LONG_MIN, LONG_MAX);
}

long long __isoc23_strtoll(const char *nptr, char **endptr, int base) {
    int negative;
    const char *digits = binary_digits(nptr, base, &negative);
    if (!digits) return strtoll(nptr, endptr, base);
    return signed_binary(binary_magnitude(digits, endptr), negative, LLONG_MIN, LLONG_MAX);
}

unsigned long __isoc23_strtoul(const char *nptr, char **endptr, int base) {
    int negative;
    const char *digits = binary_digits(nptr, base, &negative);
    if (!digits) return strtoul(nptr, endptr, base);
    return (unsigned long)unsigned_binary(binary_magnitude(digits, endptr), negative, ULONG_MAX);
}

unsigned long long __isoc23_strtoull(const char *nptr, char **endptr, int base) {
    int negative;
    const char *digits = binary_digits(nptr, base, &negative);
    if (!digits) return strtoull(nptr, endptr, base);
    return unsigned_binary(binary_magnitude(digits, endptr), negative, ULLONG_MAX);
}

int __isoc23_sscanf(const char *str, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int converted = vsscanf(str, format, arguments);
    va_end(arguments);
    return converted;
}

size_t strlcpy(char *dst, const char *src, size_t size) {
    size_t length = strlen(src);
    if (size > 0) {
        size_t copied = length < size - 1 ? length : size - 1;
        memcpy(dst, src, copied);
        dst[copied] = '\0';
    }
    return length;
}

size_t strlcat(char *dst, const char *src, size_t size) {
    size_t used = strnlen(dst, size);
    // No terminator within size: nothing appended, the length it would have had.
    if (used == size) return size + strlen(src);
    return used + strlcpy(dst + used, src, size - used);
}

#else

int glibc_compat_defines_functions(void) { return 0; }

#endif
