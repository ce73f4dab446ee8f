// SPDX-License-Identifier: BSD-3-Clause
// Finding toolkits and reading their versions. Every source is optional and
// may be malformed (a hand-edited version.txt, a truncated header, an nvcc
// that hangs or needs a missing library): such a source is skipped and the
// next one tried, so listing never fails because of one odd toolkit.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <string_view>

#include "cuda/layout.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/subprocess.hpp"
#include "libpkg/cuda/toolkit.hpp"

namespace libpkg::cuda {

namespace fs = std::filesystem;

namespace {

constexpr unsigned kNvccTimeout = 10;
// Version files and headers are a few KB (nccl.h ~20 KB); anything much
// bigger is not what we look for.
constexpr std::uintmax_t kMaxTextFile = 1 << 20;

std::optional<std::string> read_text(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  auto size = fs::file_size(file, ec);
  if (ec || size > kMaxTextFile) return std::nullopt;
  // A file that is there but cannot be read is an error, not "no version".
  return read_regular_file(file);
}

// The numbers of "12.4" / "12.4.1" (at least `min_parts`, at most 4).
std::optional<std::vector<int>> parse_dotted(std::string_view s,
                                             std::size_t min_parts) {
  std::vector<int> parts;
  const char* p = s.data();
  const char* end = s.data() + s.size();
  while (true) {
    int value = 0;
    auto [next, ec] = std::from_chars(p, end, value);
    if (ec != std::errc() || next == p || value < 0) return std::nullopt;
    parts.push_back(value);
    p = next;
    if (p == end) break;
    if (*p != '.' || parts.size() == 4) return std::nullopt;
    ++p;
  }
  if (parts.size() < min_parts) return std::nullopt;
  return parts;
}

std::string join_dotted(const std::vector<int>& parts) {
  return fmt::format("{}", fmt::join(parts, "."));
}

// The digits-and-dots run at the start of `s` ("12.4, V12.4.131" → "12.4").
std::string_view leading_version(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && ((s[n] >= '0' && s[n] <= '9') || s[n] == '.')) ++n;
  while (n > 0 && s[n - 1] == '.') --n;
  return s.substr(0, n);
}

// `#define NAME 123` anywhere in a header.
std::optional<int> header_define(std::string_view text, std::string_view name) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    auto skip_space = [&line] {
      while (!line.empty() && (line[0] == ' ' || line[0] == '\t'))
        line.remove_prefix(1);
    };
    skip_space();
    if (!line.starts_with('#')) continue;
    line.remove_prefix(1);
    skip_space();
    if (!line.starts_with("define")) continue;
    line.remove_prefix(6);
    if (line.empty() || (line[0] != ' ' && line[0] != '\t')) continue;
    skip_space();
    if (!line.starts_with(name)) continue;
    line.remove_prefix(name.size());
    if (line.empty() || (line[0] != ' ' && line[0] != '\t')) continue;
    skip_space();
    int value = 0;
    auto [end, ec] =
        std::from_chars(line.data(), line.data() + line.size(), value);
    if (ec != std::errc() || end == line.data()) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

// "9.1.0" from MAJOR/MINOR/PATCH defines in the first header that has all
// three.
std::optional<std::string> version_from_headers(
    const std::vector<fs::path>& headers, std::string_view major,
    std::string_view minor, std::string_view patch) {
  for (const auto& h : headers) {
    auto text = read_text(h);
    if (!text) continue;
    auto a = header_define(*text, major);
    auto b = header_define(*text, minor);
    auto c = header_define(*text, patch);
    if (a && b && c) return fmt::format("{}.{}.{}", *a, *b, *c);
  }
  return std::nullopt;
}

// Directories holding the toolkit's libraries or headers: dir/<sub>... and
// dir/targets/<triple>/<target_sub> (the layout of the .run and deb
// installers, where lib64 and include are symlinks into targets/).
std::vector<fs::path> search_dirs(const fs::path& dir,
                                  std::initializer_list<const char*> subs,
                                  const char* target_sub) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const char* s : subs)
    if (fs::is_directory(dir / s, ec)) out.push_back(dir / s);
  std::vector<fs::path> targets;
  for (fs::directory_iterator it(dir / "targets", ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code ec2;
    if (fs::is_directory(it->path() / target_sub, ec2))
      targets.push_back(it->path() / target_sub);
  }
  std::sort(targets.begin(), targets.end());
  out.insert(out.end(), targets.begin(), targets.end());
  return out;
}

