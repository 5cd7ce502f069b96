// SPDX-License-Identifier: GPL-2.0-or-later
// Everything is inline in include/clinux.h; SwiftPM needs a source file for a C target.
#include "clinux.h"
