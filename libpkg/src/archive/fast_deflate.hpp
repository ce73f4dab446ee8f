// SPDX-License-Identifier: BSD-3-Clause
// The deflater for nearly random runs: ISA-L's igzip at level 3.
//
// plan_chunk() (incompressible.hpp) marks pieces whose entropy is at least
// 7.9 bits/byte but which are not stored as `fast`: packed device code with
// some structure. On the CUDA libraries of bench/ (300 MB of such pieces in
// the 1.3 GB tree) libdeflate at level 1 spent 2.23 s of one core on them,
// about a fifth of a cold `wheel pack`'s CPU, for 285.47 MB; igzip at level
// 3 takes 0.60 s for 285.60 MB (+0.05 %), and its level 1 0.26 s for
// 287.91 MB (+0.9 %). Level 3 keeps the output no larger than Python's
// `wheel pack` (zlib level 6) overall; bench/RESULTS.md, session 23.
//
// igzip also streams: a sync flush ends its output on a byte boundary
// without a BFINAL block, so a fast run needs no make_non_final() scan.
//
// igzip dispatches on CPU features (assembly kernels on x86-64 with SSE4.2
// and on aarch64, portable C elsewhere), and the kernels need not emit the
// same bytes. fast_deflate_fingerprint() is what this process's igzip emits
// for a fixed probe; it is part of the chunk cache's key, so chunks cached
// by another kernel never mix into this one's output. Private to the archive
// layer.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "libpkg/base/integers.hpp"

namespace libpkg::archive {

// One igzip stream (80 KiB) with its level-3 buffer (340 KiB); reused run
// after run.
class FastDeflater {
 public:
  // igzip counts input in 32 bits: a run is fed in pieces of at most this
  // many bytes (a fixed size, so the output stays a function of the input).
  static constexpr u64 kMaxFeed = u64{1} << 30;

  // `max_feed`: the piece size; another one only in tests (the output is
  // still valid, but need not be byte-identical to kMaxFeed's).
  explicit FastDeflater(u64 max_feed = kMaxFeed);
  ~FastDeflater();
  FastDeflater(const FastDeflater&) = delete;
  FastDeflater& operator=(const FastDeflater&) = delete;

  // Appends `input` (not empty) deflated at igzip level 3 to `out`: ending
  // with a BFINAL block when `final`, else on a byte boundary after a sync
  // flush. Returns false, `out` as it was, when that would take `limit`
  // bytes or more (the caller then stores the run). Deterministic for a
  // given input, `final` and limit on a given igzip kernel.
  bool append(std::span<const u8> input, bool final, u64 limit,
              std::vector<u8>& out);

 private:
  struct State;
  std::unique_ptr<State> state_;
  u64 max_feed_;
};

// Idle FastDeflaters shared by a writer's workers (igzip streams are not
// thread-safe); lease one per run.
class FastDeflaterPool {
 public:
  class Lease {
   public:
    explicit Lease(FastDeflaterPool& pool);
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    FastDeflater& get() const { return *deflater_; }

   private:
    FastDeflaterPool& pool_;
    std::unique_ptr<FastDeflater> deflater_;
  };

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<FastDeflater>> idle_;
};

// ISA-L's version and the SHA-256 (hex) of what this process's igzip emits
// for a fixed nearly random 64 KiB probe: identifies the kernel (see
// above). Computed once per process; thread-safe, never throws.
const std::string& fast_deflate_fingerprint();

}  // namespace libpkg::archive
