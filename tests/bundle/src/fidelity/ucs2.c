/* SPDX-License-Identifier: BSD-3-Clause */
/* Imports a PyUnicodeUCS2_* function, which only narrow-unicode (UCS2)
   CPython 2 builds export. */
extern void* PyUnicodeUCS2_FromString(const char*);
void* PyInit__ucs2(void) { return PyUnicodeUCS2_FromString("x"); }
