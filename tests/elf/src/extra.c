/* SPDX-License-Identifier: BSD-3-Clause */
/* A library for --add-needed: nothing references it, so only an added
 * DT_NEEDED makes ld.so load it (the test program then finds extra_value). */
int extra_value(void) { return 555; }
