/* SPDX-License-Identifier: BSD-3-Clause */
/* A stand-in for Android's libc.so (SONAME libc.so, symbols versioned
   LIBC like bionic's) to link the Android fixtures against. */
unsigned long strlen(const char* s) {
  unsigned long n = 0;
  while (s[n]) ++n;
  return n;
}
