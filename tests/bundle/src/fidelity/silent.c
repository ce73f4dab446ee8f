/* SPDX-License-Identifier: BSD-3-Clause */
/* An extension module that uses nothing from the C library: linked with
   -nostdlib it has no interpreter and no libc NEEDED, so only its file
   name (or the wheel's tag) can say which libc it is for. */
void* PyInit__s(void) { return 0; }
