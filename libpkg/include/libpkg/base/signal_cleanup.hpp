// SPDX-License-Identifier: BSD-3-Clause
// Removing scratch trees when the process is interrupted.
//
// A SIGINT or SIGTERM normally kills the process without unwinding, so the
// destructors that remove scratch directories never run and gigabytes of
// half-written trees stay behind. A path registered here is removed by a
// signal handler instead; the handler then restores the default action and
// re-raises the signal, so the process still dies "by SIGINT/SIGTERM" (a
// shell reports 130/143) and parents see the usual status.
//
// The handler is installed on the first registration, and only for a signal
// whose action is still the default: an embedding program (the Python
// module, where SIGINT raises KeyboardInterrupt) keeps its own handling.
//
// The handler may only use async-signal-safe calls: paths are kept in a
// fixed table of preallocated slots (no malloc), and the tree is removed with
// openat/getdents64/unlinkat on a static buffer. Worker threads may still be
// writing while it runs; it rescans until the tree is gone or a bounded
// number of passes is spent. A SIGKILL cannot be handled: ScratchDir makes
// such leftovers recognisable and removes them on the next run.
#pragma once

#include <filesystem>

namespace libpkg {

/// Registers `path` for removal on SIGINT/SIGTERM for the object's lifetime.
/// When the table is full (more than 64 live registrations) the path is not
/// registered; the stale-scratch sweep still covers it.
class SignalCleanup {
 public:
  SignalCleanup() = default;
  /// Registers `path` made absolute (see the class comment); a path that
  /// cannot be made absolute or is PATH_MAX long is not registered either.
  explicit SignalCleanup(const std::filesystem::path& path);
  ~SignalCleanup();
  /// Takes over `other`'s registration; `other` covers nothing after.
  SignalCleanup(SignalCleanup&& other) noexcept;
  /// Releases the held registration and takes over `other`'s.
  SignalCleanup& operator=(SignalCleanup&& other) noexcept;
  SignalCleanup(const SignalCleanup&) = delete;
  SignalCleanup& operator=(const SignalCleanup&) = delete;

  /// Stops covering the path (it was moved into place or removed).
  void release();

  /// Creates a path with `create` (e.g. mkdtemp) and registers it with no
  /// window in which a signal would leave it behind. SIGINT/SIGTERM are
  /// blocked in this thread meanwhile, and a slot is claimed before the path
  /// exists: a handler running on another thread (a worker's) waits for the
  /// path to be published instead of missing it.
  template <typename Create>
  static SignalCleanup create(Create&& create_path) {
    BlockSignals block;
    SignalCleanup cleanup;
    cleanup.slot_ = claim();
    cleanup.publish(create_path());  // a throw releases the claimed slot
    return cleanup;
  }

  /// Blocks SIGINT/SIGTERM in this thread for its lifetime (installing the
  /// handlers first). Threads started meanwhile inherit the block: a thread
  /// pool starts its workers so, and the handler then runs on the thread
  /// that sequences the work, not on a worker racing it.
  struct BlockSignals {
    BlockSignals();
    ~BlockSignals();
    BlockSignals(const BlockSignals&) = delete;
    BlockSignals& operator=(const BlockSignals&) = delete;
    unsigned long saved[16];  // sigset_t, without <signal.h> here
  };

 private:
  /// Claims a free slot for this thread (kFilling), installing the handlers
  /// first; -1 when the table is full.
  static int claim();
  /// Fills the claimed slot with `path` made absolute and activates it, or
  /// releases it when the path cannot be made absolute or is too long.
  void publish(const std::filesystem::path& path);

  int slot_ = -1;
};

/// Removes the tree at `path` with async-signal-safe calls only (exposed for
/// tests). Returns true when nothing is left.
bool remove_tree_signal_safe(const char* path);

}  // namespace libpkg
