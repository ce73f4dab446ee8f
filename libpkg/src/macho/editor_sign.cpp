// SPDX-License-Identifier: BSD-3-Clause
// Signing on edit: the editor's header patches plus the signature bytes that
// make them valid again, as more patches of the same overlay.
#include "macho/editor_sign.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "libpkg/base/error.hpp"
#include "libpkg/macho/codesign.hpp"
#include "libpkg/macho/format.hpp"

namespace libpkg::macho {

std::optional<ByteRange> write_differences(std::span<const u8> before,
                                           std::span<const u8> now, u64 at,
                                           Overlay& overlay) {
  // Equal blocks are skipped with memcmp: a re-signed 200 MB file's
  // signature is 1.6 MB of which a few hashes changed, and a byte loop over
  // it took a tenth of the in-place edit's time.
  constexpr size_t kBlock = 4096;
  size_t first = 0, last = now.size();
  while (last - first >= kBlock &&
         std::memcmp(now.data() + first, before.data() + first, kBlock) == 0)
    first += kBlock;
  while (first < last && now[first] == before[first]) ++first;
  while (last - first >= kBlock &&
         std::memcmp(now.data() + last - kBlock, before.data() + last - kBlock,
                     kBlock) == 0)
    last -= kBlock;
  while (last > first && now[last - 1] == before[last - 1]) --last;
  if (first == last) return std::nullopt;
  overlay.write(at + first, now.subspan(first, last - first));
  return ByteRange{at + first, last - first};
}

namespace {

// The slice's bytes with the overlay's patches applied, a range at a time:
// a range no patch touches is a view into the mapped file, a patched one is
// assembled in a page-sized buffer. The re-signer reads only the pages the
// edit changed, so re-signing a 200 MB dylib reads (and keeps in memory)
// its header page and its signature, not the file.
class EditedSlice final : public SliceBytes {
 public:
  EditedSlice(const Slice& slice, const Overlay& overlay)
      : in_(slice.bytes().span()),
        base_(slice.offset()),
        patches_(overlay.patches()) {}

  u64 size() const override { return in_.size(); }

  // Writes the patches over `out`, which holds slice[offset, +out.size()).
  void apply_patches(u64 offset, std::span<u8> out) const;

 protected:
  std::span<const u8> read_checked(u64 offset, u64 size) override {
    std::span<const u8> original = in_.subspan(offset, size);
    if (!patched(offset, size)) return original;
    scratch_.assign(original.begin(), original.end());
    apply_patches(offset, scratch_);
    return scratch_;
  }

 private:
  bool patched(u64 offset, u64 size) const {
    u64 begin = base_ + offset, end = begin + size;
    return std::any_of(patches_.begin(), patches_.end(), [&](const Patch& p) {
      return p.offset < end && begin < p.offset + p.bytes.size();
    });
  }

