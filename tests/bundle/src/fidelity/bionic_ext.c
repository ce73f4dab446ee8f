/* SPDX-License-Identifier: BSD-3-Clause */
/* An Android extension: bionic's libc.so (versioned LIBC), liblog.so and,
   with -DWITH_CAMERA, libcamera2ndk.so (in the NDK from API 24). */
unsigned long strlen(const char*);
unsigned long PyInit__a(const char* s) { return strlen(s); }
