// SPDX-License-Identifier: BSD-3-Clause
// Which C library a binary (or an extension module's file name) is for.
#include <charconv>
#include <string>

#include "libpkg/deps/resolve.hpp"

namespace libpkg::deps {

namespace {

// Bionic's libc.so defines LIBC, LIBC_N, LIBC_O, LIBC_P... (musl has no
// symbol versions; glibc's libc is libc.so.6).
bool needs_bionic_versions(const elf::ElfFile& elf) {
  for (const auto& need : elf.version_needs()) {
    if (need.file != "libc.so") continue;
    for (const auto& aux : need.versions)
      if (aux.name == "LIBC" || aux.name.starts_with("LIBC_")) return true;
  }
  return false;
}

}  // namespace

const char* libc_name(Libc libc) {
  switch (libc) {
    case Libc::glibc:
      return "glibc";
    case Libc::musl:
      return "musl";
    case Libc::bionic:
      return "bionic";
  }
  return "unknown";
}

std::optional<Libc> parse_libc(std::string_view name) {
  for (Libc libc : {Libc::glibc, Libc::musl, Libc::bionic})
    if (name == libc_name(libc)) return libc;
  return std::nullopt;
}

std::optional<Libc> libc_of(const elf::ElfFile& elf) {
  if (auto interp = elf.interpreter()) {
    // /lib/ld-musl-x86_64.so.1 versus /lib64/ld-linux-x86-64.so.2,
    // /lib/ld-linux-aarch64.so.1, /lib/ld64.so.2 (ppc64le, s390x)...;
    // Android's /system/bin/linker64 (linker for 32-bit).
    std::string_view base = interp->substr(interp->rfind('/') + 1);
    if (base.starts_with("ld-musl-")) return Libc::musl;
    if (base.starts_with("ld-linux") || base.starts_with("ld64.so") ||
        base.starts_with("ld.so"))
      return Libc::glibc;
    if (interp->starts_with("/system/bin/linker")) return Libc::bionic;
  }
  // The NDK's crtbegin objects put this note (section .note.android.ident,
  // owner "Android", type 1) in every Android binary. Looked up among the
  // notes, which the PT_NOTE segments in the first pages locate, not by
  // section name: section headers sit at the end of the file, and reading
  // them would inflate a whole library kept deflated in an archive.
  if (elf.has_note("Android", 1)) return Libc::bionic;
  for (std::string_view n : elf.needed()) {
    // glibc's libc is libc.so.6; musl's is libc.so (Alpine links its
    // packages against libc.musl-<arch>.so.1, a symlink to it), and so is
    // bionic's, which versions its symbols.
    if (n == "libc.so.6") return Libc::glibc;
    if (n.starts_with("libc.musl-")) return Libc::musl;
    if (n == "libc.so")
      return needs_bionic_versions(elf) ? Libc::bionic : Libc::musl;
  }
  return std::nullopt;
}

std::optional<Libc> libc_from_extension_suffix(std::string_view member) {
  // ".cpython-312-x86_64-linux-musl.so", ".pypy310-pp73-...-linux-gnu.so".
  std::string_view name = member.substr(member.rfind('/') + 1);
  if (!name.ends_with(".so")) return std::nullopt;
  name.remove_suffix(3);
  if (name.ends_with("-linux-musl") || name.ends_with("-linux-musleabihf"))
    return Libc::musl;
  if (name.ends_with("-linux-android")) return Libc::bionic;
  if (!name.ends_with("-linux-gnu") && !name.ends_with("-linux-gnueabihf"))
    return std::nullopt;
  // Trusted from CPython 3.11 on: "<module>.cpython-3XY-<triplet>".
  auto tag = name.find(".cpython-3");
  if (tag == std::string_view::npos) return std::nullopt;
  std::string_view digits = name.substr(tag + 10);
  unsigned minor = 0;
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), minor);
  if (ec != std::errc() || end == digits.data() ||
      end == digits.data() + digits.size() || *end != '-')
    return std::nullopt;
  if (minor >= 11) return Libc::glibc;
  return std::nullopt;
}

}  // namespace libpkg::deps