std::vector<fs::path> lib_dirs(const fs::path& dir) {
  return search_dirs(dir, {"lib64", "lib"}, "lib");
}

std::vector<fs::path> header_files(const fs::path& dir,
                                   std::initializer_list<const char*> names) {
  std::vector<fs::path> out;
  for (const auto& d : search_dirs(dir, {"include"}, "include"))
    for (const char* n : names) out.push_back(d / n);
  return out;
}

// The highest X.Y.Z of `<prefix>X.Y.Z` files (libcudart.so.12.4.127): the
// full version only, since the short names lie (CUDA 11.1 ships
// libcudart.so.11.0).
std::optional<std::vector<int>> version_from_libs(const fs::path& dir,
                                                  std::string_view prefix) {
  std::optional<std::vector<int>> best;
  for (const auto& d : lib_dirs(dir)) {
    std::error_code ec;
    for (fs::directory_iterator it(d, ec), end; !ec && it != end;
         it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (!name.starts_with(prefix)) continue;
      auto v = parse_dotted(std::string_view(name).substr(prefix.size()), 3);
      if (v && v->size() == 3 && (!best || *v > *best)) best = v;
    }
  }
  return best;
}

struct CudaVersion {
  std::vector<int> parts;
  std::string source;
};

// {"cuda": {"name": "CUDA SDK", "version": "12.4.1"}, "cuda_cudart": ...}
std::optional<CudaVersion> from_version_json(const fs::path& dir) {
  auto text = read_text(dir / "version.json");
  if (!text) return std::nullopt;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  auto cuda = j.find("cuda");
  if (cuda == j.end() || !cuda->is_object()) return std::nullopt;
  auto version = cuda->find("version");
  if (version == cuda->end() || !version->is_string()) return std::nullopt;
  auto v = parse_dotted(version->get<std::string>(), 2);
  if (!v) return std::nullopt;
  return CudaVersion{*v, "version.json"};
}

// "Cuda compilation tools, release 12.4, V12.4.131". The release (the
// toolkit's X.Y) rather than the V number, which is nvcc's own version.
// The final switch_cuda_version.sh took line 4 from whichever nvcc was on
// PATH; we run this toolkit's nvcc and search for the word.
std::optional<CudaVersion> from_nvcc(const fs::path& dir) {
  fs::path nvcc = dir / "bin" / "nvcc";
  std::error_code ec;
  if (!fs::is_regular_file(nvcc, ec)) return std::nullopt;
  RunOptions options;
  options.timeout_seconds = kNvccTimeout;
  RunResult r = run_process({nvcc.string(), "--version"}, options);
  if (!r.ok()) return std::nullopt;
  std::string_view out = r.output;
  std::size_t pos = out.find("release ");
  if (pos == std::string_view::npos) return std::nullopt;
  auto v = parse_dotted(leading_version(out.substr(pos + 8)), 2);
  if (!v) return std::nullopt;
  return CudaVersion{*v, "nvcc"};
}

// "CUDA Version 10.2.89" (toolkits up to 11.0).
std::optional<CudaVersion> from_version_txt(const fs::path& dir) {
  auto text = read_text(dir / "version.txt");
  if (!text) return std::nullopt;
  std::size_t pos = text->find("CUDA Version ");
  if (pos == std::string::npos) return std::nullopt;
  auto v = parse_dotted(
      leading_version(std::string_view(*text).substr(pos + 13)), 2);
  if (!v) return std::nullopt;
  return CudaVersion{*v, "version.txt"};
}

std::optional<CudaVersion> from_cudart(const fs::path& dir) {
  auto v = version_from_libs(dir, "libcudart.so.");
  if (!v) return std::nullopt;
  return CudaVersion{*v, "libcudart.so.X.Y.Z"};
}

std::optional<CudaVersion> from_dir_name(const fs::path& dir) {
  auto v = detail::parse_dir_name(dir.filename().string());
  if (!v) return std::nullopt;
  return CudaVersion{{v->first, v->second}, "directory name"};
}

