// SPDX-License-Identifier: BSD-3-Clause
// Parses an embedded signature (SuperBlob) and every CodeDirectory in it.
// Every offset and count is checked against the blob that holds it before
// use, and a failure names the blob and the field.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "libpkg/base/digest.hpp"
#include "libpkg/macho/codesign.hpp"
#include "macho/codesign_format.hpp"

namespace libpkg::macho {
namespace {

bool is_code_directory_slot(u32 type) {
  return type == kSlotCodeDirectory ||
         (type >= kSlotAlternateCodeDirectories &&
          type < kSlotAlternateCodeDirectories + 5);
}

CodeDirectory parse_code_directory(const ByteView& sig, size_t index, u32 slot,
                                   u64 offset, u64 length) {
  auto fail = [&](const std::string& what) {
    throw_format(sig.name(), sig.base() + offset,
                 fmt::format("CodeDirectory {}: {}", index, what));
  };
  if (length < cs::kCdSizeEarliest)
    fail(fmt::format("length 0x{:x} shorter than its header", length));
  ByteView blob = sig.slice(offset, length, "CodeDirectory");
  // Copy the header (zero-filled past `length`) so older versions read as 0.
  cs::CodeDirectoryHeader h{};
  std::memcpy(&h, blob.data(),
              std::min<u64>(length, sizeof(cs::CodeDirectoryHeader)));
  CodeDirectory cd;
  cd.slot = slot;
  cd.offset = offset;
  cd.length = h.length;
  cd.version = h.version;
  u64 header = cs::cd_header_size(cd.version);
  if (length < header)
    fail(
        fmt::format("version 0x{:x} needs 0x{:x} header bytes, blob length "
                    "0x{:x}",
                    cd.version, header, length));
  cd.flags = h.flags;
  cd.hash_offset = h.hashOffset;
  cd.ident_offset = h.identOffset;
  cd.n_special_slots = h.nSpecialSlots;
  cd.n_code_slots = h.nCodeSlots;
  cd.code_limit = h.codeLimit;
  cd.hash_size = h.hashSize;
  cd.hash_type = h.hashType;
  cd.platform = h.platform;
  cd.page_size_log2 = h.pageSize;
  if (cd.version >= kVersionScatter) cd.scatter_offset = h.scatterOffset;
  if (cd.version >= kVersionTeam) cd.team_offset = h.teamOffset;
  if (cd.version >= kVersionCodeLimit64) cd.code_limit64 = h.codeLimit64;
  if (cd.version >= kVersionExecSeg) {
    cd.exec_seg_base = h.execSegBase;
    cd.exec_seg_limit = h.execSegLimit;
    cd.exec_seg_flags = h.execSegFlags;
  }
  if (cd.hash_size == 0 || cd.hash_size > 64)
    fail(fmt::format("hashSize {} out of range", cd.hash_size));
  if (cd.page_size_log2 != 0 &&
      (cd.page_size_log2 < 9 || cd.page_size_log2 > 24))
    fail(fmt::format("pageSize 2^{} out of range", cd.page_size_log2));
  u64 special = u64{cd.n_special_slots} * cd.hash_size;
  if (special > cd.hash_offset || cd.hash_offset - special < header)
    fail(
        fmt::format("hashOffset 0x{:x} - nSpecialSlots*hashSize (0x{:x}) "
                    "overlaps the header (0x{:x} bytes)",
                    cd.hash_offset, special, header));
  u64 code = u64{cd.n_code_slots} * cd.hash_size;
  if (u64{cd.hash_offset} + code > length)
    fail(
        fmt::format("hashOffset 0x{:x} + nCodeSlots*hashSize (0x{:x}) past "
                    "blob length 0x{:x}",
                    cd.hash_offset, code, length));
  u64 limit = cd.effective_code_limit();
  u64 page = cd.page_size();
  u64 needed = page == 0 ? (limit ? 1 : 0) : (limit + page - 1) / page;
  if (needed != cd.n_code_slots)
    fail(
        fmt::format("nCodeSlots {} does not cover codeLimit 0x{:x} in pages "
                    "of 0x{:x} ({} needed)",
                    cd.n_code_slots, limit, page, needed));
  if (cd.ident_offset < header || cd.ident_offset >= length)
    fail(fmt::format("identOffset 0x{:x} outside blob length 0x{:x}",
                     cd.ident_offset, length));
  cd.identifier = std::string(blob.cstring(cd.ident_offset, "identifier"));
  if (cd.team_offset != 0 &&
      (cd.team_offset < header || cd.team_offset >= length))
    fail(fmt::format("teamOffset 0x{:x} outside blob length 0x{:x}",
                     cd.team_offset, length));
  return cd;
}

}  // namespace

bool Signature::has_cms() const {
  for (const auto& b : blobs)
    if (b.type == kSlotCmsSignature && b.length > 8) return true;
  return false;
}

Signature parse_signature(const ByteView& sig) {
  const auto& sb = sig.at<cs::SuperBlobHeader>(0, "SuperBlob header");
  if (sb.magic != kMagicEmbeddedSignature)
    throw_format(sig.name(), sig.base(),
                 fmt::format("bad SuperBlob magic 0x{:08x} (expected "
                             "0x{:08x})",
                             sb.magic.value(), kMagicEmbeddedSignature));
  Signature out;
  out.length = sb.length;
  if (out.length > sig.size() || out.length < sizeof(cs::SuperBlobHeader))
    throw_format(sig.name(), sig.base(),
                 fmt::format("SuperBlob length 0x{:x} out of range (signature "
                             "0x{:x} bytes)",
                             out.length, sig.size()));
  ByteView body = sig.slice(0, out.length, "SuperBlob");
  u64 count = sb.count;
  if (count >
      (out.length - sizeof(cs::SuperBlobHeader)) / sizeof(cs::BlobIndex))
    throw_format(sig.name(), sig.base(),
                 fmt::format("SuperBlob count {} past its length 0x{:x}", count,
                             out.length));
  for (u64 i = 0; i < count; ++i) {
    const auto& bi = body.at<cs::BlobIndex>(
        sizeof(cs::SuperBlobHeader) + i * sizeof(cs::BlobIndex), "BlobIndex");
    BlobEntry e;
    e.type = bi.type;
    e.offset = bi.offset;
    const auto* gb = body.contains(e.offset, sizeof(cs::GenericBlob))
                         ? &body.at<cs::GenericBlob>(e.offset, "blob")
                         : nullptr;
    if (gb == nullptr || gb->length < sizeof(cs::GenericBlob) ||
        !body.contains(e.offset, gb->length))
      throw_format(
          sig.name(), sig.base() + e.offset,
          fmt::format(
              "blob {} (type 0x{:x}) at 0x{:x}{} past the "
              "SuperBlob length 0x{:x}",
              i, e.type, e.offset,
              gb ? fmt::format(" length 0x{:x}", gb->length.value()) : "",
              out.length));
    e.magic = gb->magic;
    e.length = gb->length;
    out.blobs.push_back(e);
    if (is_code_directory_slot(e.type)) {
      if (e.magic != kMagicCodeDirectory)
        throw_format(sig.name(), sig.base() + e.offset,
                     fmt::format("CodeDirectory {}: bad magic 0x{:08x}",
                                 out.code_directories.size(), e.magic));
      out.code_directories.push_back(parse_code_directory(
          body, out.code_directories.size(), e.type, e.offset, e.length));
    }
  }
  if (out.code_directories.empty())
    throw_format(sig.name(), sig.base(), "signature has no CodeDirectory");
  return out;
}

std::vector<u8> code_hash(u8 hash_type, std::span<const u8> bytes) {
  switch (hash_type) {
    case kHashSha1:
      return digest_of(DigestKind::sha1, bytes);
    case kHashSha256:
      return digest_of(DigestKind::sha256, bytes);
    case kHashSha256Truncated: {
      auto d = digest_of(DigestKind::sha256, bytes);
      d.resize(20);
      return d;
    }
    case kHashSha384:
      return digest_of(DigestKind::sha384, bytes);
    default:
      throw Error(
          Errc::unsupported, "",
          fmt::format("CodeDirectory hash type {} not supported", hash_type));
  }
}

}  // namespace libpkg::macho
