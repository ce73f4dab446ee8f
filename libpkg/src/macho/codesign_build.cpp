// SPDX-License-Identifier: BSD-3-Clause
// Writes signatures: a new ad-hoc one laid out as ld64.lld writes its linker
// signature, and a re-signature that keeps an existing signature's fields
// and rehashes only the pages an edit touched.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>

#include "libpkg/macho/codesign.hpp"
#include "macho/codesign_format.hpp"

namespace libpkg::macho {
namespace {

constexpr u8 kAdhocPageLog2 = 12;  // 4 KiB pages
constexpr u64 kAdhocHashSize = 32;
// lld rounds the SuperBlob header plus its one BlobIndex up to 8 bytes
// (24, not 20) and the headers plus identifier up to 16.
constexpr u64 kAdhocBlobHeaders =
    (sizeof(cs::SuperBlobHeader) + sizeof(cs::BlobIndex) + 7) / 8 * 8;

u64 adhoc_headers_size(std::string_view identifier) {
  return align_up(
      kAdhocBlobHeaders + cs::kCdSizeExecSeg + identifier.size() + 1, 16);
}

u64 page_count(u64 limit, u64 page) {
  return page == 0 ? (limit ? 1 : 0) : (limit + page - 1) / page;
}

// Writes the hash of page `i` (of `page` bytes, 0 = one page) of
// slice[0, limit) to `out`; only that page is read.
void hash_page(SliceBytes& slice, u64 limit, u64 page, u8 hash_type, u64 i,
               u8* out) {
  u64 size = page ? page : limit;
  u64 begin = i * size;
  u64 end = std::min(begin + size, limit);
  auto h = code_hash(hash_type, slice.read(begin, end - begin));
  std::memcpy(out, h.data(), h.size());
}

void check_limit(const SliceBytes& slice, u64 limit) {
  if (limit > slice.size())
    throw Error(Errc::usage, "",
                fmt::format("code limit 0x{:x} past the slice (0x{:x} bytes)",
                            limit, slice.size()));
}

// Sets the code limit and slot count of `blob`, a CodeDirectory already laid
// out with the new number of pages (the old hashes in place), and rehashes
// the pages the edit changed or the new limit added or cut.
void update_code_directory(SliceBytes& slice, const ByteView& old_sig,
                           const CodeDirectory& cd, u64 new_limit,
                           std::span<const ByteRange> changed,
                           std::span<u8> blob) {
  u64 hs = cd.hash_size;
  u64 page = cd.page_size();
  u64 old_limit = cd.effective_code_limit();
  u64 old_n = cd.n_code_slots;
  u64 new_n = page_count(new_limit, page);
  auto& h = *reinterpret_cast<cs::CodeDirectoryHeader*>(blob.data());
  h.length = static_cast<u32>(blob.size());
  h.nCodeSlots = static_cast<u32>(new_n);
  if (new_limit > std::numeric_limits<u32>::max()) {
    if (cd.version < kVersionCodeLimit64)
      throw Error(Errc::unsupported, old_sig.name(),
                  fmt::format("code limit 0x{:x} needs CodeDirectory version "
                              "0x20300, have 0x{:x}",
                              new_limit, cd.version));
    h.codeLimit = std::numeric_limits<u32>::max();
    h.codeLimit64 = new_limit;
  } else {
    h.codeLimit = static_cast<u32>(new_limit);
    if (cd.code_limit64) h.codeLimit64 = 0;
  }
  std::vector<bool> dirty(new_n, false);
  for (u64 i = old_n; i < new_n; ++i) dirty[i] = true;
  u64 page_bytes = page ? page : std::max(new_limit, old_limit) + 1;
  auto mark = [&](u64 begin, u64 end) {
    if (end <= begin) return;
    for (u64 i = begin / page_bytes; i < new_n && i * page_bytes < end; ++i)
      dirty[i] = true;
  };
  mark(std::min(old_limit, new_limit), std::max(old_limit, new_limit));
  for (const auto& r : changed) mark(r.offset, r.offset + r.size);
  if (!page) std::fill(dirty.begin(), dirty.end(), true);
  u8* hashes = blob.data() + cd.hash_offset;
  for (u64 i = 0; i < new_n; ++i)
    if (dirty[i])
      hash_page(slice, new_limit, page, cd.hash_type, i, hashes + i * hs);
}

// Whether re-signing for `new_limit` keeps the CodeDirectory's size (the
// same number of pages), so it can be updated where it lies.
bool keeps_size(const CodeDirectory& cd, u64 new_limit) {
  return page_count(new_limit, cd.page_size()) == cd.n_code_slots;
}

// One re-signed CodeDirectory: the old blob with its hash area resized to
// the new number of pages and the changed pages rehashed.
std::vector<u8> resign_code_directory(SliceBytes& slice,
                                      const ByteView& old_sig,
                                      const CodeDirectory& cd, u64 new_limit,
                                      std::span<const ByteRange> changed) {
  const u8* old_blob = old_sig.data() + cd.offset;
  u64 hs = cd.hash_size;
  u64 old_n = cd.n_code_slots;
  u64 new_n = page_count(new_limit, cd.page_size());
  u64 hashes_end = u64{cd.hash_offset} + old_n * hs;
  // Fields past the code hashes (an identifier, a team id or the 0x20500+
  // extras placed there) would move: no signer we know writes that.
  if (new_n != old_n &&
      (cd.ident_offset >= hashes_end ||
       (cd.team_offset && cd.team_offset >= hashes_end) ||
       (cd.scatter_offset && cd.scatter_offset >= hashes_end)))
    throw Error(Errc::unsupported, old_sig.name(),
                fmt::format("CodeDirectory {:#x}: data after its code hashes; "
                            "cannot resize it",
                            cd.slot));
  std::vector<u8> blob(old_blob, old_blob + hashes_end);
  blob.resize(u64{cd.hash_offset} + new_n * hs, 0);
  blob.insert(blob.end(), old_blob + hashes_end, old_blob + cd.length);
  update_code_directory(slice, old_sig, cd, new_limit, changed, blob);
  return blob;
}

}  // namespace

u64 adhoc_signature_size(u64 code_limit, std::string_view identifier) {
  return adhoc_headers_size(identifier) +
         page_count(code_limit, u64{1} << kAdhocPageLog2) * kAdhocHashSize;
}

std::vector<u8> build_adhoc_signature(std::span<const u8> slice,
                                      const SliceLayout& layout,
                                      std::string_view identifier) {
  SpanSliceBytes bytes(slice);
  check_limit(bytes, layout.code_limit);
  if (layout.code_limit > std::numeric_limits<u32>::max())
    throw Error(Errc::unsupported, "",
                fmt::format("code limit 0x{:x} too large for an ad-hoc "
                            "signature",
                            layout.code_limit));
  u64 size = adhoc_signature_size(layout.code_limit, identifier);
  u64 headers = adhoc_headers_size(identifier);
  u64 pages = page_count(layout.code_limit, u64{1} << kAdhocPageLog2);
  std::vector<u8> out(size, 0);
  auto& sb = *reinterpret_cast<cs::SuperBlobHeader*>(out.data());
  sb.magic = kMagicEmbeddedSignature;
  sb.length = static_cast<u32>(size);
  sb.count = 1;
  auto& bi = *reinterpret_cast<cs::BlobIndex*>(out.data() + sizeof(sb));
  bi.type = kSlotCodeDirectory;
  bi.offset = static_cast<u32>(kAdhocBlobHeaders);
  auto& cd = *reinterpret_cast<cs::CodeDirectoryHeader*>(out.data() +
                                                         kAdhocBlobHeaders);
  cd.magic = kMagicCodeDirectory;
  cd.length = static_cast<u32>(size - kAdhocBlobHeaders);
  cd.version = kVersionExecSeg;
  cd.flags = kFlagAdhoc | kFlagLinkerSigned;
  cd.hashOffset = static_cast<u32>(headers - kAdhocBlobHeaders);
  cd.identOffset = static_cast<u32>(cs::kCdSizeExecSeg);
  cd.nSpecialSlots = 0;
  cd.nCodeSlots = static_cast<u32>(pages);
  cd.codeLimit = static_cast<u32>(layout.code_limit);
  cd.hashSize = kAdhocHashSize;
  cd.hashType = kHashSha256;
  cd.platform = 0;
  cd.pageSize = kAdhocPageLog2;
  cd.execSegBase = layout.text_fileoff;
  cd.execSegLimit = layout.text_filesize;
  cd.execSegFlags = layout.is_execute ? kExecSegMainBinary : 0;
  std::memcpy(out.data() + kAdhocBlobHeaders + cs::kCdSizeExecSeg,
              identifier.data(), identifier.size());
  for (u64 i = 0; i < pages; ++i)
    hash_page(bytes, layout.code_limit, u64{1} << kAdhocPageLog2, kHashSha256,
              i, out.data() + headers + i * kAdhocHashSize);
  return out;
}

u64 resign_size(const ByteView& old_sig, u64 code_limit) {
  Signature sig = parse_signature(old_sig);
  u64 size = old_sig.size();
  for (const auto& cd : sig.code_directories) {
    u64 n = page_count(code_limit, cd.page_size());
    size = size - u64{cd.n_code_slots} * cd.hash_size + n * cd.hash_size;
  }
  return size;
}

std::vector<u8> resign(std::span<const u8> slice, const SliceLayout& layout,
                       const ByteView& old_sig,
                       std::span<const ByteRange> changed) {
  SpanSliceBytes bytes(slice);
  return resign(bytes, layout, old_sig, changed);
}

std::vector<u8> resign(SliceBytes& slice, const SliceLayout& layout,
                       const ByteView& old_sig,
                       std::span<const ByteRange> changed) {
  check_limit(slice, layout.code_limit);
  Signature sig = parse_signature(old_sig);
  std::vector<u8> out(old_sig.data(), old_sig.data() + old_sig.size());
  if (std::all_of(sig.code_directories.begin(), sig.code_directories.end(),
                  [&](const CodeDirectory& cd) {
                    return keeps_size(cd, layout.code_limit);
                  })) {
    // Updated in place: every blob keeps its offset. No copy per
    // CodeDirectory: a 200 MB file's is 1.6 MB, and an in-place edit's
    // time is mostly start-up and these copies.
    for (const auto& cd : sig.code_directories)
      update_code_directory(slice, old_sig, cd, layout.code_limit, changed,
                            std::span<u8>(out).subspan(cd.offset, cd.length));
    return out;
  }
  // New bytes per blob offset (CodeDirectories only; other blobs are copied).
  std::map<u64, std::vector<u8>> replaced;
  for (const auto& cd : sig.code_directories)
    replaced[cd.offset] =
        resign_code_directory(slice, old_sig, cd, layout.code_limit, changed);
  // Blobs in file order, each moved by the growth of those before it; the
  // gaps between them and the padding after the SuperBlob are kept.
  std::vector<BlobEntry> order = sig.blobs;
  std::sort(order.begin(), order.end(),
            [](const BlobEntry& a, const BlobEntry& b) {
              return a.offset < b.offset;
            });
  u64 first = order.front().offset;
  std::vector<u8> body(old_sig.data(), old_sig.data() + first);
  std::map<u64, u64> moved;  // old offset -> new offset
  u64 cursor = first;
  for (const auto& b : order) {
    if (moved.count(b.offset)) continue;  // two index entries, one blob
    if (b.offset < cursor)
      throw Error(
          Errc::unsupported, old_sig.name(),
          fmt::format("blobs overlap at 0x{:x}; cannot resize", b.offset));
    body.insert(body.end(), old_sig.data() + cursor, old_sig.data() + b.offset);
    moved[b.offset] = body.size();
    auto it = replaced.find(b.offset);
    if (it != replaced.end())
      body.insert(body.end(), it->second.begin(), it->second.end());
    else
      body.insert(body.end(), old_sig.data() + b.offset,
                  old_sig.data() + b.offset + b.length);
    cursor = b.offset + b.length;
  }
  body.insert(body.end(), old_sig.data() + cursor,
              old_sig.data() + old_sig.size());
  auto& sb = *reinterpret_cast<cs::SuperBlobHeader*>(body.data());
  sb.length = static_cast<u32>(sb.length + body.size() - old_sig.size());
  for (size_t i = 0; i < sig.blobs.size(); ++i) {
    auto& bi = *reinterpret_cast<cs::BlobIndex*>(
        body.data() + sizeof(cs::SuperBlobHeader) + i * sizeof(cs::BlobIndex));
    bi.offset = static_cast<u32>(moved.at(sig.blobs[i].offset));
  }
  return body;
}

}  // namespace libpkg::macho
