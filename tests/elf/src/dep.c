/* SPDX-License-Identifier: BSD-3-Clause */
/* A second library: linked as a DT_NEEDED of the programs (to be removed) or
 * added with --add-needed (then found through dlsym on the dependency tree). */
int dep_value(void) { return 777; }
