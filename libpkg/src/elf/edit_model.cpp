// SPDX-License-Identifier: BSD-3-Clause
#include "edit_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "libpkg/elf/sniff.hpp"

namespace libpkg::elf {

bool is_string_tag(i64 tag) {
  switch (tag) {
    case DT_NEEDED:
    case DT_SONAME:
    case DT_RPATH:
    case DT_RUNPATH:
    case DT_AUXILIARY:
    case DT_FILTER:
    case DT_CONFIG:
    case DT_DEPAUDIT:
    case DT_AUDIT:
      return true;
    default:
      return false;
  }
}

namespace {

std::vector<std::string> split_path(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t p = s.find(':', start);
    out.push_back(s.substr(start, p - start));
    if (p == std::string::npos) break;
    start = p + 1;
  }
  return out;
}

std::string join_path(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ":" : "") + parts[i];
  return out;
}

// The e_machine of the ELF file at `path` when it is one of the wanted
// byte order. No regular file there is "not found"; one that cannot be read
// is an error (it is not silently taken for a mismatch).
std::optional<u16> elf_machine_of(const std::string& path, bool want_le) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  std::optional<ElfIdent> id = sniff_elf_file(path);
  if (!id || !id->complete || id->is_le != want_le) return std::nullopt;
  return id->machine;
}

class ModelBuilder {
 public:
  ModelBuilder(std::string file, u16 e_type, u16 e_machine, bool is_le)
      : file_(std::move(file)),
        e_type_(e_type),
        e_machine_(e_machine),
        is_le_(is_le) {}

  EditModel model;

  void set_soname(const std::string& name) {
    if (e_type_ != ET_DYN)
      throw Error(
          Errc::usage, file_,
          fmt::format("cannot set a SONAME: the file is not a shared object "
                      "(e_type {})",
                      type_name(e_type_)));
    if (ModelEntry* e = find(DT_SONAME)) {
      set_text(*e, name);
    } else {
      insert_after_needed({DT_SONAME, 0, name, std::nullopt, true});
    }
  }

  void rpath_op(const EditOptions& o, const std::vector<std::string>& needed) {
    ModelEntry* runpath = find(DT_RUNPATH);
    ModelEntry* rpath = find(DT_RPATH);
    if (o.rpath_op == RpathOp::remove) {
      erase_tag(DT_RPATH);
      erase_tag(DT_RUNPATH);
      return;
    }
    ModelEntry* current = runpath ? runpath : rpath;
    std::string old_value = current ? *current->text : std::string();
    std::string value;
    switch (o.rpath_op) {
      case RpathOp::set:
        value = o.rpath;
        break;
      case RpathOp::add: {
        // Unlike patchelf (NixOS/patchelf#497) we don't add an entry that is
        // already present, so repeated pipeline runs stay idempotent.
        std::vector<std::string> parts;
        if (current && !old_value.empty()) parts = split_path(old_value);
        for (const auto& p : split_path(o.rpath))
          if (!p.empty() &&
              std::find(parts.begin(), parts.end(), p) == parts.end())
            parts.push_back(p);
        value = join_path(parts);
        break;
      }
      case RpathOp::shrink:
        if (!current) return;
        value = shrink(old_value, o.allowed_rpath_prefixes, needed);
        break;
      default:
        return;
    }
    i64 tag = DT_RUNPATH;
    if (o.rpath_tag == RpathTag::rpath) tag = DT_RPATH;
    if (o.rpath_tag == RpathTag::keep)
      tag = runpath ? DT_RUNPATH : (rpath ? DT_RPATH : DT_RUNPATH);
    // Keep one entry: the one with the wanted tag, or the other one retagged.
    ModelEntry* target = tag == DT_RUNPATH ? runpath : rpath;
    if (!target) target = current;
    if (target) {
      if (target->tag != tag) {
        target->tag = tag;
        model.dynamic_changed = true;
      }
      set_text(*target, value);
      i64 other = tag == DT_RUNPATH ? DT_RPATH : DT_RUNPATH;
      erase_tag(other);
    } else {
      insert_after_needed({tag, 0, value, std::nullopt, true});
    }
  }

  // One pass over the entries (erasing one at a time is quadratic in the
  // number of entries).
  void remove_needed(const std::vector<std::string>& names) {
    if (names.empty()) return;
    std::set<std::string, std::less<>> gone(names.begin(), names.end());
    // Without its library, a version-needs record makes ld.so abort
    // (_dl_check_map_versions: "needed != NULL"); drop it too. patchelf
    // leaves it in place.
    for (auto& [record, vn] : verneeds_)
      if (gone.contains(vn.current)) vn.removed = true;
    erase_entries([&](const ModelEntry& e) {
      return e.tag == DT_NEEDED && gone.contains(*e.text);
    });
  }

