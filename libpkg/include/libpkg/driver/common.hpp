// SPDX-License-Identifier: BSD-3-Clause
// What every driver (manywheel, libtorch, conda) shares: the options every
// job has (configuration, output directory, dry run, threads, whether and
// how to check the output) and the summary every job returns (the plan, the
// artifacts written, one check_binary report per artifact).
//
// The drivers replace shell scripts that each re-derived names, re-parsed
// the environment and ran their own ad-hoc smoke tests (builder-scripts.md
// §2, §3, §5); here a driver is one library call whose result is data: the
// thin mains print it, Python returns it, CI ingests its JSON.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/base/callbacks.hpp"
#include "libpkg/base/integers.hpp"
#include "libpkg/base/thread_pool_fwd.hpp"
#include "libpkg/check/check.hpp"
#include "libpkg/config/build.hpp"
#include "libpkg/config/cuda_table.hpp"

namespace libpkg::driver {

/// The options every driver shares: the configuration, where outputs go,
/// threads, timestamps, CUDA tables and the checks run on the artifacts.
struct CommonOptions {
  config::BuildConfig config;
  // Where the artifacts go (created if missing). Every artifact is written
  // to a temporary file there and renamed, so a failed job leaves nothing.
  std::filesystem::path out_dir = "dist";
  // Compute and describe the plan; write nothing, check nothing.
  bool dry_run = false;
  unsigned threads = 0;        // 0: one per core
  ThreadPool* pool = nullptr;  // the job's pool; null: own `threads`
  // Deflate level of zip outputs (wheels, libtorch zips).
  int zip_level = 6;
  // Member timestamps / conda index timestamp (SOURCE_DATE_EPOCH); unset:
  // the inputs' own times.
  std::optional<i64> timestamp;
  // Per-CUDA tables (nullptr = config::CudaTables::builtin()).
  const config::CudaTables* cuda_tables = nullptr;
  // Where the table's libraries are looked for, in order (empty: the
  // table's cuda_root, /usr/local/cuda). A stand-in root can complete a
  // toolkit that lacks some files (cuda::find_table_files).
  std::vector<std::filesystem::path> cuda_roots;
  // Run check_binary on every artifact written.
  bool run_checks = true;
  // Base options of those checks. The driver fills `expect` from the
  // configuration (check_expectation) and leaves the rest as given, so the
  // caller chooses runtime checks, the python for the import check, the
  // client program, census libraries, allowed externals...
  check::CheckOptions check;
  // Progress lines ("bundling 14 libraries", "packing 2.1 GB"), optional.
  LogFn log;
  // Byte progress of long steps (zip writing), optional.
  ProgressFn progress;
  // Chunk cache of the zip writers (wheels, libtorch zips): the CUDA
  // libraries a nightly grafts into every configuration are compressed
  // once (archive/chunk_cache.hpp). Null: none.
  std::shared_ptr<archive::ChunkCache> cache;
};

/// The tables in effect: options.cuda_tables or the built-in ones.
const config::CudaTables& cuda_tables(const CommonOptions& options);

/// What check_binary should expect of this configuration's artifacts:
/// the package type, the accelerator, the C++ ABI (Linux only) and, when
/// `bundles_cuda_table` (the job bundled the per-CUDA table's libraries:
/// not pypi-CUDA mode, not a without-deps variant), the table's libraries.
check::Expectation check_expectation(const config::BuildConfig& config,
                                     bool bundles_cuda_table);

/// One file a driver wrote, its role and size, and whether check_binary runs on
/// it.
struct Artifact {
  // Stable identifiers as in config::artifact_names: "wheel", "conda",
  // "conda-v2", "libtorch", "libtorch-latest", "debug-libtorch"...
  std::string role;
  std::filesystem::path path;
  u64 size = 0;
  // Whether check_binary runs on it (copies like -latest are not checked
  // twice; debug zips hold no loadable libraries).
  bool check = true;
};

/// What a driver job planned and did: plan lines, artifacts, check reports,
/// notes and wall time.
struct Summary {
  std::string driver;  // "manywheel", "libtorch", "conda"
  config::BuildConfig config;
  bool dry_run = false;
  // What the job does / did, one line each (inputs, bundled libraries,
  // renames, RPATH rules, tags, outputs). The dry run prints only this.
  std::vector<std::string> plan;
  // Driver-specific structured plan (e.g. the libpkg-repair-plan/1
  // document), embedded as-is in to_json; empty when there is none.
  std::string plan_json;
  std::vector<Artifact> artifacts;    // written (empty on a dry run)
  std::vector<check::Report> checks;  // one per checked artifact
  std::vector<std::string> notes;     // warnings worth showing
  double seconds = 0;                 // wall time of the whole job
  // The chunk cache's lookups during the job (unset: no cache was used).
  std::optional<archive::ChunkCache::Counters> cache;
  /// Edited members of a repaired wheel written by splicing: their deflate
  /// data re-used from the input wheel where the edit left it valid, the
  /// rest compressed (archives.md, "Splice").
  struct Splice {
    u64 members = 0;       // members spliced
    u64 reused_bytes = 0;  // input deflate bytes copied, not recompressed
  };
  // Unset: no wheel was repaired (libtorch, conda, a dry run).
  std::optional<Splice> splice;

  /// True when no check failed (and vacuously when none ran).
  bool passed() const;
  /// The summary for people: the plan, notes, artifacts and each check report
  /// (in full when `verbose`).
  std::string to_text(bool verbose = false) const;
  /// Sets `cache` from options.cache's counters (called when the job ends).
  void record_cache(const CommonOptions& options);
  /// Schema "libpkg-driver/1" (docs/drivers.md).
  std::string to_json(int indent = 2) const;
};

/// The runtime checks a configuration promises, passed to check_binary as
/// --require so that a promised check that would skip fails the run:
/// `import` for a wheel when an interpreter of the wheel's Python is found
/// (options.python when it is one, else python<X.Y> then python3 on PATH;
/// `python` is then the one chosen), `link` for libtorch. Nothing with
/// runtime checks off, nor a check left out by only/skip. `notes` says why
/// an expected promise can't be made (no matching interpreter).
struct Promises {
  std::vector<std::string> require;
  std::string python;
  std::vector<std::string> notes;
};
/// The Promises (above) for `config` under `options`; an import is also not
/// promised for a Linux wheel of another architecture than the host's. Runs the
/// candidate interpreters to learn their versions.
Promises promised_checks(const config::BuildConfig& config,
                         const check::CheckOptions& options);

/// Runs check::run on every artifact of `summary` marked `check`, with
/// options.check (plus promised_checks' --require) and `expect`, appending
/// the reports; the log gets one line per artifact. Does nothing when
/// !options.run_checks or on a dry run. Bad input found by the checks
/// (Errc::usage / format) propagates.
void check_artifacts(Summary& summary, const CommonOptions& options,
                     const check::Expectation& expect);

/// Adds an artifact written at `path`. `written`: the bytes the writer put
/// there, when it knows them; else the size is taken from the file, which
/// is 0 for an output written into /dev/null or a FIFO.
void add_artifact(Summary& summary, std::string role,
                  const std::filesystem::path& path, bool check = true,
                  std::optional<u64> written = std::nullopt);

/// Appends the non-empty lines of `text` (a plan's to_text) to `out`.
void add_lines(std::vector<std::string>& out, const std::string& text);

/// A stopwatch for Summary::seconds.
class Stopwatch {
 public:
  /// Starts timing now.
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  /// Seconds elapsed since construction.
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace libpkg::driver
