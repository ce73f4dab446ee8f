// SPDX-License-Identifier: BSD-3-Clause
// Internal, class- and byte-order-specific ELF reader shared by the public
// ElfFile facade and the editor. Not installed: the public API is view.hpp.
//
// Everything is computed on demand from the bytes; the struct itself is a few
// words (a view plus the header pointer), cheap to construct per call.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/base/bytes.hpp"
#include "libpkg/elf/format.hpp"
#include "libpkg/elf/view.hpp"

namespace libpkg::elf {

// Where a table lives in the file.
struct FileRange {
  u64 offset = 0;
  u64 size = 0;
  u64 end() const { return offset + size; }
};

template <typename E>
class Reader {
 public:
  explicit Reader(const ByteView& bytes);

  const ByteView& bytes() const { return bytes_; }
  const std::string& name() const { return bytes_.name(); }
  const Ehdr<E>& ehdr() const { return *ehdr_; }

  // Where recoverable oddities go (ElfReadOptions::warning); null: nowhere.
  void set_warning(const ElfWarningFn* warn) { warn_ = warn; }
  void warn(std::string_view message) const {
    if (warn_ != nullptr) (*warn_)(message);
  }

  // Program headers: e_phnum entries (PN_XNUM resolved through section 0).
  u64 phnum() const;
  FileRange phdr_table() const;
  std::span<const Phdr<E>> phdrs() const;

  // Section headers (e_shnum==0 / SHN_XINDEX resolved through section 0).
  u64 shnum() const;
  u64 shstrndx() const;
  std::span<const Shdr<E>> shdrs() const;
  std::string_view section_name(const Shdr<E>& sh) const;
  const Shdr<E>* find_section(std::string_view name) const;
  const Shdr<E>* find_section_by_type(u32 type) const;
  // Throws a format error when the section headers contradict themselves or
  // the program headers (see reader.cpp); editors call it before planning.
  void check_section_headers() const;

  std::optional<u64> vaddr_to_offset(u64 vaddr) const;

  // How refusals name a header ("program header 3 (PT_DYNAMIC)", "section
  // header 7 (.dynstr)"); `ph`/`sh` must point into phdrs()/shdrs().
  std::string phdr_label(const Phdr<E>& ph) const;
  std::string shdr_label(const Shdr<E>& sh) const;
  // The bytes [offset, offset + size) of the file, or a format error (at
  // `offset`) naming the structure, both fields with their values and the
  // file size, as LLVM's tools do: "program header 3 (PT_DYNAMIC): p_offset
  // 0x2e10 + p_filesz 0x1f0 past end of file (size 0x2f00)".
  std::span<const u8> file_range(u64 offset, u64 size, std::string_view what,
                                 std::string_view offset_field,
                                 std::string_view size_field) const;
  // Same for a fixed-size record.
  template <typename T>
  const T& record_at(u64 offset, std::string_view what) const {
    return *reinterpret_cast<const T*>(file_range(offset, sizeof(T), what,
                                                  "offset",
                                                  record_size_field(sizeof(T)))
                                           .data());
  }

  // The dynamic table: all entries PT_DYNAMIC (or SHT_DYNAMIC) holds, and the
  // number used before the first DT_NULL.
  std::optional<FileRange> dynamic_range() const;
  std::span<const Dyn<E>> dynamic_table() const;
  u64 dynamic_used(std::span<const Dyn<E>> table) const;
  std::optional<u64> dynamic_value(i64 tag) const;
  // Bytes of one word of the SysV hash table (.hash, DT_HASH): 8 on 64-bit
  // s390 and Alpha (their sh_entsize), 4 everywhere else.
  u64 hash_word_size() const {
    const u16 m = ehdr().e_machine;
    return E::is_64 && (m == EM_S390 || m == EM_ALPHA) ? 8 : 4;
  }
  // Word `index` of the SysV hash table at file offset `table`.
  u64 hash_word_at(u64 table, u64 index, std::string_view what) const;
  // File offset of the first entry with `tag` (for error messages).
  std::optional<u64> dynamic_entry_offset(i64 tag) const;

  // The dynamic string table as found through DT_STRTAB/DT_STRSZ (falling back
  // to the .dynstr section) and a checked string lookup in it.
  std::optional<FileRange> dynstr_range() const;
  std::string_view dynstr(u64 offset) const;

