// SPDX-License-Identifier: BSD-3-Clause
// SignalCleanup: see signal_cleanup.hpp for why the handler looks like this.
#include "libpkg/base/signal_cleanup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <utility>

namespace libpkg {
namespace {

constexpr int kSlots = 64;
enum SlotState : int { kFree = 0, kFilling = 1, kActive = 2 };

struct Slot {
  std::atomic<int> state{kFree};
  // A forked child (before exec) must not remove our tree.
  std::atomic<pid_t> owner{0};
  // The thread filling the slot (kFilling): a handler running on another
  // thread waits for it, one running on this thread cannot. owner and
  // filler are 0 in a free slot (release() clears them), so a handler that
  // reads a slot just claimed, before claim() stored them, still waits.
  std::atomic<pid_t> filler{0};
  char path[PATH_MAX] = {};
};

Slot g_slots[kSlots];
std::mutex g_install_mutex;
bool g_installed = false;

// getdents64 records, walked by hand: readdir may allocate.
struct LinuxDirent64 {
  ino64_t d_ino;
  off64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];  // really NUL-terminated, d_reclen long
};

bool is_dot(const char* name) {
  return name[0] == '.' &&
         (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

int open_dir_at(int at, const char* name) {
  int fd = ::openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  // An extracted tree may hold read-only directories: make ours writable.
  if (fd >= 0) ::fchmod(fd, 0700);
  return fd;
}

pid_t current_tid() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

// A path being created is registered before it exists (the slot is
// kFilling), so a signal delivered to another thread in that window, whose
// handler must not miss the path, waits here until the creating thread
// (which has the signals blocked, so runs on) has published it. Bounded: a
// thread stopped for good must not hang the process's death.
void wait_while_filling(const Slot& slot, pid_t self, pid_t tid) {
  const struct timespec tick = {0, 1000000};  // 1 ms
  for (int waited = 0; waited < 5000; ++waited) {
    if (slot.state.load() != kFilling) return;
    // 0: claimed a moment ago, owner and filler not stored yet. The
    // claiming thread has the signals blocked, so it is never `tid`.
    const pid_t owner = slot.owner.load();
    if ((owner != self && owner != 0) || slot.filler.load() == tid) return;
    ::nanosleep(&tick, nullptr);
  }
}

void on_signal(int sig) {
  static std::atomic<bool> busy{false};
  const int saved_errno = errno;
  if (!busy.exchange(true)) {
    const pid_t self = ::getpid();
    const pid_t tid = current_tid();
    for (Slot& slot : g_slots) {
      wait_while_filling(slot, self, tid);
      if (slot.state.load() == kActive && slot.owner.load() == self)
        remove_tree_signal_safe(slot.path);
    }
  } else {
    // Another thread is cleaning up and will end the process.
    for (;;) ::pause();
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  sigset_t set;
  ::sigemptyset(&set);
  ::sigaddset(&set, sig);
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(sig);
  errno = saved_errno;
  ::_exit(128 + sig);
}

void install_handlers() {
  std::lock_guard lock(g_install_mutex);
  if (g_installed) return;
  g_installed = true;
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL)
      continue;  // the embedding program handles (or ignores) it
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    ::sigemptyset(&sa.sa_mask);
    ::sigaddset(&sa.sa_mask, SIGINT);
    ::sigaddset(&sa.sa_mask, SIGTERM);
    sa.sa_flags = SA_RESTART;
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace

bool remove_tree_signal_safe(const char* path) {
  if (::unlink(path) == 0 || errno == ENOENT) return true;
  if (errno != EISDIR && errno != EPERM) return false;
  int fd = open_dir_at(AT_FDCWD, path);
  if (fd < 0) return false;
  // Depth-first without recursion (a hostile tree may be thousands of levels
  // deep): descend into the first non-empty subdirectory, climb back through
  // ".." once a directory is scanned, and rescan the parent. Entries created
  // meanwhile by still-running threads are caught by the rescans; `budget`
  // and `reads` bound the work when something cannot be removed or another
  // thread keeps creating entries.
  alignas(8) static char buffer[32 * 1024];
  int depth = 0;
  for (int budget = 100000; budget > 0; --budget) {
    bool descended = false;
    ::lseek(fd, 0, SEEK_SET);
    for (int reads = 0; reads < 256; ++reads) {
      long n = ::syscall(SYS_getdents64, fd, buffer, sizeof buffer);
      if (n <= 0) break;
      for (long off = 0; off < n && !descended;) {
        auto* d = reinterpret_cast<LinuxDirent64*>(buffer + off);
        off += d->d_reclen;
        if (is_dot(d->d_name)) continue;
        if (::unlinkat(fd, d->d_name, 0) == 0) continue;
        if (errno != EISDIR) continue;
        if (::unlinkat(fd, d->d_name, AT_REMOVEDIR) == 0) continue;
        if (errno != ENOTEMPTY && errno != EEXIST && errno != EACCES) continue;
        int child = open_dir_at(fd, d->d_name);
        if (child < 0) continue;
        ::close(fd);
        fd = child;
        ++depth;
        descended = true;
      }
      if (descended) break;
    }
    if (descended) continue;
    if (depth == 0) {
      // Another thread may have created an entry since the scan: rescan.
      if (::rmdir(path) == 0 || errno == ENOENT) {
        ::close(fd);
        return true;
      }
      if (errno != ENOTEMPTY && errno != EEXIST) break;
      continue;
    }
    int up = ::openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ::close(fd);
    if (up < 0) return false;
    fd = up;
    --depth;
  }
  ::close(fd);
  return ::rmdir(path) == 0 || errno == ENOENT;
}

static_assert(sizeof(sigset_t) <= sizeof(unsigned long[16]));

SignalCleanup::BlockSignals::BlockSignals() {
  install_handlers();
  sigset_t set;
  ::sigemptyset(&set);
  ::sigaddset(&set, SIGINT);
  ::sigaddset(&set, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &set, reinterpret_cast<sigset_t*>(saved));
}

SignalCleanup::BlockSignals::~BlockSignals() {
  ::pthread_sigmask(SIG_SETMASK, reinterpret_cast<sigset_t*>(saved), nullptr);
}

int SignalCleanup::claim() {
  install_handlers();
  // A handler on this thread between the CAS and the stores below would
  // wait for a filler that cannot run: no handler runs here meanwhile.
  const BlockSignals blocked;
  for (int i = 0; i < kSlots; ++i) {
    Slot& slot = g_slots[i];
    int expected = kFree;
    if (!slot.state.compare_exchange_strong(expected, kFilling)) continue;
    slot.filler.store(current_tid());
    slot.owner.store(::getpid());
    return i;
  }
  return -1;
}

void SignalCleanup::publish(const std::filesystem::path& path) {
  if (slot_ < 0) return;
  std::error_code ec;
  const std::string absolute = std::filesystem::absolute(path, ec).string();
  if (ec || absolute.size() >= PATH_MAX) {
    release();
    return;
  }
  std::memcpy(g_slots[slot_].path, absolute.c_str(), absolute.size() + 1);
  g_slots[slot_].state.store(kActive);
}

SignalCleanup::SignalCleanup(const std::filesystem::path& path)
    : slot_(claim()) {
  publish(path);
}

SignalCleanup::~SignalCleanup() { release(); }

SignalCleanup::SignalCleanup(SignalCleanup&& other) noexcept
    : slot_(std::exchange(other.slot_, -1)) {}

SignalCleanup& SignalCleanup::operator=(SignalCleanup&& other) noexcept {
  if (this != &other) {
    release();
    slot_ = std::exchange(other.slot_, -1);
  }
  return *this;
}

void SignalCleanup::release() {
  if (slot_ < 0) return;
  // Cleared before the slot is free: the next claim() starts from 0.
  g_slots[slot_].filler.store(0);
  g_slots[slot_].owner.store(0);
  g_slots[slot_].state.store(kFree);
  slot_ = -1;
}

}  // namespace libpkg
