// SPDX-License-Identifier: BSD-3-Clause
// The Mach-O files of the package being checked (macOS wheels, libtorch
// macOS zips): read once, in parallel — every slice's load commands
// validated, every code signature verified — and their dylibs resolved with
// dyld's rules (deps/dyld.hpp), as the ELF files are with ld.so's.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "check/package.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/thread_pool.hpp"
#include "libpkg/deps/dyld.hpp"
#include "libpkg/macho/codesign.hpp"
#include "libpkg/macho/format.hpp"
#include "libpkg/macho/view.hpp"

namespace fs = std::filesystem;
namespace lm = libpkg::macho;

namespace libpkg::check::detail {
namespace {

// Java class files share the fat magic 0xcafebabe; their next word is
// (minor << 16 | major) with major >= 45, where a fat header has its
// number of architectures (llvm's heuristic: fewer than 43 for Mach-O).
constexpr u32 kJavaClassThreshold = 43;

bool loadable_type(u32 filetype) {
  return filetype == lm::kMhExecute || filetype == lm::kMhDylib ||
         filetype == lm::kMhBundle;
}

// "torch/lib/libx.dylib (arm64): ..." instead of the scratch path.
Error with_member(const Error& e, const MachoEntry& entry) {
  std::string file = e.file();
  const std::string path = entry.file.string();
  if (file.starts_with(path))
    file = entry.member + file.substr(path.size());
  else
    file = entry.member + (file.empty() ? "" : " (" + file + ")");
  return Error(e.code(), file, e.message());
}

// What the verifier finds wrong with one slice's signature.
std::vector<std::string> signature_problems(const lm::Slice& s,
                                            const std::string& where) {
  std::vector<std::string> problems;
  ByteView view(s.bytes().span(), where, s.offset());
  try {
    lm::SliceLayout layout = lm::find_slice_layout(view);
    if (!layout.signed_()) return problems;
    lm::VerifyReport r = lm::verify_signature(view, layout);
    for (const auto& p : r.problems)
      problems.push_back(
          fmt::format("CodeDirectory {} (hash type {}): {}", p.cd,
                      r.signature.code_directories[p.cd].hash_type, p.what));
  } catch (const Error& e) {
    // A signature that does not even parse fails like a wrong hash: the
    // file itself was readable, macOS refuses to run it.
    problems.push_back(e.message());
  }
  return problems;
}

MachoEntry read_macho(const fs::path& root, const std::string& member) {
  MachoEntry entry;
  entry.member = member;
  entry.file = root / member;
  try {
    lm::MachOFile file = lm::MachOFile::open(entry.file);
    entry.fat = file.is_fat();
    for (const auto& s : file.slices()) {
      MachoSlice out;
      out.arch = s.arch();
      out.parsed = s.parsed();
      out.filetype = s.filetype();
      if (loadable_type(s.filetype())) entry.loadable = true;
      if (!out.parsed) {
        entry.slices.push_back(std::move(out));
        continue;
      }
      s.commands();  // validates every load command
      if (auto pv = s.platform_version()) out.minos = pv->minos;
      if (auto id = s.id()) out.id = std::string(*id);
      for (const auto& d : s.dylibs())
        out.dylibs.emplace_back(std::string(d.name),
                                lm::dylib_kind_name(d.kind));
      for (const auto& r : s.rpaths()) out.rpaths.emplace_back(r.path);
      auto cs = s.code_signature();
      out.is_signed = cs && cs->datasize != 0;
      entry.slices.push_back(std::move(out));
    }
  } catch (const Error& e) {
    throw with_member(e, entry);
  }
  return entry;
}

bool under(const fs::path& path, const fs::path& root) {
  auto rel = path.lexically_normal().lexically_relative(root);
  return !rel.empty() && *rel.begin() != "..";
}

// Inside the package or the system's beats found elsewhere beats missing.
int rank(const MachoNeed& need) {
  if (need.member || need.status == "system") return 2;
  return need.path ? 1 : 0;
}

void resolve_macho_needs(Package& pkg, const CheckOptions& options) {
  auto member_of = [&](const fs::path& p) -> std::optional<std::string> {
    std::error_code ec;
    fs::path real = fs::weakly_canonical(p, ec);
    if (ec) real = p.lexically_normal();
    if (!under(real, pkg.root)) return std::nullopt;
    return real.lexically_relative(pkg.root).generic_string();
  };
  std::vector<const MachoEntry*> roots;
  for (const auto& e : pkg.machos)
    if (e.loadable) roots.push_back(&e);
  std::vector<std::vector<deps::DyldTree>> trees(roots.size());
  ThreadPool pool(options.threads);
  pool.parallel_for(roots.size(), [&](std::size_t i) {
    try {
      trees[i] = deps::dyld_trees(roots[i]->file, {});
    } catch (const Error& e) {
      if (e.code() == Errc::unsupported) return;  // 32-bit only: listed
      throw with_member(e, *roots[i]);
    }
  });
  // (requester, arch, install name) → resolution; a found one beats a
  // missing one: a library may rely on the run paths of the image that
  // loads it (or on @executable_path of the package's executable).
  std::map<std::tuple<std::string, std::string, std::string>, MachoNeed> best;
  for (const auto& file_trees : trees) {
    for (const auto& tree : file_trees) {
      for (const auto& lib : tree.libraries) {
        auto requester = member_of(lib.needed_by);
        if (!requester) continue;  // below a library outside the package
        MachoNeed need;
        need.requester = *requester;
        need.arch = tree.arch;
        need.install_name = lib.install_name;
        need.kind = lib.kind;
        need.status = deps::dyld_status_name(lib.status);
        need.path = lib.path;
        if (lib.path) need.member = member_of(*lib.path);
        need.tried = lib.tried;
        auto key =
            std::make_tuple(need.requester, need.arch, need.install_name);
        auto found = best.find(key);
        if (found == best.end())
          best.emplace(key, std::move(need));
        else if (rank(need) > rank(found->second))
          found->second = std::move(need);
      }
    }
  }
  for (auto& [key, need] : best) pkg.macho_needs.push_back(std::move(need));
}

}  // namespace

std::vector<std::vector<std::string>> verify_signatures(
    const MachoEntry& entry) {
  std::vector<std::vector<std::string>> out;
  try {
    lm::MachOFile file = lm::MachOFile::open(entry.file);
    for (const auto& s : file.slices())
      out.push_back(s.parsed()
                        ? signature_problems(
                              s, fmt::format("{} ({})", entry.member, s.arch()))
                        : std::vector<std::string>{});
  } catch (const Error& e) {
    throw with_member(e, entry);
  }
  return out;
}

bool sniff_macho_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  u8 head[8] = {};
  if (!in.read(reinterpret_cast<char*>(head), 8)) return false;
  if (!lm::MachOFile::has_magic(head)) return false;
  auto big_endian = [](const u8* p) {
    return u32{p[0]} << 24 | u32{p[1]} << 16 | u32{p[2]} << 8 | u32{p[3]};
  };
  if (big_endian(head) == lm::kFatMagic &&
      big_endian(head + 4) >= kJavaClassThreshold)
    return false;
  return true;
}

void read_machos(Package& pkg, const std::vector<std::string>& members,
                 const CheckOptions& options) {
  std::vector<MachoEntry> read(members.size());
  ThreadPool pool(options.threads);
  pool.parallel_for(members.size(), [&](std::size_t i) {
    read[i] = read_macho(pkg.root, members[i]);
  });
  pkg.machos = std::move(read);
  resolve_macho_needs(pkg, options);
}

}  // namespace libpkg::check::detail
