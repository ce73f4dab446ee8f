/* SPDX-License-Identifier: BSD-3-Clause */
int foo_value(void) { return 42; }
