/* SPDX-License-Identifier: BSD-3-Clause */
/* libinner.so: a library shipped inside the wheel (chainpkg/_private), found
 * through the extension's $ORIGIN-relative RUNPATH entry, which repair must
 * keep. */
int inner_value(void) { return 5; }