  // The dynamic string table located once. Loops over entries look their
  // strings up through this: dynstr() finds the table again per call (a
  // scan of the dynamic table), which made printing N DT_NEEDED entries
  // O(N^2).
  class StringTable {
   public:
    StringTable(const Reader& r, std::optional<FileRange> range);
    std::string_view operator()(u64 offset) const;

   private:
    const Reader* r_;
    std::optional<FileRange> range_;
    ByteView view_;
  };
  StringTable string_table() const {
    return StringTable(*this, dynstr_range());
  }

  // .dynsym / .gnu.version / .gnu.version_r / .gnu.version_d locations.
  std::optional<FileRange> dynsym_range() const;
  std::optional<u64> versym_offset() const;
  std::optional<u64> verneed_offset() const;
  std::optional<u64> verdef_offset() const;
  // The file offset of the table a DT_* entry points to; nullopt (with a
  // warning saying what is lost) when no loadable segment maps it.
  std::optional<u64> mapped_table(i64 tag, std::string_view lost) const;
  // Where dynsym_range() / versym_offset() found their table, for messages:
  // "section header 5 (.dynsym)", "symbol version table (DT_VERSYM 0x4a0)".
  std::string dynsym_label() const;
  std::string versym_label() const;

  // Offsets of every Verneed record and its Vernaux records (for the editor).
  struct VerneedRecord {
    u64 offset;
    std::vector<u64> aux_offsets;
  };
  std::vector<VerneedRecord> verneed_records() const;
  struct VerdefRecord {
    u64 offset;
    std::vector<u64> aux_offsets;
  };
  std::vector<VerdefRecord> verdef_records() const;

  std::optional<FileRange> interp_range() const;

  // Notes from PT_NOTE segments (or SHT_NOTE sections when there are none).
  struct Note {
    std::string_view name;
    u32 type;
    std::span<const u8> desc;
  };
  std::vector<Note> notes() const;

 private:
  static std::string record_size_field(u64 size);
  // Lazily filled view with a PT_DYNAMIC: tables are found through the
  // dynamic section, not the section headers (see reader.cpp).
  bool loader_view() const;
  bool dynsym_from_dynamic() const;
  // Where the dynamic table / the dynamic string table come from, for
  // messages: "program header 4 (PT_DYNAMIC)", "DT_STRTAB 0x3c8 (file offset
  // 0x3c8)" with its fields.
  struct Origin {
    std::string what, offset_field, size_field;
  };
  FileRange checked_string_table(FileRange r, const Origin& origin) const;
  u64 gnu_hash_symbol_count(u64 offset) const;
  u64 version_count(i64 tag, u32 section_type) const;
  template <typename Rec, typename Aux, typename Out>
  std::vector<Out> walk_version_chain(u64 start, u64 count,
                                      const char* what) const;
  struct Links {
    u32 count, aux, next;
  };
  static Links version_links(const Verneed<E>& r) {
    return {r.vn_cnt, r.vn_aux, r.vn_next};
  }
  static Links version_links(const Verdef<E>& r) {
    return {r.vd_cnt, r.vd_aux, r.vd_next};
  }
  static u32 version_aux_next(const Vernaux<E>& a) { return a.vna_next; }
  static u32 version_aux_next(const Verdaux<E>& a) { return a.vda_next; }

  ByteView bytes_;
  const Ehdr<E>* ehdr_;
  const ElfWarningFn* warn_ = nullptr;
};

extern template class Reader<Elf32LE>;
extern template class Reader<Elf32BE>;
extern template class Reader<Elf64LE>;
extern template class Reader<Elf64BE>;

// Calls f(Reader<E>) for the class and byte order of `bytes`.
template <typename F>
decltype(auto) visit_reader(bool is_64, bool is_le, const ByteView& bytes,
                            F&& f) {
  if (is_64) {
    if (is_le) return f(Reader<Elf64LE>(bytes));
    return f(Reader<Elf64BE>(bytes));
  }
  if (is_le) return f(Reader<Elf32LE>(bytes));
  return f(Reader<Elf32BE>(bytes));
}

}  // namespace libpkg::elf
