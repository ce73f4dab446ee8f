/* SPDX-License-Identifier: BSD-3-Clause */
/* libghost.so: linked, then deleted, so the wheel needs a missing library. */
int ghost_value(void) { return 7; }
