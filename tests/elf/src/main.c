/* SPDX-License-Identifier: BSD-3-Clause */
/* Test program: prints the fixture library's value, then for each argument
 * looks the symbol up in the global scope (RTLD_DEFAULT) and prints what a
 * call returns, or "missing". That shows which libraries were really loaded
 * (after --add-needed / --remove-needed). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

int fixture_value(void);

int main(int argc, char** argv) {
  printf("fixture_value=%d\n", fixture_value());
  for (int i = 1; i < argc; ++i) {
    int (*fn)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, argv[i]);
    if (fn)
      printf("%s=%d\n", argv[i], fn());
    else
      printf("%s=missing\n", argv[i]);
  }
  return 0;
}
