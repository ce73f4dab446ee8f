/* SPDX-License-Identifier: BSD-3-Clause */
/* rusage_exec: run one command and report its wall time and peak RSS.
 *
 *   rusage_exec RESULT_FILE PROGRAM [ARGS...]
 *
 * Writes one line to RESULT_FILE:
 *   wall_ns maxrss_kib utime_us stime_us status
 * where `status` is the raw wait status. stdin/stdout/stderr are inherited.
 *
 * Why not fork from Python directly: Linux carries a process's peak RSS
 * across execve (the kernel folds the pre-exec mm's high-water mark into
 * signal->maxrss), so a child forked from a Python interpreter reports at
 * least the interpreter's resident anonymous memory (~8 MB here, and all of it
 * once the parent has grown), while the tool under test may need only 2 MB.
 * This launcher is small, so the child it forks starts from almost nothing and
 * ru_maxrss is the tool's own peak (/bin/true reports ~0.95 MiB, as under GNU
 * time).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: rusage_exec RESULT_FILE PROGRAM [ARGS...]\n");
    return 2;
  }
  long long t0 = now_ns();
  pid_t pid = fork();
  if (pid < 0) {
    perror("rusage_exec: fork");
    return 2;
  }
  if (pid == 0) {
    execv(argv[2], argv + 2);
    fprintf(stderr, "rusage_exec: cannot execute %s: %s\n", argv[2],
            strerror(errno));
    _exit(127);
  }
  int status = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  while (wait4(pid, &status, 0, &ru) < 0) {
    if (errno != EINTR) {
      perror("rusage_exec: wait4");
      return 2;
    }
  }
  long long t1 = now_ns();
  FILE* f = fopen(argv[1], "w");
  if (!f) {
    perror("rusage_exec: result file");
    return 2;
  }
  fprintf(f, "%lld %ld %lld %lld %d\n", t1 - t0, ru.ru_maxrss,
          (long long)ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec,
          (long long)ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec,
          status);
  if (fclose(f) != 0) return 2;
  return 0;
}