  // patchelf semantics: the replacements form one map applied once, so a
  // name given twice takes the last target and A->B, B->C does not chain.
  void replace_needed(
      const std::vector<std::pair<std::string, std::string>>& pairs) {
    std::map<std::string, std::string> map;
    for (const auto& [from, to] : pairs) map[from] = to;
    for (auto& e : model.entries) {
      if (e.tag != DT_NEEDED) continue;
      auto it = map.find(*e.text);
      if (it != map.end() && it->second != *e.text) set_text(e, it->second);
    }
    // The version-needs record names the same library; ld.so matches it by
    // name, so it must follow the rename (uccl#1038 is this mismatch).
    for (auto& [record, vn] : verneeds_) {
      if (vn.removed) continue;
      auto it = map.find(vn.current);
      if (it != map.end()) vn.current = it->second;
    }
  }

  void add_needed(const std::vector<std::string>& names) {
    // New NEEDED entries go first, as with patchelf, but in the order given
    // (patchelf sorts them by name); a library already needed is not added
    // twice.
    std::set<std::string_view> present;
    for (const auto& e : model.entries)
      if (e.tag == DT_NEEDED) present.insert(*e.text);
    std::vector<ModelEntry> added;
    for (const auto& n : names)
      if (present.insert(n).second)
        added.push_back({DT_NEEDED, 0, n, std::nullopt, true});
    if (added.empty()) return;
    // One insertion of all new entries (not one shift per name).
    model.entries.insert(model.entries.begin(),
                         std::make_move_iterator(added.begin()),
                         std::make_move_iterator(added.end()));
    model.dynamic_changed = true;
  }

  // patchelf --no-default-lib: ORs the bit into DT_FLAGS_1, adding the
  // entry (after the NEEDED entries) when the file has none.
  void set_flags_1(u64 bits) {
    if (ModelEntry* e = find(DT_FLAGS_1)) {
      if ((e->value & bits) == bits) return;
      e->value |= bits;
      model.dynamic_changed = true;
      return;
    }
    insert_after_needed({DT_FLAGS_1, bits, std::nullopt, std::nullopt, false});
  }

  // patchelf --add-debug-tag: a DT_DEBUG entry (for debuggers to find
  // r_debug) unless there is one.
  void add_debug_tag() {
    if (find(DT_DEBUG)) return;
    insert_after_needed({DT_DEBUG, 0, std::nullopt, std::nullopt, false});
  }

  void add_verneed(u64 record, u64 file_offset, std::string file) {
    verneeds_[record] = {file_offset, file, file, false};
  }

  void finish_verneeds() {
    for (auto& [record, vn] : verneeds_) {
      if (vn.removed) {
        model.removed_verneeds.push_back(record);
        model.released_offsets.push_back(vn.old_offset);
        continue;
      }
      if (vn.current == vn.original) continue;
      model.verneed_changes.push_back({record, vn.old_offset, vn.current});
      model.released_offsets.push_back(vn.old_offset);
    }
  }

 private:
  ModelEntry* find(i64 tag) {
    for (auto& e : model.entries)
      if (e.tag == tag) return &e;
    return nullptr;
  }
  void release(const ModelEntry& e) {
    if (e.old_offset && !e.text_changed)
      model.released_offsets.push_back(*e.old_offset);
  }
  void set_text(ModelEntry& e, const std::string& text) {
    if (*e.text == text) return;
    if (e.old_offset && !e.text_changed)
      model.released_offsets.push_back(*e.old_offset);
    e.text = text;
    e.text_changed = true;
    model.dynamic_changed = true;
  }
  void erase_tag(i64 tag) {
    erase_entries([&](const ModelEntry& e) { return e.tag == tag; });
  }
  template <typename Pred>
  void erase_entries(Pred pred) {
    auto n = std::erase_if(model.entries, [&](const ModelEntry& e) {
      if (!pred(e)) return false;
      release(e);
      return true;
    });
    if (n > 0) model.dynamic_changed = true;
  }
  void insert_after_needed(ModelEntry e) {
    auto& v = model.entries;
    auto pos = v.begin();
    for (auto it = v.begin(); it != v.end(); ++it)
      if (it->tag == DT_NEEDED || it->tag == DT_SONAME) pos = it + 1;
    v.insert(pos, std::move(e));
    model.dynamic_changed = true;
  }

  // patchelf's --shrink-rpath: keep relative entries ($ORIGIN...), drop
  // entries outside the allowed prefixes, and keep an absolute directory
  // only if it holds a still-unresolved NEEDED library of our machine.
  std::string shrink(const std::string& value,
                     const std::vector<std::string>& allowed,
                     const std::vector<std::string>& needed) {
    std::vector<bool> found(needed.size(), false);
    std::vector<std::string> kept;
    for (const auto& dir : split_path(value)) {
      if (dir.empty()) continue;
      if (dir[0] != '/') {
        kept.push_back(dir);
        continue;
      }
      if (!allowed.empty() && std::none_of(allowed.begin(), allowed.end(),
                                           [&](const std::string& p) {
                                             return dir.starts_with(p);
                                           }))
        continue;
      bool useful = false;
      for (size_t i = 0; i < needed.size(); ++i) {
        if (found[i]) continue;
        auto m = elf_machine_of(dir + "/" + needed[i], is_le_);
        if (m && *m == e_machine_) {
          found[i] = true;
          useful = true;
        }
      }
      if (useful) kept.push_back(dir);
    }
    return join_path(kept);
  }

