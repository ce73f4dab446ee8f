/* SPDX-License-Identifier: BSD-3-Clause */
/* libplugin.so.1: loaded with dlopen() by name only (no DT_NEEDED points at
 * it), so only --include can bundle it. It needs libchain2 in turn. */
int chain2_value(void);
int plugin_value(void) { return 1000 + chain2_value(); }
