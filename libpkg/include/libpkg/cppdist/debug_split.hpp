// SPDX-License-Identifier: BSD-3-Clause
// Splitting debug info out of the libraries of a C++ distribution, as
// build_libtorch.sh did for libtorch_cpu.so (builder-scripts.md §2.3):
//   objcopy --only-keep-debug LIB DEBUG/LIB.dbg     (the keep-debug file)
//   objcopy --strip-debug --add-gnu-debuglink=DEBUG/LIB.dbg LIB LIB.tmp
// then LIB.tmp is renamed over LIB, so a hard-linked staging copy never
// writes through to the input (binutils' in-place mode would, to keep
// links). The .gnu_debuglink section holds the .dbg file name and the
// CRC-32 of the whole .dbg file (the GDB manual, "Debugging Information
// in Separate Files"); the CRC of the main library names the debug zip
// (debug-libtorch-...-<crc>.zip), whose members are debug/<LIB>.dbg.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/base/integers.hpp"
#include "libpkg/base/thread_pool_fwd.hpp"

namespace libpkg::cppdist {

/// Which libraries split_debug_info splits, with which objcopy, and the debug
/// files' suffix.
struct DebugSplitOptions {
  // File-name globs of the libraries (regular files under lib_dir, any
  // depth) to split; the first regular file matching the first glob is the
  // main library whose CRC names the debug zip.
  std::vector<std::string> libraries = {"libtorch_cpu.so"};
  std::string objcopy = "objcopy";
  std::string suffix = ".dbg";  // as build_libtorch.sh named them
};

/// One split library: the stripped library, its keep-debug file and that file's
/// CRC-32.
struct DebugFile {
  std::filesystem::path library;  // the stripped library
  std::filesystem::path debug;    // its keep-debug file
  u32 crc = 0;                    // CRC-32 of `debug` (= the debuglink's)
};

/// What split_debug_info produced, and the CRC of the main library that names
/// the debug zip.
struct DebugSplitResult {
  std::vector<DebugFile> files;
  std::optional<u32> main_crc;  // of the main library (see options)
};

/// CRC-32 of a file as .gnu_debuglink stores it (ISO-HDLC, zlib's crc32).
u32 file_crc32(const std::filesystem::path& file);

/// Splits the matching libraries of `lib_dir` into `debug_dir` (created).
/// Errc::not_found when objcopy is missing or no library matches the first
/// glob; Errc::format when objcopy fails or the stored CRC is not the .dbg
/// file's.
DebugSplitResult split_debug_info(const std::filesystem::path& lib_dir,
                                  const std::filesystem::path& debug_dir,
                                  const DebugSplitOptions& options = {});

/// Writes the debug zip (members debug/<name>.dbg), atomically; returns the
/// bytes written (the writer's count).
u64 write_debug_zip(const DebugSplitResult& split,
                    const std::filesystem::path& zip, int level = 6,
                    unsigned threads = 0,
                    std::optional<i64> timestamp = std::nullopt,
                    ThreadPool* pool = nullptr);

}  // namespace libpkg::cppdist
