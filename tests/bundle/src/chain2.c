/* SPDX-License-Identifier: BSD-3-Clause */
/* libchain2.so: the end of the chain ext -> libchain1 -> libchain2. */
int chain2_value(void) { return 23; }
