// SPDX-License-Identifier: BSD-3-Clause
// Installed CUDA toolkits under a root (default /usr/local) and switching
// the `cuda` symlink between them.
//
// This replaces conda/switch_cuda_version.sh and the copies of it inlined in
// manywheel/build*.sh, check_binary.sh and smoke_test.sh
// (builder-scripts.md §5): those removed /usr/local/cuda with `rm -fr`
// before linking the new one (a window with no toolkit at all, and a real
// directory deleted without a word), only printed a message when the
// requested version was missing, and derived the version from `ls
// libcudart.so.*` or a fixed line of `nvcc --version`. Here detection
// tries the sources in order of reliability, switching is one rename(2) of
// a fresh symlink over the old one, and a missing version is an error
// naming what is installed.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/config/accelerator.hpp"

namespace libpkg::cuda {

/// A CUDA toolkit installed on disk, with the versions of CUDA, cuDNN and NCCL
/// found in it.
struct Toolkit {
  std::filesystem::path dir;  // root/cuda-X.Y (or root/cuda when real)
  std::string version;        // "12.4.1" or "12.4"
  int major = 0;
  int minor = 0;
  std::optional<std::string> cudnn;  // "9.1.0"
  std::optional<std::string> nccl;   // "2.21.5"
  // Where `version` came from: "version.json", "nvcc", "version.txt",
  // "libcudart.so.X.Y.Z" or, when nothing inside says, "directory name".
  std::string version_source;
  // root/cuda resolves here (also true for a real root/cuda directory).
  bool is_current = false;
};

/// Reads the versions of the toolkit installed in `dir`: CUDA from
/// version.json, then `bin/nvcc --version` ("release X.Y", 10 s limit), then
/// version.txt, then a lib64/libcudart.so.X.Y.Z (or targets/*/lib) name,
/// then a `cuda-X.Y` directory name; cuDNN from cudnn_version.h / cudnn.h
/// or libcudnn.so.X.Y.Z; NCCL from nccl.h or libnccl.so.X.Y.Z. A malformed
/// source is skipped. nullopt when no source gives a CUDA version.
/// `is_current` is left false (it depends on a root).
std::optional<Toolkit> probe_toolkit(const std::filesystem::path& dir);

/// Every `cuda-X.Y` directory under root, plus `cuda` when it is a real
/// directory rather than a symlink, sorted by version. Errc::not_found when
/// root does not exist, Errc::io when it cannot be read.
std::vector<Toolkit> list_toolkits(
    const std::filesystem::path& root = "/usr/local");

/// The toolkit root/cuda points to (or is). nullopt when root/cuda does not
/// exist; Errc::not_found when it is a dangling symlink or holds no
/// detectable toolkit.
std::optional<Toolkit> current_toolkit(
    const std::filesystem::path& root = "/usr/local");

/// root/cuda-X.Y for a CUDA accelerator. Errc::usage for cpu/rocm/xpu;
/// Errc::not_found naming the path and the versions installed under root.
Toolkit find_toolkit(const std::filesystem::path& root,
                     const config::Accelerator& version);

/// What switch_toolkit did with root/magma.
enum class MagmaSwitch {
  switched,  // root/magma now points to the new version's magma
  absent,    // the new version has no magma; root/magma left as it was
  skipped,   // not asked to (switch_magma = false)
};
/// "switched", "absent" or "skipped".
const char* magma_switch_name(MagmaSwitch m);

/// What switch_toolkit changed: the root/cuda link (and root/magma) before and
/// after.
struct SwitchResult {
  std::filesystem::path link;  // root/cuda
  // What the link held before (readlink text); nullopt if it didn't exist.
  std::optional<std::filesystem::path> old_target;
  std::filesystem::path new_target;  // "cuda-12.4", relative to root
  MagmaSwitch magma = MagmaSwitch::skipped;
  // What root/magma held before (also reported when `absent`: the link is
  // left alone and may point to another version's magma).
  std::optional<std::filesystem::path> magma_old_target;
  // "cuda-12.4/magma" (the manywheel images' layout) or "magma-cuda124".
  std::optional<std::filesystem::path> magma_new_target;
};

/// Points root/cuda at cuda-X.Y (a relative link, so the root can be moved
/// or bind-mounted) by renaming a new symlink over the old one: at every
/// moment root/cuda is either the old or the new link, never missing. With
/// switch_magma, root/magma likewise goes to cuda-X.Y/magma or
/// magma-cudaXY when one exists. Errc::not_found when cuda-X.Y is missing
/// (see find_toolkit); Errc::usage when root/cuda or root/magma is a real
/// directory or file (never deleted) — checked before anything changes;
/// Errc::io when the link cannot be made.
SwitchResult switch_toolkit(const std::filesystem::path& root,
                            const config::Accelerator& version,
                            bool switch_magma = true);

/// `export NAME=value` lines selecting this toolkit in a POSIX shell:
/// CUDA_HOME, PATH, LD_LIBRARY_PATH, CUDA_VERSION (X.Y) and, when known,
/// CUDNN_VERSION. Values are single-quoted where needed; the old PATH and
/// LD_LIBRARY_PATH are appended unexpanded.
std::vector<std::string> environment(const Toolkit& toolkit);

}  // namespace libpkg::cuda
