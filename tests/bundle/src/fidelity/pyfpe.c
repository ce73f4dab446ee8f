/* SPDX-License-Identifier: BSD-3-Clause */
/* References PyFPE_jbuf, which only --with-fpectl CPython builds export
   (PEP 513 forbids it in manylinux wheels). */
extern char PyFPE_jbuf[];
void* PyInit__fpe(void) { return PyFPE_jbuf; }
