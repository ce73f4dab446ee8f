// SPDX-License-Identifier: BSD-3-Clause
// The load-command editor: a model of each slice's commands, edited as
// strings in install_name_tool's order, serialised, checked against the
// header padding, and expressed as overlay patches.
#include "libpkg/macho/editor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "libpkg/macho/format.hpp"
#include "macho/editor_sign.hpp"

namespace libpkg::macho {

namespace {

bool is_dependent_dylib(u32 cmd) {
  return cmd == kLcLoadDylib || cmd == kLcLoadWeakDylib ||
         cmd == kLcReexportDylib || cmd == kLcLoadUpwardDylib ||
         cmd == kLcLazyLoadDylib;
}

// One load command of the model: the original bytes, plus the string the
// edit gives it (an install name or an rpath) when it changes or is new.
struct Entry {
  u32 cmd = 0;
  std::span<const u8> original;  // empty for a new command
  std::string_view str;          // the current name/path (if it has one)
  std::optional<std::string> replaced;

  std::string_view text() const {
    return replaced ? std::string_view(*replaced) : str;
  }
  void set(std::string_view s) {
    if (s != text()) replaced = std::string(s);
  }
};

class SliceModel {
 public:
  explicit SliceModel(const Slice& slice) : slice_(slice) {
    for (const auto& c : slice.commands()) {
      Entry e{c.cmd,
              slice.bytes().range(c.offset, c.cmdsize, "load command"),
              {},
              std::nullopt};
      if (c.cmd == kLcRpath)
        e.str = slice.command_string(
            c, slice.bytes().at<RpathCommand>(c.offset, "LC_RPATH").path,
            "path");
      else if (c.cmd == kLcIdDylib || is_dependent_dylib(c.cmd))
        e.str = slice.command_string(
            c, slice.bytes().at<DylibCommand>(c.offset, "dylib").name, "name");
      entries_.push_back(std::move(e));
    }
  }

  void apply(const EditOptions& o) {
    if (o.delete_all_rpaths) std::erase_if(entries_, is_rpath);
    for (const auto& p : o.delete_rpaths) {
      if (!find_rpath(p))
        usage(fmt::format("no LC_RPATH load command with path: {}", p));
      std::erase_if(entries_, [&](const Entry& e) {
        return is_rpath(e) && e.text() == p;
      });
    }
    for (const auto& [from, to] : o.rename_rpaths) {
      Entry* e = find_rpath(from);
      if (!e)
        usage(fmt::format("no LC_RPATH load command with path: {}", from));
      if (from != to && find_rpath(to))
        usage(fmt::format("rpath '{}' would create a duplicate load command",
                          to));
      e->set(to);
    }
    if (o.id)
      for (auto& e : entries_)
        if (e.cmd == kLcIdDylib) e.set(*o.id);
    for (const auto& [from, to] : o.changes)
      for (auto& e : entries_)
        if (is_dependent_dylib(e.cmd) && e.text() == from) e.set(to);
    for (const auto& p : o.add_rpaths) {
      if (find_rpath(p))
        usage(
            fmt::format("rpath '{}' would create a duplicate load command", p));
      entries_.push_back(new_rpath(p));
    }
    // As llvm-install-name-tool: each prepended rpath becomes the first load
    // command, so the last one given ends up first.
    for (const auto& p : o.prepend_rpaths) {
      if (find_rpath(p))
        usage(
            fmt::format("rpath '{}' would create a duplicate load command", p));
      entries_.insert(entries_.begin(), new_rpath(p));
    }
  }

  // The serialised load commands.
  std::vector<u8> serialize() const {
    std::vector<u8> out;
    for (const auto& e : entries_) {
      if (!e.replaced) {
        out.insert(out.end(), e.original.begin(), e.original.end());
        continue;
      }
      u32 fixed =
          e.cmd == kLcRpath ? sizeof(RpathCommand) : sizeof(DylibCommand);
      u64 size = align_up(fixed + e.replaced->size() + 1, 8);
      if (size > 0xffffffffu) usage("load command string too long");
      size_t at = out.size();
      out.resize(at + size, 0);
      // A changed dylib command keeps its timestamp and versions.
      if (!e.original.empty())
        std::memcpy(out.data() + at, e.original.data(), fixed);
      auto* lc = reinterpret_cast<LoadCommand*>(out.data() + at);
      lc->cmd = e.cmd;
      lc->cmdsize = static_cast<u32>(size);
      if (e.cmd == kLcRpath)
        reinterpret_cast<RpathCommand*>(out.data() + at)->path = fixed;
      else
        reinterpret_cast<DylibCommand*>(out.data() + at)->name = fixed;
      std::memcpy(out.data() + at + fixed, e.replaced->data(),
                  e.replaced->size());
    }
    return out;
  }

  u32 count() const { return static_cast<u32>(entries_.size()); }

 private:
  static bool is_rpath(const Entry& e) { return e.cmd == kLcRpath; }
  static Entry new_rpath(const std::string& p) {
    return Entry{kLcRpath, {}, {}, p};
  }
  Entry* find_rpath(std::string_view p) {
    for (auto& e : entries_)
      if (is_rpath(e) && e.text() == p) return &e;
    return nullptr;
  }
  [[noreturn]] void usage(const std::string& msg) const {
    throw Error(Errc::usage, slice_.where(), msg);
  }

