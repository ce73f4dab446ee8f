/* SPDX-License-Identifier: BSD-3-Clause */
/* The fixture library: exports values the test programs print, so a run
 * proves the edited library was loaded and its code and data still work. */
#ifndef FIXTURE_VALUE
#define FIXTURE_VALUE 4242
#endif

static const char fixture_greeting[] = "fixture";

int fixture_value(void) { return FIXTURE_VALUE; }

const char* fixture_name(void) { return fixture_greeting; }
