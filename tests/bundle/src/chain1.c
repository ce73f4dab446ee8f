/* SPDX-License-Identifier: BSD-3-Clause */
/* libchain1.so: our own library, kept outside the wheel; needs libchain2. */
int chain2_value(void);
int chain1_value(void) { return 100 + chain2_value(); }
