/* SPDX-License-Identifier: BSD-3-Clause */
/* Needs GLIBC_2.25 (getrandom), for the ceiling and blacklist policies;
   the weak reference to getentropy must not count for the blacklist. */
#include <stddef.h>
#include <sys/types.h>
extern ssize_t getrandom(void*, size_t, unsigned);
extern int getentropy(void*, size_t) __attribute__((weak));
long PyInit__rnd(void) {
  char b[4];
  return (long)getrandom(b, sizeof b, 0) + (getentropy ? 1 : 0);
}
