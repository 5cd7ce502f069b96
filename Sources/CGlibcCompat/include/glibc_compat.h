// SPDX-License-Identifier: GPL-2.0-or-later
// The glibc 2.38 functions the Swift runtime's static libraries call, for a binary linked
// against an older glibc (Debian 12 / Raspberry Pi OS bookworm: 2.36). Debian's swiftlang builds
// Foundation and its peers against a newer glibc, whose headers turn strtol and sscanf into their
// C23 forms and offer strlcpy; a binary that names those needs libc6 >= 2.38. Linked into
// beacon-emit (the executable), these definitions take their place where the C library has none.
// Where it has them (glibc 2.38 or later) this target defines nothing and the C library's serve.
// Declared here for the tests only; nothing in Swift calls them.
#ifndef GLIBC_COMPAT_H
#define GLIBC_COMPAT_H

#include <stddef.h>

/// strtol, strtoll, strtoul and strtoull as C23 reads them: as C17, and besides, with base 0 or
/// 2, a "0b" or "0B" prefix before binary digits. errno ERANGE and the limits on overflow.
long __isoc23_strtol(const char *nptr, char **endptr, int base);
long long __isoc23_strtoll(const char *nptr, char **endptr, int base);
unsigned long __isoc23_strtoul(const char *nptr, char **endptr, int base);
unsigned long long __isoc23_strtoull(const char *nptr, char **endptr, int base);

/// sscanf as C23 reads it, by glibc's own vsscanf: the same but for "%b" and a "0b" prefix
/// under "%i", which the runtime's callers do not use.
int __isoc23_sscanf(const char *str, const char *format, ...);

/// BSD's strlcpy and strlcat: copy or append within `size` bytes, always terminated when size
/// allows; return the length of the string they tried to make (truncation when >= size).
size_t strlcpy(char *dst, const char *src, size_t size);
size_t strlcat(char *dst, const char *src, size_t size);

/// __isoc23_sscanf(text, "%d %15s", number, word), for the tests (Swift calls no C variadic).
static inline int glibc_compat_scan_number_and_word(const char *text, int *number, char *word) {
    return __isoc23_sscanf(text, "%d %15s", number, word);
}

/// 1 when this build defines the functions above itself, 0 when the C library provides them.
int glibc_compat_defines_functions(void);

#endif