  std::span<const u8> in_;
  u64 base_;  // the slice's offset in the file (patches use file offsets)
  const std::vector<Patch>& patches_;
  std::vector<u8> scratch_;
};

void EditedSlice::apply_patches(u64 offset, std::span<u8> out) const {
  u64 begin = base_ + offset, end = begin + out.size();
  for (const auto& p : patches_) {
    u64 from = std::max(p.offset, begin);
    u64 to = std::min<u64>(p.offset + p.bytes.size(), end);
    if (from >= to) continue;
    std::copy(p.bytes.begin() + static_cast<std::ptrdiff_t>(from - p.offset),
              p.bytes.begin() + static_cast<std::ptrdiff_t>(to - p.offset),
              out.begin() + static_cast<std::ptrdiff_t>(from - begin));
  }
}

// The whole slice with the overlay's patches applied, for the ad-hoc
// signer, which hashes every page and appends to the slice anyway.
std::vector<u8> edited_copy(const Slice& slice, const Overlay& overlay) {
  std::span<const u8> in = slice.bytes().span();
  std::vector<u8> out(in.begin(), in.end());
  EditedSlice(slice, overlay).apply_patches(0, out);
  return out;
}

// Re-signing keeps the hashes of the pages an edit does not touch, so a
// signature that was already stale (the file changed after signing: an
// edit without re-signing, a patched byte) would stay stale under a fresh
// re-signature. Before trusting it, the old hashes of a sample are checked
// against the unedited bytes: every page the edit changes (read anyway),
// the first page after the header and the last page of the code limit, a
// few KiB whatever the file's size. A stale page elsewhere is not seen
// here (`pkgtool macho verify` and check_binary read every page).
void check_signature_before_edit(const Slice& slice, const SliceLayout& layout,
                                 const ByteView& old_sig,
                                 const std::vector<ByteRange>& changed) {
  std::vector<ByteRange> sample = changed;
  constexpr u64 kPage = 4096;
  if (layout.code_limit > kPage) sample.push_back({kPage, 1});
  if (layout.code_limit > 0) sample.push_back({layout.code_limit - 1, 1});
  SpanSliceBytes unedited(slice.bytes().span());
  std::vector<VerifyProblem> problems = verify_pages(unedited, old_sig, sample);
  if (problems.empty()) return;
  const Signature sig = parse_signature(old_sig);
  const VerifyProblem& p = problems.front();
  throw Error(
      Errc::format, slice.where(),
      fmt::format("the code signature does not verify before the edit "
                  "(CodeDirectory {} (hash type {}): {}{}): the file changed "
                  "after it was signed, and re-signing only the edited pages "
                  "would keep the rest stale; run `pkgtool macho sign` on it "
                  "first (rehashes every page), or edit with --no-sign",
                  p.cd, sig.code_directories[p.cd].hash_type, p.what,
                  problems.size() > 1
                      ? fmt::format(", and {} more", problems.size() - 1)
                      : ""));
}

void resign_edited(const Slice& slice, SliceReport& r, Overlay& overlay) {
  // The editor copies segment commands and LC_CODE_SIGNATURE verbatim (it
  // rewrites only dylib and rpath commands), so the layout the signature
  // depends on is the original slice's, read from its load commands.
  ByteView original(slice.bytes().span(), slice.where());
  SliceLayout layout = find_slice_layout(original);
  ByteView old_sig =
      original.slice(layout.sig_offset, layout.sig_size, "code signature");
  // Rehashing would keep the CMS blob, which signs the old CodeDirectory:
  // the result would claim an identity it no longer carries. Only its
  // signer can renew it.
  if (parse_signature(old_sig).has_cms())
    throw Error(Errc::unsupported, slice.where(),
                "signed with an identity (CMS); re-signing would invalidate "
                "it: re-sign with codesign after editing, or pass --no-sign");
  std::vector<ByteRange> changed;
  for (const auto& c : r.changed_ranges)
    changed.push_back({c.offset - slice.offset(), c.size});
  check_signature_before_edit(slice, layout, old_sig, changed);
  // A header-only edit keeps the code limit, so the signature keeps its
  // size and offset. The pages the edit did not touch keep their hashes
  // (see `resign`): only the sample above was checked.
  EditedSlice edited(slice, overlay);
  std::vector<u8> sig = resign(edited, layout, old_sig, changed);
  if (sig.size() != layout.sig_size)
    throw Error(Errc::unsupported, slice.where(),
                "the re-signed signature changed size");
  write_differences(old_sig.span(), sig, slice.offset() + layout.sig_offset,
                    overlay);
  r.signing = SliceReport::Signing::resigned;
}

void adhoc_sign_edited(const Slice& slice, std::string_view identifier,
                       SliceReport& r, Overlay& overlay) {
  // The signature is appended to the slice, which grows: done for a thin
  // file only (in a fat file the fat table and the next slices would move).
  if (slice.offset() != 0 || slice.size() != overlay.input_size())
    throw Error(Errc::unsupported, slice.where(),
                "cannot add a signature to an unsigned arm64 slice of a fat "
                "file; edit with --no-sign, then run `pkgtool macho sign`");
  std::vector<u8> edited = edited_copy(slice, overlay);
  u64 old_size = edited.size();
  // Throws (nothing written yet) when LC_CODE_SIGNATURE does not fit the
  // header padding or __LINKEDIT is not last.
  sign_slice(edited, slice.where(), identifier);
  ByteView view(edited, slice.where());
  SliceLayout layout = find_slice_layout(view);
  u64 header_end =
      std::max<u64>(slice.load_commands_end(),
                    slice.header_size() +
                        view.at<MachHeader64>(0, "Mach-O header").sizeofcmds);
  std::span<const u8> original = slice.bytes().span();
  write_differences(original.first(header_end),
                    std::span<const u8>(edited).first(header_end),
                    slice.offset(), overlay);
  u64 tail = std::min(layout.sig_offset, old_size);
  write_differences(original.subspan(tail),
                    std::span<const u8>(edited).subspan(tail, old_size - tail),
                    slice.offset() + tail, overlay);
  overlay.write(slice.offset() + old_size,
                std::span<const u8>(edited).subspan(old_size));
  r.signing = SliceReport::Signing::adhoc_signed;
}

}  // namespace

void sign_edited_slice(const Slice& slice, const EditOptions& opts,
                       std::string_view identifier, SliceReport& report,
                       Overlay& overlay) {
  if (!report.changed) return;  // a no-op edit stays byte-identical
  try {
    if (report.code_signature) {
      if (opts.sign)
        resign_edited(slice, report, overlay);
      else
        report.signing = SliceReport::Signing::stale;
      return;
    }
    // arm64 cannot run unsigned; x86_64 slices stay as they were.
    if (opts.sign && slice.cputype() == kCpuTypeArm64)
      adhoc_sign_edited(slice, identifier, report, overlay);
  } catch (const Error& e) {
    // The signer's few unnamed errors (a code limit past the slice) get
    // the slice's name like every other editor error.
    if (!e.file().empty()) throw;
    throw Error(e.code(), slice.where(), e.message());
  }
}

}  // namespace libpkg::macho
