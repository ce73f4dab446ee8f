// SPDX-License-Identifier: BSD-3-Clause
// edited_member_source(): a zip member as edited by an overlay. The zip
// writer splices it (splice.hpp) and never calls read(); read() serves any
// other consumer, inflating the member from its start.
#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <optional>

#include "archive/edit_map.hpp"
#include "archive/reader_central.hpp"
#include "archive/reader_inflate.hpp"
#include "libpkg/archive/source.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/overlay.hpp"

namespace libpkg::archive {
namespace {

class EditedMemberSource final : public ContentSource {
 public:
  EditedMemberSource(std::shared_ptr<const ZipReader> zip,
                     const ZipEntry& entry,
                     std::shared_ptr<const Overlay> overlay)
      : edit_{std::move(zip), entry, std::move(overlay)},
        name_(edit_.zip->name() + ":" + entry.name),
        // Overlay normalises its patches lazily through mutable state:
        // copy them once, here, for concurrent readers.
        map_(edit_.overlay->patches(), edit_.overlay->input_size(),
             edit_.overlay->size()) {
    if (entry.method != 0 && entry.method != 8)
      throw Error(Errc::unsupported, edit_.zip->name(),
                  fmt::format("{}: compression {} is not supported",
                              reader::printable_name(entry.name),
                              reader::method_name(entry.method)));
    if (edit_.overlay->input_size() != entry.uncompressed_size)
      throw Error(
          Errc::usage, name_,
          fmt::format("member has {} bytes but the edit was made for {}",
                      entry.uncompressed_size, edit_.overlay->input_size()));
  }

  u64 size() const override { return map_.output_size(); }
  const std::string& name() const override { return name_; }
  const MemberEdit* member_edit() const override { return &edit_; }

  void read(u64 offset, std::span<u8> out) const override {
    if (offset > size() || out.size() > size() - offset)
      throw Error(Errc::usage, name_,
                  fmt::format("read of {} bytes at {} past the end ({} bytes)",
                              out.size(), offset, size()));
    const u64 end = offset + out.size();
    const u64 from_original = std::min(end, map_.input_size());
    const std::size_t n_original = static_cast<std::size_t>(
        offset < from_original ? from_original - offset : 0);
    if (n_original > 0) read_original(offset, out.first(n_original));
    std::fill(out.begin() + static_cast<std::ptrdiff_t>(n_original), out.end(),
              u8{0});
    map_.patch(offset, out);
  }

 private:
  // The original member's bytes at [offset, offset + out.size()).
  void read_original(u64 offset, std::span<u8> out) const {
    const ZipEntry& e = edit_.entry;
    std::span<const u8> raw = edit_.zip->raw(e);
    if (e.method == 0) {
      std::copy_n(raw.begin() + static_cast<std::ptrdiff_t>(offset), out.size(),
                  out.begin());
      return;
    }
    std::lock_guard lock(mutex_);
    if (!inflater_ || inflater_->produced() > offset) {
      inflater_.emplace(edit_.zip->name(), e, raw);
      skip_.resize(64 * 1024);
    }
    while (inflater_->produced() < offset) {
      const u64 n = std::min<u64>(skip_.size(), offset - inflater_->produced());
      if (inflater_->next(std::span<u8>(skip_).first(n)) == 0) break;
    }
    for (std::size_t have = 0; have < out.size();) {
      const std::size_t got = inflater_->next(out.subspan(have));
      if (got == 0)
        throw Error(Errc::format, edit_.zip->name(),
                    reader::printable_name(e.name) + ": ends early");
      have += got;
    }
  }

  MemberEdit edit_;
  std::string name_;
  EditMap map_;
  mutable std::mutex mutex_;
  mutable std::optional<reader::MemberInflater> inflater_;
  mutable std::vector<u8> skip_;
};

}  // namespace

SourcePtr edited_member_source(std::shared_ptr<const ZipReader> zip,
                               const ZipEntry& entry,
                               std::shared_ptr<const Overlay> overlay) {
  return std::make_shared<EditedMemberSource>(std::move(zip), entry,
                                              std::move(overlay));
}

}  // namespace libpkg::archive
