# SPDX-License-Identifier: BSD-3-Clause
# Fixture libraries for the policy scripts (sourced): compiled at test time
# with the system g++ so their version requirements are what this
# toolchain produces.
#   libnew29.so  GLIBCXX_3.4.29 (basic_string::reserve(), new in GCC 11;
#                __throw_bad_array_new_length)
#   libnew30.so  GLIBCXX_3.4.30 (condition_variable::wait, GCC 12)
#   librandom.so GLIBC_2.25 (getrandom), C only
#   libplain.so  GLIBC_2.2.5 only
#   libtls.so    __cxa_thread_atexit_impl (GLIBC_2.18, blacklisted up to
#                manylinux_2_17) and a weak pthread_getattr_default_np
#                (GLIBC_2.34, also blacklisted: weak, so only its version
#                counts)
build_policy_fixtures() {
  cat >new29.cpp <<'CPP'
#include <new>
#include <string>
std::string grow(std::string s, const char* t) { s.replace(0, 1, t); s.reserve(); return s; }
void too_big() { std::__throw_bad_array_new_length(); }
CPP
  cat >new30.cpp <<'CPP'
#include <condition_variable>
#include <mutex>
std::mutex m;
std::condition_variable cv;
bool ready = false;
void wait_ready() { std::unique_lock<std::mutex> lock(m); cv.wait(lock, [] { return ready; }); }
CPP
  cat >random.c <<'C'
#include <sys/random.h>
long fill(void* buf, unsigned long n) { return getrandom(buf, n, 0); }
C
  cat >plain.c <<'C'
#include <string.h>
unsigned long len(const char* s) { return strlen(s); }
C
  cat >tls.c <<'C'
#define _GNU_SOURCE
#include <pthread.h>
extern int __cxa_thread_atexit_impl(void (*)(void*), void*, void*);
#pragma weak pthread_getattr_default_np
int reg(void (*f)(void*), void* o) { return __cxa_thread_atexit_impl(f, o, 0); }
int attr(pthread_attr_t* a) { return pthread_getattr_default_np ? pthread_getattr_default_np(a) : -1; }
C
  g++ -O2 -shared -fPIC -o libnew29.so new29.cpp &&
    g++ -O2 -shared -fPIC -o libnew30.so new30.cpp &&
    gcc -O2 -shared -fPIC -o librandom.so random.c &&
    gcc -O2 -shared -fPIC -o libplain.so plain.c &&
    gcc -O2 -shared -fPIC -o libtls.so tls.c
}

POLICY_FIXTURES="libnew29.so libnew30.so librandom.so libplain.so libtls.so"