  const Slice& slice_;
  std::vector<Entry> entries_;
};

bool selected(const Slice& s, const EditOptions& o) {
  if (o.archs.empty()) return s.parsed();
  return std::find(o.archs.begin(), o.archs.end(), s.arch()) != o.archs.end();
}

// Adds the bytes of `region` that differ from `old` (starting at file
// offset `at`) to the overlay, as one range from the first to the last
// difference.
void patch_differences(std::span<const u8> old, const std::vector<u8>& region,
                       u64 at, Overlay& overlay, SliceReport& report) {
  if (auto range = write_differences(old, region, at, overlay)) {
    report.changed_ranges.push_back(*range);
    report.changed = true;
  }
}

SliceReport plan_slice(const Slice& slice, const EditOptions& o,
                       Overlay& overlay) {
  SliceReport r;
  r.arch = slice.arch();
  r.slice_offset = slice.offset();
  r.edited = true;
  r.code_signature = slice.code_signature();
  r.sizeofcmds_before = slice.sizeofcmds();
  u64 first = slice.first_content_offset();
  r.padding_free_before = first - slice.load_commands_end();

  SliceModel model(slice);
  model.apply(o);
  std::vector<u8> cmds = model.serialize();
  r.sizeofcmds_after = cmds.size();
  u64 room = first - slice.header_size();
  if (cmds.size() > room)
    throw Error(Errc::unsupported, slice.where(),
                fmt::format("the edited load commands need 0x{:x} bytes, "
                            "0x{:x} more than the 0x{:x} they use now, but "
                            "only 0x{:x} bytes of header padding are free "
                            "before the first section at 0x{:x} (relink with "
                            "-headerpad_max_install_names)",
                            cmds.size(), cmds.size() - slice.sizeofcmds(),
                            slice.sizeofcmds(), r.padding_free_before, first));

  // The region rewritten: header, then commands, then zeros up to the old
  // end when the commands shrank (dyld ignores those bytes; zeroing them
  // leaves no stale command behind, as install_name_tool does).
  u64 end = std::max<u64>(slice.load_commands_end(),
                          slice.header_size() + cmds.size());
  std::span<const u8> old = slice.bytes().range(0, end, "load commands");
  std::vector<u8> region(old.begin(), old.begin() + slice.header_size());
  auto* h = reinterpret_cast<MachHeader64*>(region.data());
  h->ncmds = model.count();
  h->sizeofcmds = static_cast<u32>(cmds.size());
  region.insert(region.end(), cmds.begin(), cmds.end());
  region.resize(end, 0);
  patch_differences(old, region, slice.offset(), overlay, r);
  return r;
}

}  // namespace

bool EditPlan::changed() const {
  return std::any_of(slices.begin(), slices.end(),
                     [](const SliceReport& s) { return s.changed; });
}

EditPlan plan_edit(const MachOFile& file, const EditOptions& opts) {
  for (const auto& a : opts.add_rpaths) {
    if (std::count(opts.add_rpaths.begin(), opts.add_rpaths.end(), a) > 1)
      throw Error(Errc::usage, file.name(),
                  fmt::format("-add_rpath {} given twice", a));
    if (std::find(opts.delete_rpaths.begin(), opts.delete_rpaths.end(), a) !=
        opts.delete_rpaths.end())
      throw Error(Errc::usage, file.name(),
                  fmt::format("cannot specify both -add_rpath '{}' and "
                              "-delete_rpath '{}'",
                              a, a));
  }
  for (const auto& a : opts.archs) {
    auto it = std::find_if(file.slices().begin(), file.slices().end(),
                           [&](const Slice& s) { return s.arch() == a; });
    if (it == file.slices().end())
      throw Error(Errc::usage, file.name(),
                  fmt::format("no {} slice in the file", a));
    if (!it->parsed())
      throw Error(Errc::unsupported, it->where(),
                  "only 64-bit little-endian slices can be edited");
  }
  // A file with nothing this editor can change (only 32-bit or PowerPC
  // slices) is refused rather than silently left as it was.
  if (opts.has_operations() &&
      std::none_of(file.slices().begin(), file.slices().end(),
                   [&](const Slice& s) { return selected(s, opts); }))
    throw Error(Errc::unsupported, file.name(),
                "no 64-bit little-endian slice to edit (32-bit and PowerPC "
                "slices are listed, not edited)");
  EditPlan plan(file.bytes().size());
  for (const auto& slice : file.slices()) {
    if (!selected(slice, opts)) {
      SliceReport r;
      r.arch = slice.arch();
      r.slice_offset = slice.offset();
      if (slice.parsed()) r.code_signature = slice.code_signature();
      plan.slices.push_back(std::move(r));
      continue;
    }
    plan.slices.push_back(plan_slice(slice, opts, plan.overlay));
    sign_edited_slice(slice, opts,
                      std::filesystem::path(file.name()).filename().string(),
                      plan.slices.back(), plan.overlay);
  }
  return plan;
}

WriteResult apply_edit(const MachOFile& file, const EditPlan& plan,
                       const std::filesystem::path& output, WriteMode mode) {
  if (file.mapped() == nullptr)
    throw Error(Errc::usage, file.name(),
                "apply_edit needs a file opened with MachOFile::open");
  return write_overlay(*file.mapped(), plan.overlay, output, mode);
}

}  // namespace libpkg::macho
