// SPDX-License-Identifier: BSD-3-Clause
// accelerator: the package is the build it says it is. smoke_test.sh only
// grepped `conda list` for "cuda"; here CPU builds must carry and need no
// CUDA or ROCm library, CUDA builds must carry (or, pypi-CUDA style, need)
// the CUDA runtime of the expected major version and the expected
// libraries, and the version recorded in the package (torch/version.py's
// `cuda = '12.4'`) must be the expected one. The driver library
// (libcuda.so.1) is never allowed in a package: it belongs to the machine.
#include <fmt/format.h>

#include <regex>
#include <set>
#include <sstream>

#include "base/glob.hpp"
#include "check/package.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/config/cuda_table.hpp"

namespace fs = std::filesystem;

namespace libpkg::check::detail {
namespace {

std::string base_of(std::string_view file_name) {
  std::string name = unhashed_name(file_name);
  auto so = name.find(".so");
  return so == std::string::npos ? name : name.substr(0, so);
}

bool is_cuda_library(const std::string& base) {
  static const std::set<std::string> exact = {
      "libcudart",         "libcublas",      "libcublasLt",     "libcufft",
      "libcufftw",         "libcurand",      "libcusolver",     "libcusolverMg",
      "libcusparse",       "libcusparseLt",  "libnccl",         "libnvrtc",
      "libnvrtc-builtins", "libnvToolsExt",  "libnvJitLink",    "libcupti",
      "libcufile",         "libcufile_rdma", "libcuda",         "libnvidia-ml",
      "libcudss",          "libnvperf_host", "libnvperf_target"};
  return exact.count(base) || base.starts_with("libcudnn") ||
         base.starts_with("libnvshmem");
}

bool is_rocm_library(const std::string& base) {
  static const std::set<std::string> exact = {
      "libamdhip64",  "librocblas",   "libMIOpen",    "libhsa-runtime64",
      "librccl",      "libhipblas",   "libhipblaslt", "librocsolver",
      "libroctx64",   "libhipfft",    "libhiprand",   "librocrand",
      "libhipsparse", "librocsparse", "libhipsolver"};
  return exact.count(base) > 0;
}

// The major version in a soname: "libcudart.so.12" → 12, "libcudart.so.11.0"
// → 11.
std::optional<int> soname_major(std::string_view name) {
  auto so = name.find(".so.");
  if (so == std::string_view::npos) return std::nullopt;
  int value = 0;
  bool any = false;
  for (char c : name.substr(so + 4)) {
    if (c < '0' || c > '9') break;
    value = value * 10 + (c - '0');
    any = true;
  }
  return any ? std::optional<int>(value) : std::nullopt;
}

struct Found {
  std::string name;   // file name or soname
  std::string where;  // the member carrying it, or the member needing it
  bool bundled = false;
  // "CUDA library" / "needs libcudart.so.12", for messages.
  std::string what(const char* kind) const {
    return bundled ? fmt::format("{} library", kind)
                   : fmt::format("needs {}", name);
  }
};

struct AcceleratorLibraries {
  std::vector<Found> cuda, rocm;
  std::vector<Found> cudart;
};

AcceleratorLibraries find_libraries(const Package& pkg) {
  AcceleratorLibraries out;
  auto add = [&](const std::string& name, const std::string& where,
                 bool bundled) {
    const std::string base = base_of(name);
    if (is_cuda_library(base)) out.cuda.push_back({name, where, bundled});
    if (is_rocm_library(base)) out.rocm.push_back({name, where, bundled});
    if (base == "libcudart") out.cudart.push_back({name, where, bundled});
  };
  for (const auto& e : pkg.elfs)
    add(e.file.filename().string(), e.member, true);
  std::set<std::string> seen;
  for (const auto& need : pkg.needs) {
    if (need.member || !seen.insert(need.soname).second) continue;
    add(need.soname, need.requester, false);
  }
  return out;
}

// `cuda = '12.4'` / `cuda: Optional[str] = None` in a version.py.
struct RecordedVersion {
  std::string member;
  std::optional<std::string> cuda;  // nullopt: None
};

std::optional<RecordedVersion> recorded_cuda(const Package& pkg) {
  static const std::regex assignment(
      R"(^cuda\s*(?::[^=\n]*)?=\s*(?:['"]([^'"]*)['"]|None)\s*$)");
  for (const auto& member : pkg.files_named("version.py")) {
    std::istringstream in(read_regular_file(pkg.root / member));
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_match(line, m, assignment)) continue;
      RecordedVersion v{member, std::nullopt};
      if (m[1].matched) v.cuda = m[1].str();
      return v;
    }
  }
  return std::nullopt;
}

std::string names(const std::vector<Found>& list) {
  std::vector<std::string> out;
  for (const auto& f : list) out.push_back(f.name);
  return fmt::format("{}", fmt::join(out, ", "));
}

// Every unconditional library of the version's table is carried (by name
// or hashed name) or needed (pypi-CUDA wheels, without-deps zips).
void check_table_libraries(const Package& pkg, const CheckOptions& options,
                           const config::Accelerator& expected,
                           CheckResult& result) {
  const config::CudaTables& tables = options.cuda_tables
                                         ? *options.cuda_tables
                                         : config::CudaTables::builtin();
  const config::CudaTable& table = tables.find(expected);
  // The package's architecture picks the table's per-arch additions.
  std::string arch;
  for (const auto& e : pkg.elfs)
    if (!e.facts.arch.empty()) {
      arch = e.facts.arch;
      break;
    }
  for (const auto& lib : table.bundled_for(arch)) {
    if (!lib.condition.empty() || lib.optional) continue;
    // config::table_name_matches: the entry may be a link name whose
    // SONAME is longer (libnvrtc-builtins.so → libnvrtc-builtins.so.13.0).
    auto named = [&](const std::string& soname) {
      return config::table_name_matches(lib.soname, soname);
    };
    bool present = false;
    for (const auto& e : pkg.elfs) {
      auto name = e.file.filename().string();
      present = present || named(name) || named(unhashed_name(name)) ||
                (!e.soname.empty() && named(unhashed_name(e.soname)));
    }
    for (const auto& need : pkg.needs) present = present || named(need.soname);
    if (!present)
      result.problems.push_back(
          {"", fmt::format("{} (CUDA {} table) is neither carried nor needed",
                           lib.soname, table.version)});
  }
}

}  // namespace