bool same_dir(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

bool version_less(const Toolkit& a, const Toolkit& b) {
  auto va = parse_dotted(a.version, 2).value_or(std::vector<int>{});
  auto vb = parse_dotted(b.version, 2).value_or(std::vector<int>{});
  if (va != vb) return va < vb;
  return a.dir < b.dir;
}

}  // namespace

std::optional<Toolkit> probe_toolkit(const fs::path& dir) {
  std::optional<CudaVersion> v;
  for (auto source : {from_version_json, from_nvcc, from_version_txt,
                      from_cudart, from_dir_name}) {
    v = source(dir);
    if (v) break;
  }
  if (!v) return std::nullopt;
  Toolkit t;
  t.dir = dir;
  t.version = join_dotted(v->parts);
  t.major = v->parts[0];
  t.minor = v->parts[1];
  t.version_source = v->source;
  // cuDNN before 8 kept its version macros in cudnn.h.
  t.cudnn =
      version_from_headers(header_files(dir, {"cudnn_version.h", "cudnn.h"}),
                           "CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL");
  if (!t.cudnn)
    if (auto l = version_from_libs(dir, "libcudnn.so."))
      t.cudnn = join_dotted(*l);
  t.nccl = version_from_headers(header_files(dir, {"nccl.h"}), "NCCL_MAJOR",
                                "NCCL_MINOR", "NCCL_PATCH");
  if (!t.nccl)
    if (auto l = version_from_libs(dir, "libnccl.so."))
      t.nccl = join_dotted(*l);
  return t;
}

std::vector<Toolkit> list_toolkits(const fs::path& root) {
  std::error_code ec;
  auto st = fs::status(root, ec);
  if (!fs::exists(st))
    throw Error(Errc::not_found, root.string(), "no such directory");
  if (!fs::is_directory(st))
    throw Error(Errc::io, root.string(), "not a directory");
  fs::directory_iterator it(root, ec);
  if (ec)
    throw Error(Errc::io, root.string(),
                fmt::format("cannot list: {}", ec.message()));
  const fs::path link = root / "cuda";
  std::vector<Toolkit> out;
  for (fs::directory_iterator end; it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    std::string name = p.filename().string();
    std::error_code ec2;
    bool candidate = detail::parse_dir_name(name).has_value() ||
                     (name == "cuda" && !fs::is_symlink(p, ec2));
    if (!candidate || !fs::is_directory(p, ec2)) continue;
    auto t = probe_toolkit(p);
    if (!t) continue;
    t->is_current = same_dir(link, p);
    out.push_back(std::move(*t));
  }
  if (ec)
    throw Error(Errc::io, root.string(),
                fmt::format("cannot list: {}", ec.message()));
  std::sort(out.begin(), out.end(), version_less);
  return out;
}

std::optional<Toolkit> current_toolkit(const fs::path& root) {
  const fs::path link = root / "cuda";
  std::error_code ec;
  auto st = fs::symlink_status(link, ec);
  if (!fs::exists(st)) return std::nullopt;
  fs::path dir = link;
  if (fs::is_symlink(st)) {
    fs::path target = fs::read_symlink(link, ec);
    if (ec)
      throw Error(Errc::io, link.string(),
                  fmt::format("cannot read link: {}", ec.message()));
    dir = (target.is_absolute() ? target : root / target).lexically_normal();
    if (!fs::is_directory(dir, ec))
      throw Error(Errc::not_found, link.string(),
                  fmt::format("points to {}, which is not a directory",
                              target.string()));
  } else if (!fs::is_directory(st)) {
    throw Error(Errc::not_found, link.string(),
                "neither a directory nor a symlink");
  }
  auto t = probe_toolkit(dir);
  if (!t)
    throw Error(Errc::not_found, dir.string(),
                "no CUDA version found (looked for version.json, bin/nvcc, "
                "version.txt, libcudart.so.X.Y.Z and a cuda-X.Y name)");
  t->is_current = true;
  return t;
}

Toolkit find_toolkit(const fs::path& root, const config::Accelerator& version) {
  fs::path dir = root / detail::toolkit_dir_name(version);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) detail::throw_missing(root, version);
  // The directory name always gives a version, so this has a value.
  Toolkit t = probe_toolkit(dir).value();
  t.is_current = same_dir(root / "cuda", dir);
  return t;
}

}  // namespace libpkg::cuda
