/* SPDX-License-Identifier: BSD-3-Clause */
/* An Android executable: PT_INTERP /system/bin/linker64. */
unsigned long strlen(const char*);
void _start(void) {
  strlen("x");
  for (;;) {
  }
}
