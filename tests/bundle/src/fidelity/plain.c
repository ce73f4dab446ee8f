/* SPDX-License-Identifier: BSD-3-Clause */
/* An extension module that calls the C library (so it NEEDs libc). */
#include <string.h>
unsigned long PyInit__m(const char* s) { return strlen(s); }