  std::string file_;
  u16 e_type_, e_machine_;
  bool is_le_;
  struct VerneedFile {
    u64 old_offset;
    std::string original, current;
    bool removed = false;
  };
  std::map<u64, VerneedFile> verneeds_;
};

// After records are dropped, DT_VERNEEDNUM counts the rest. With none left
// DT_VERNEED goes, and so does DT_VERSYM unless version definitions remain:
// glibc indexes its (then absent) version array through DT_VERSYM.
template <typename E>
void drop_verneed_entries(const Reader<E>& r, EditModel& model) {
  std::set<u64> removed(model.removed_verneeds.begin(),
                        model.removed_verneeds.end());
  u64 kept = 0;
  for (const auto& rec : r.verneed_records())
    if (!removed.contains(rec.offset)) ++kept;
  auto& v = model.entries;
  if (kept == 0) {
    bool has_verdef = std::any_of(v.begin(), v.end(), [](const ModelEntry& e) {
      return e.tag == DT_VERDEF;
    });
    std::erase_if(v, [&](const ModelEntry& e) {
      return e.tag == DT_VERNEED || e.tag == DT_VERNEEDNUM ||
             (e.tag == DT_VERSYM && !has_verdef);
    });
  } else {
    for (auto& e : v)
      if (e.tag == DT_VERNEEDNUM) e.value = kept;
  }
  model.dynamic_changed = true;
}

}  // namespace

template <typename E>
EditModel build_edit_model(const Reader<E>& r, const EditOptions& o) {
  ModelBuilder b(r.name(), r.ehdr().e_type, r.ehdr().e_machine, E::is_le);
  bool touches_dynamic = o.touches_dynamic();
  // The entries are always loaded: even an edit that only moves the
  // interpreter can rebuild a segment holding .dynamic, which is then
  // written back from this model.
  auto table = r.dynamic_table();
  if (touches_dynamic && table.empty())
    throw Error(Errc::not_found, r.name(),
                "no dynamic section (the file is statically linked)");
  if (!table.empty()) {
    u64 used = r.dynamic_used(table);
    std::optional<typename Reader<E>::StringTable> strings;
    for (u64 i = 0; i < used; ++i) {
      ModelEntry e{table[i].d_tag, static_cast<u64>(table[i].d_val),
                   std::nullopt, std::nullopt, false};
      if (is_string_tag(e.tag)) {
        if (!strings) strings.emplace(r.string_table());
        e.text = std::string((*strings)(e.value));
        e.old_offset = e.value;
      }
      b.model.entries.push_back(std::move(e));
    }
    for (const auto& rec : r.verneed_records()) {
      const auto& vn = r.bytes().template at<Verneed<E>>(rec.offset, "verneed");
      b.add_verneed(rec.offset, vn.vn_file, std::string(r.dynstr(vn.vn_file)));
    }

    std::vector<std::string> needed;
    for (const auto& e : b.model.entries)
      if (e.tag == DT_NEEDED) needed.push_back(*e.text);

    // patchelf's order: soname, interpreter, rpath, remove, replace, add.
    if (o.set_soname) b.set_soname(*o.set_soname);
    if (o.rpath_op != RpathOp::none) b.rpath_op(o, needed);
    b.remove_needed(o.remove_needed);
    b.replace_needed(o.replace_needed);
    b.add_needed(o.add_needed);
    if (o.no_default_lib) b.set_flags_1(DF_1_NODEFLIB);
    if (o.add_debug_tag) b.add_debug_tag();
    b.finish_verneeds();
    if (!b.model.removed_verneeds.empty()) drop_verneed_entries(r, b.model);
  }
  if (o.set_interpreter) {
    // An empty PT_INTERP makes the kernel refuse to run the program (ENOEXEC,
    // "exec format error"): never a useful edit.
    if (o.set_interpreter->empty())
      throw Error(Errc::usage, r.name(),
                  "cannot set an empty interpreter (the program could not be "
                  "executed)");
    auto range = r.interp_range();
    if (!range)
      throw Error(
          Errc::not_found, r.name(),
          "cannot set the interpreter: the file has no PT_INTERP segment "
          "(it is a shared library or statically linked)");
    auto bytes = r.bytes().range(range->offset, range->size, "PT_INTERP");
    std::string current(reinterpret_cast<const char*>(bytes.data()),
                        bytes.size());
    current = current.substr(0, current.find('\0'));
    if (current != *o.set_interpreter) b.model.interpreter = *o.set_interpreter;
  }
  return std::move(b.model);
}

template EditModel build_edit_model(const Reader<Elf32LE>&, const EditOptions&);
template EditModel build_edit_model(const Reader<Elf32BE>&, const EditOptions&);
template EditModel build_edit_model(const Reader<Elf64LE>&, const EditOptions&);
template EditModel build_edit_model(const Reader<Elf64BE>&, const EditOptions&);

}  // namespace libpkg::elf
