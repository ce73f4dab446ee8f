/* SPDX-License-Identifier: BSD-3-Clause */
/* A foreign-architecture extension: libc and libm (allowed by every
   policy, absent from an x86_64 host) and, with -DWITH_FOO, libfoo.so.1,
   which only the target sysroot has. */
#include <math.h>
#include <string.h>
#ifdef WITH_FOO
int foo_value(void);
#endif
double PyInit__x(const char* s) {
  double v = pow((double)strlen(s), 1.5);
#ifdef WITH_FOO
  v += foo_value();
#endif
  return v;
}
