// SPDX-License-Identifier: BSD-3-Clause
// pkgtool subcommands. Each is a thin function over one library call: parse
// its arguments, call libpkg, print. Errors propagate as libpkg::Error and
// are printed by main() as `error: FILE: message` with exit status 2.
#pragma once

#include <string>
#include <vector>

#include "libpkg/deps/dyld.hpp"

namespace libpkg::bundle {
struct RepairResult;
}
namespace libpkg::archive {
class ChunkCache;
}

namespace pkgtool {

// `pkgtool inspect FILE... [--json]`
int run_inspect(const std::vector<std::string>& args);
// `pkgtool symbols FILE... [--demangle] [--json]` (nm -D format)
int run_symbols(const std::vector<std::string>& args);
// `pkgtool symbols` on Mach-O files (macho_symbols_cmd.cpp): `nm -gU`.
struct MachoSymbolsOptions {
  bool json = false;
  bool demangle = false;
  std::string arch;  // only this slice (--arch)
  // nm -g lists both; --defined-only (nm -gU), --undefined-only (nm -u).
  bool defined = true;
  bool undefined = true;
};
int run_macho_symbols(const std::vector<std::string>& files,
                      const MachoSymbolsOptions& options);
// `pkgtool patchelf ...` and the `patchelf` entry point (patchelf's syntax);
// `program` names the command in errors.
int run_patchelf(const std::vector<std::string>& args);
int run_patchelf_entry(const std::vector<std::string>& args);
int run_patchelf_as(const std::vector<std::string>& args,
                    const std::string& program);
// `pkgtool zip list|test|extract ...`: inspect and safely unpack any zip.
int run_zip(const std::vector<std::string>& args);
// `pkgtool wheel unpack|pack|verify|tags ...`
int run_wheel(const std::vector<std::string>& args);
// An option's integer value 0..max (wheel_cmd.cpp); a usage error otherwise.
unsigned parse_unsigned(const std::string& option, const std::string& text,
                        unsigned max);
// `pkgtool wheel fuse A.whl B.whl -w DIR ...` (wheel_fuse_cmd.cpp).
int run_wheel_fuse(const std::vector<std::string>& args);
// `pkgtool conda pack|extract|transmute|verify ...`
int run_conda(const std::vector<std::string>& args);
// `pkgtool cache stats|prune|clear`: the zip writers' chunk cache.
int run_cache(const std::vector<std::string>& args);
// `pkgtool libtorch pack|name ...`: C++ zip distributions.
int run_libtorch(const std::vector<std::string>& args);
// `pkgtool ldd FILE... [--json] [--root DIR] [--ldpaths DIRS]
// [--lib-path DIR]... [--musl]`: shared-library closure with ld.so's rules.
int run_ldd(const std::vector<std::string>& args);
// `pkgtool ldd` on Mach-O files (macho_ldd_cmd.cpp).
int run_macho_ldd(const std::vector<std::string>& files,
                  const libpkg::deps::DyldConfig& config, bool json);
// `pkgtool show WHEEL [--json]`: the platform tag a wheel satisfies, and why.
int run_show(const std::vector<std::string>& args);
// `pkgtool repair WHEEL -w DIR ...`: bundle external libraries and retag.
int run_repair(const std::vector<std::string>& args);
// `pkgtool repair` on macOS wheels (repair_macos_cmd.cpp): taken when
// is_macos_repair(args) (a wheel argument with a macosx_* tag).
bool is_macos_repair(const std::vector<std::string>& args);
int run_repair_macos(const std::vector<std::string>& args);
// Both repairs' -L/--lib-sdir (auditwheel's and delocate's spelling): one
// directory name, e.g. ".libs" or ".dylibs". A value with a '/', or naming
// an existing directory, is the old `pkgtool repair -L DIR` (--lib-path)
// and is refused with a usage error saying so (repair_cmd.cpp).
void check_lib_sdir(const std::string& value);
// What both repairs print after writing: the plan's JSON with a `result`
// object, or the notes and a summary line.
void print_repair_outcome(const std::string& plan_json,
                          const std::vector<std::string>& notes,
                          std::size_t grafts, std::size_t edits,
                          const libpkg::bundle::RepairResult& r, bool json,
                          const libpkg::archive::ChunkCache* cache = nullptr);
// `pkgtool census FILE... [--json]`: C++ ABI (cxx11 vs pre-cxx11) census.
int run_census(const std::vector<std::string>& args);
// check ARTIFACT [options]: check_binary (see checks/check_binary).
int run_check(const std::vector<std::string>& args);
// `pkgtool matrix` / `pkgtool config`: the build matrix and one configuration.
int run_matrix(const std::vector<std::string>& args);
int run_config(const std::vector<std::string>& args);
// `pkgtool workflow [filters] [-o FILE] | --check FILE`: the nightly as a
// GitHub Actions workflow from the matrix (workflow_cmd.cpp).
int run_workflow(const std::vector<std::string>& args);
// `pkgtool cuda list|switch X.Y|env [X.Y]`: installed toolkits, switching.
int run_cuda(const std::vector<std::string>& args);

// `pkgtool stats ingest|query ...`: the nightly stats store (stats.db).
int run_stats(const std::vector<std::string>& args);
// `pkgtool diff OLD NEW [--json]`: two wheels, conda packages or zips.
int run_diff(const std::vector<std::string>& args);

// `pkgtool macho SUBCOMMAND ...`: Mach-O tools. Each subcommand lives in its
// own file (macho_cmd.cpp: `edit`; macho_sign_cmd.cpp: `sign`, `verify`) and
// registers itself at static initialisation with a file-scope
//   const MachoSubcommand kSign("sign", "FILE...  ...", run_sign);
// so a new file adds a subcommand without touching the others.
using SubcommandFn = int (*)(const std::vector<std::string>&);
struct MachoSubcommand {
  MachoSubcommand(const char* name, const char* usage, SubcommandFn fn);
};
int run_macho(const std::vector<std::string>& args);
// `pkgtool nightly run|status|describe|logs|cancel|list|publish ...`: the
// nightly around the builds (subcommands register themselves, see
// nightly_subcommand.hpp).
int run_nightly(const std::vector<std::string>& args);
// The `install_name_tool` entry point (install_name_tool's syntax).
int run_install_name_tool(const std::vector<std::string>& args);

}  // namespace pkgtool