std::optional<fs::path> cuda_runtime(const Package& pkg) {
  for (const auto& e : pkg.elfs)
    if (base_of(e.file.filename().string()) == "libcudart") return e.file;
  for (const auto& need : pkg.needs)
    if (base_of(need.soname) == "libcudart" && need.path) return need.path;
  return std::nullopt;
}

void check_accelerator(const Package& pkg, const CheckOptions& options,
                       CheckResult& result) {
  const AcceleratorLibraries libs = find_libraries(pkg);
  const auto recorded = recorded_cuda(pkg);
  const auto& expected = options.expect.accelerator;

  for (const auto& e : pkg.elfs)
    if (base_of(e.file.filename().string()) == "libcuda")
      result.problems.push_back(
          {e.member,
           "the CUDA driver library is bundled; it must come from "
           "the machine's driver"});

  if (!expected) {
    result.status = result.problems.empty() ? Status::skip : Status::fail;
    result.summary = fmt::format(
        "no accelerator expected (--cuda or DESIRED_CUDA); {}",
        libs.cuda.empty() && libs.rocm.empty()
            ? std::string("no CUDA or ROCm library carried or needed")
            : fmt::format("carries or needs {}",
                          names(libs.cuda.empty() ? libs.rocm : libs.cuda)));
    return;
  }
  using config::AcceleratorKind;
  switch (expected->kind) {
    case AcceleratorKind::cpu:
      for (const auto& f : libs.cuda)
        result.problems.push_back(
            {f.where, fmt::format("{} in a CPU build", f.what("CUDA"))});
      for (const auto& f : libs.rocm)
        result.problems.push_back(
            {f.where, fmt::format("{} in a CPU build", f.what("ROCm"))});
      if (recorded && recorded->cuda && !recorded->cuda->empty())
        result.problems.push_back(
            {recorded->member, fmt::format("records cuda = '{}' in a CPU build",
                                           *recorded->cuda)});
      result.summary = result.problems.empty()
                           ? "CPU build: no CUDA or ROCm library carried or "
                             "needed"
                           : "CPU build with CUDA or ROCm parts";
      break;
    case AcceleratorKind::cuda: {
      if (libs.cudart.empty())
        result.problems.push_back(
            {"", fmt::format("no CUDA runtime (libcudart) carried or needed "
                             "in a CUDA {} build",
                             expected->version())});
      for (const auto& f : libs.cudart) {
        auto major = soname_major(f.name);
        if (major && *major != expected->major)
          result.problems.push_back(
              {f.where, fmt::format("{} is CUDA {}, expected CUDA {}", f.name,
                                    *major, expected->version())});
      }
      if (recorded) {
        std::string want =
            fmt::format("{}.{}", expected->major, expected->minor);
        if (!recorded->cuda)
          result.problems.push_back(
              {recorded->member, fmt::format("records cuda = None, expected "
                                             "'{}'",
                                             want)});
        else if (*recorded->cuda != want &&
                 !recorded->cuda->starts_with(want + "."))
          result.problems.push_back(
              {recorded->member, fmt::format("records cuda = '{}', expected "
                                             "'{}'",
                                             *recorded->cuda, want)});
      }
      for (const auto& f : libs.rocm)
        result.problems.push_back(
            {f.where, fmt::format("{} in a CUDA build", f.what("ROCm"))});
      if (options.expect.table_libraries)
        check_table_libraries(pkg, options, *expected, result);
      result.summary =
          fmt::format("CUDA {} build: {}", expected->version(),
                      libs.cuda.empty() ? "no CUDA library" : names(libs.cuda));
      break;
    }
    case AcceleratorKind::rocm:
      if (std::none_of(libs.rocm.begin(), libs.rocm.end(), [](const Found& f) {
            return base_of(f.name) == "libamdhip64";
          }))
        result.problems.push_back(
            {"", fmt::format("no HIP runtime (libamdhip64) carried or needed "
                             "in a ROCm {} build",
                             expected->version())});
      for (const auto& f : libs.cuda)
        result.problems.push_back(
            {f.where, fmt::format("{} in a ROCm build", f.what("CUDA"))});
      result.summary =
          fmt::format("ROCm {} build: {}", expected->version(),
                      libs.rocm.empty() ? "no ROCm library" : names(libs.rocm));
      break;
    case AcceleratorKind::xpu:
      result.status = Status::skip;
      result.summary = "xpu builds: no library expectations known";
      return;
  }
  // Libraries the configuration expects (hash-insensitive file names or
  // needed sonames).
  for (const auto& glob : options.expect.libraries) {
    bool present = false;
    for (const auto* list : {&libs.cuda, &libs.rocm})
      for (const auto& f : *list)
        present = present || glob_match(glob, f.name) ||
                  glob_match(glob, unhashed_name(f.name));
    for (const auto& e : pkg.elfs) {
      auto name = e.file.filename().string();
      present = present || glob_match(glob, name) ||
                glob_match(glob, unhashed_name(name));
    }
    if (!present)
      result.problems.push_back(
          {"", fmt::format("expected library {} is neither carried nor "
                           "needed",
                           glob)});
  }
  result.status = result.problems.empty() ? Status::pass : Status::fail;
}

}  // namespace libpkg::check::detail
