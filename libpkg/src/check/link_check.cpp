// SPDX-License-Identifier: BSD-3-Clause
// link and link-wrong-abi: check_binary.sh's step C — a C++ client
// compiled against an unpacked libtorch-style tree with the declared
// _GLIBCXX_USE_CXX11_ABI links and runs; compiled with the other value it
// must fail to link.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <variant>

#include "check/runtime_util.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/base/subprocess.hpp"

namespace fs = std::filesystem;

namespace libpkg::check::detail {
namespace {

// The built-in client for a libtorch tree. std::string crosses the library
// boundary both ways (Device's string constructor, Device::str(),
// Tensor::toString(), TORCH_WARN's message), so a client compiled with the
// other _GLIBCXX_USE_CXX11_ABI cannot link.
constexpr const char* kTorchClient = R"(#include <torch/torch.h>

#include <iostream>
#include <string>

int main() {
  torch::Device device(std::string("cpu"));
  torch::Tensor t = torch::ones({2, 3}, torch::TensorOptions().device(device));
  TORCH_WARN_ONCE("check_binary link test on ", device.str());
  float sum = t.sum().item<float>();
  std::string type = t.toString();
  std::cout << type << " sum " << sum << std::endl;
  return sum == 6.0f ? 0 : 1;
}
)";

const std::vector<std::string> kTorchLibraries = {
    "torch",         "torch_cpu", "torch_cuda", "torch_cuda_cpp",
    "torch_cuda_cu", "c10",       "c10_cuda"};

// lib/lib<name>.so files (or symlinks) → -l names.
std::vector<std::string> link_libraries(const CheckOptions& options,
                                        const fs::path& lib) {
  if (!options.link_libraries.empty()) return options.link_libraries;
  std::error_code ec;
  std::vector<std::string> out;
  for (const auto& name : kTorchLibraries)
    if (fs::exists(lib / ("lib" + name + ".so"), ec)) out.push_back(name);
  if (!out.empty()) return out;
  for (const auto& e : fs::directory_iterator(lib, ec)) {
    std::string name = e.path().filename().string();
    if (name.starts_with("lib") && name.ends_with(".so") && name.size() > 6 &&
        (e.is_regular_file(ec) || e.is_symlink(ec)))
      out.push_back(name.substr(3, name.size() - 6));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "client.cpp:(.text+0x3e): undefined reference to `f()'" → from
// "undefined reference" on; otherwise the first error line.
std::string first_error(const std::string& output) {
  for (const auto& line : lines_of(output))
    if (auto at = line.find("undefined reference"); at != std::string::npos)
      return line.substr(at);
  return compiler_errors(output, 1);
}

struct Build {
  std::vector<std::string> argv;
  RunResult result;
};

Build compile_client(const CheckOptions& options, const fs::path& source,
                     const fs::path& tree, std::optional<int> abi_macro,
                     const std::vector<std::string>& libs,
                     const fs::path& output, const fs::path& scratch) {
  std::error_code ec;
  Build b;
  b.argv = {options.cxx, source.string(), "-I" + (tree / "include").string()};
  fs::path api = tree / "include" / "torch" / "csrc" / "api" / "include";
  if (fs::is_directory(api, ec)) b.argv.push_back("-I" + api.string());
  if (abi_macro)
    b.argv.push_back(fmt::format("-D_GLIBCXX_USE_CXX11_ABI={}", *abi_macro));
  b.argv.push_back("-std=gnu++17");
  b.argv.push_back("-L" + (tree / "lib").string());
  b.argv.push_back("-Wl,-rpath," + (tree / "lib").string());
  b.argv.push_back("-Wl,--no-as-needed");
  for (const auto& l : libs) b.argv.push_back("-l" + l);
  b.argv.push_back("-o");
  b.argv.push_back(output.string());
  b.result = run_process(
      b.argv, run_options(options, options.timeout_seconds, scratch));
  return b;
}

const char* abi_name(int macro) { return macro ? "cxx11" : "pre-cxx11"; }

}  // namespace

void check_link(const Package& pkg, const CheckOptions& options,
                CheckResult& link, CheckResult& wrong_abi) {
  if (pkg.kind != ArtifactKind::libtorch_zip &&
      pkg.kind != ArtifactKind::libtorch_tree) {
    set_result(link, Status::skip, "not a C++ distribution (libtorch)");
    set_result(wrong_abi, Status::skip, "not a C++ distribution (libtorch)");
    return;
  }
  std::error_code ec;
  const fs::path tree = pkg.content_path();
  ScratchDir scratch = make_scratch(options, "link");

  fs::path source;
  if (options.client) {
    source = fs::absolute(*options.client);
    if (!fs::is_regular_file(source, ec))
      throw Error(Errc::not_found, source.string(),
                  "the client source does not exist");
  } else if (fs::exists(tree / "include" / "torch" / "torch.h", ec)) {
    source = scratch.path() / "torch_client.cpp";
    write_file_atomically(source, kTorchClient);
  } else {
    const char* why = "no client program for this package (pass --client)";
    set_result(link, Status::skip, why);
    set_result(wrong_abi, Status::skip, why);
    return;
  }
  const std::string client_name =
      options.client ? source.string() : "built-in torch client";

  std::optional<int> macro;
  if (auto abi = declared_abi(pkg, options)) {
    if (*abi == abi::CxxAbi::cxx11) macro = 1;
    if (*abi == abi::CxxAbi::pre_cxx11) macro = 0;
  }
  const std::vector<std::string> libs = link_libraries(options, tree / "lib");
  const std::string lib_flags = fmt::format("-l{}", fmt::join(libs, " -l"));
  const std::string abi_text =
      macro ? fmt::format("_GLIBCXX_USE_CXX11_ABI={} ({})", *macro,
                          abi_name(*macro))
            : std::string("the compiler's default ABI (none declared)");

  log_step(options,
           fmt::format("link: compiling {} with {}", client_name, abi_text));
  const fs::path exe = scratch.path() / "client";
  Build good =
      compile_client(options, source, tree, macro, libs, exe, scratch.path());
  link.notes.push_back(fmt::format("{}", fmt::join(good.argv, " ")));
  const char* not_run = "the link check did not pass";
  if (good.result.not_found) {
    set_result(
        link, Status::skip,
        fmt::format("no C++ compiler: {} not found (pass --cxx)", options.cxx));
    set_result(wrong_abi, Status::skip, link.summary);
    return;
  }
  if (!good.result.ok()) {
    set_result(link, Status::fail,
               fmt::format("the client does not build against {} with {} ({})",
                           tree.string(), abi_text,
                           good.result.describe(options.timeout_seconds)));
    link.problems.push_back(
        {source.string(), compiler_errors(good.result.output, 5)});
    set_result(wrong_abi, Status::skip, not_run);
    return;
  }
  RunResult ran = run_process(
      {exe.string()},
      run_options(options, options.timeout_seconds, scratch.path()));
  if (!ran.ok()) {
    set_result(link, Status::fail,
               fmt::format("the client builds with {} but does not run ({})",
                           abi_text, ran.describe(options.timeout_seconds)));
    link.problems.push_back({source.string(), tail(ran.output, 5)});
    set_result(wrong_abi, Status::skip, not_run);
    return;
  }
  set_result(link, Status::pass,
             fmt::format("{} compiles, links ({}) and runs against {} with {}",
                         client_name, lib_flags, tree.string(), abi_text));

  if (!macro) {
    set_result(wrong_abi, Status::skip, "the package declares no C++ ABI");
    return;
  }
  const int opposite = *macro ? 0 : 1;
  log_step(options, fmt::format("link-wrong-abi: compiling with "
                                "_GLIBCXX_USE_CXX11_ABI={}",
                                opposite));
  Build bad =
      compile_client(options, source, tree, opposite, libs,
                     scratch.path() / "client-wrong-abi", scratch.path());
  wrong_abi.notes.push_back(fmt::format("{}", fmt::join(bad.argv, " ")));
  if (bad.result.timed_out) {
    set_result(
        wrong_abi, Status::fail,
        fmt::format("building with _GLIBCXX_USE_CXX11_ABI={} {}", opposite,
                    bad.result.describe(options.timeout_seconds)));
    return;
  }
  if (bad.result.ok()) {
    set_result(
        wrong_abi, Status::fail,
        fmt::format("a client built with the opposite ABI "
                    "(_GLIBCXX_USE_CXX11_ABI={}) links: the ABI macro is not "
                    "honoured by this API",
                    opposite));
    wrong_abi.problems.push_back(
        {source.string(),
         fmt::format("linked with _GLIBCXX_USE_CXX11_ABI={} against {}",
                     opposite, lib_flags)});
    return;
  }
  set_result(
      wrong_abi, Status::pass,
      fmt::format("linking with _GLIBCXX_USE_CXX11_ABI={} fails as it must: {}",
                  opposite, first_error(bad.result.output)));
}

}  // namespace libpkg::check::detail
