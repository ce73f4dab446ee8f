/* SPDX-License-Identifier: BSD-3-Clause */
/* A shared object for another architecture (built with -nostdlib). */
int foreign_value(void) { return 3; }
