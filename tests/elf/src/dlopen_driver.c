/* SPDX-License-Identifier: BSD-3-Clause */
/* dlopen driver: dlopen(argv[1]) with RTLD_NOW, call fixture_value, then look
 * up each further argument in the library's dependency tree (dlsym on the
 * handle) and print what it returns, or "missing". Exit 1 if dlopen fails. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s LIBRARY [SYMBOL...]\n", argv[0]);
    return 2;
  }
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen failed: %s\n", dlerror());
    return 1;
  }
  int (*fv)(void) = (int (*)(void))dlsym(h, "fixture_value");
  if (!fv) {
    fprintf(stderr, "dlsym(fixture_value) failed: %s\n", dlerror());
    return 1;
  }
  printf("fixture_value=%d\n", fv());
  for (int i = 2; i < argc; ++i) {
    int (*fn)(void) = (int (*)(void))dlsym(h, argv[i]);
    if (fn)
      printf("%s=%d\n", argv[i], fn());
    else
      printf("%s=missing\n", argv[i]);
  }
  return 0;
}
