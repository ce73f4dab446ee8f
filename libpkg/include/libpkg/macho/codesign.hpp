// SPDX-License-Identifier: BSD-3-Clause
// Apple code signatures (the LC_CODE_SIGNATURE SuperBlob) of one thin Mach-O
// slice: parse, verify, build ad-hoc, re-sign.
//
// Everything works on the bytes of ONE thin slice plus a `SliceLayout` that
// says where the signed range, __TEXT and the signature are, so this needs no
// Mach-O reader: the reader (or `find_slice_layout` below, for a 64-bit thin
// slice) supplies the layout. Signatures are big-endian whatever the slice's
// byte order. A signature covers the bytes [0, code limit) of the slice in
// pages (4 KiB for ours); every CodeDirectory (the primary one and the
// alternates with other hash types) stores one hash per page.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "libpkg/base/bytes.hpp"
#include "libpkg/base/integers.hpp"
#include "libpkg/macho/byte_range.hpp"

namespace libpkg::macho {

/// Where the parts a signature depends on sit inside the slice.
struct SliceLayout {
  u64 code_limit = 0;  // bytes hashed: LC_CODE_SIGNATURE's dataoff
  u64 text_fileoff = 0;
  u64 text_filesize = 0;
  bool is_execute = false;  // MH_EXECUTE: the exec segment is the main binary
  u64 sig_offset = 0;       // LC_CODE_SIGNATURE dataoff (0/0: unsigned)
  u64 sig_size = 0;         // LC_CODE_SIGNATURE datasize
  /// True when the slice has an LC_CODE_SIGNATURE with data.
  bool signed_() const { return sig_size != 0; }
};

/// The layout of a 64-bit little-endian thin slice, from its load commands
/// (bounds-checked; Error(Errc::format) names the slice, also when it is not
/// 64-bit little-endian or has no __TEXT). Until the Mach-O reader
/// provides it, this is the one place that walks load commands here.
SliceLayout find_slice_layout(const ByteView& slice);

// Magic numbers and constants of the format (Apple's cs_blobs.h names).
inline constexpr u32 kMagicEmbeddedSignature = 0xfade0cc0;
inline constexpr u32 kMagicCodeDirectory = 0xfade0c02;
inline constexpr u32 kMagicRequirements = 0xfade0c01;
inline constexpr u32 kMagicEntitlements = 0xfade7171;
inline constexpr u32 kMagicDerEntitlements = 0xfade7172;
inline constexpr u32 kMagicCmsWrapper = 0xfade0b01;
inline constexpr u32 kSlotCodeDirectory = 0;
inline constexpr u32 kSlotRequirements = 2;
inline constexpr u32 kSlotEntitlements = 5;
inline constexpr u32 kSlotDerEntitlements = 7;
inline constexpr u32 kSlotAlternateCodeDirectories = 0x1000;  // ..0x1004
inline constexpr u32 kSlotCmsSignature = 0x10000;
inline constexpr u32 kFlagAdhoc = 0x2;
inline constexpr u32 kFlagLinkerSigned = 0x20000;
inline constexpr u64 kExecSegMainBinary = 0x1;
inline constexpr u8 kHashSha1 = 1;
inline constexpr u8 kHashSha256 = 2;
inline constexpr u8 kHashSha256Truncated = 3;
inline constexpr u8 kHashSha384 = 4;
inline constexpr u32 kVersionScatter = 0x20100;
inline constexpr u32 kVersionTeam = 0x20200;
inline constexpr u32 kVersionCodeLimit64 = 0x20300;
inline constexpr u32 kVersionExecSeg = 0x20400;

/// One parsed CodeDirectory blob: its slot, header fields and identifier.
struct CodeDirectory {
  u32 slot = 0;    // its BlobIndex type: 0 or 0x1000 + n (alternate)
  u64 offset = 0;  // of the blob inside the signature
  u32 length = 0;
  u32 version = 0;
  u32 flags = 0;
  u32 hash_offset = 0;
  u32 ident_offset = 0;
  u32 n_special_slots = 0;
  u32 n_code_slots = 0;
  u32 code_limit = 0;
  u8 hash_size = 0;
  u8 hash_type = 0;
  u8 platform = 0;
  u8 page_size_log2 = 0;   // 0: one page covering everything
  u32 scatter_offset = 0;  // version >= 0x20100
  u32 team_offset = 0;     // version >= 0x20200
  u64 code_limit64 = 0;    // version >= 0x20300
  u64 exec_seg_base = 0;   // version >= 0x20400
  u64 exec_seg_limit = 0;
  u64 exec_seg_flags = 0;
  std::string identifier;

  /// The page size in bytes, 0 when one page covers the whole code limit.
  u64 page_size() const {
    return page_size_log2 ? u64{1} << page_size_log2 : 0;
  }
  /// The code limit in effect (codeLimit64 when set).
  u64 effective_code_limit() const {
    return code_limit64 ? code_limit64 : code_limit;
  }
};

/// One BlobIndex entry (requirements, entitlements and the CMS wrapper are
/// kept opaque: type, magic and where they are).
struct BlobEntry {
  u32 type = 0;
  u32 magic = 0;
  u64 offset = 0;
  u64 length = 0;
};

/// A parsed SuperBlob: its blob index and every CodeDirectory.
struct Signature {
  u64 length = 0;  // the SuperBlob's length field
  std::vector<BlobEntry> blobs;
  std::vector<CodeDirectory> code_directories;  // in index order
  /// True when the signature has a non-empty CMS wrapper (not ad-hoc).
  bool has_cms() const;  // a non-empty CMS wrapper (not ad-hoc)
};

/// Parses the signature bytes (the LC_CODE_SIGNATURE range). Format errors
/// name the blob and the field ("CodeDirectory 0: hashOffset 0x... +
/// nCodeSlots*hashSize past blob length 0x...").
Signature parse_signature(const ByteView& sig);

/// Hash of `bytes` with a CodeDirectory hash type (SHA-1, SHA-256, SHA-256
/// truncated to 20 bytes, SHA-384); other types throw Error(Errc::unsupported).
std::vector<u8> code_hash(u8 hash_type, std::span<const u8> bytes);

/// One hash that does not match: which CodeDirectory, which slot, and what.
struct VerifyProblem {
  size_t cd = 0;     // index into Signature::code_directories
  i64 slot = 0;      // page number (>= 0) or -special slot
  std::string what;  // "page 3 (0x3000-0x4000): hash mismatch"
};

/// The parsed signature of a slice and every problem verify found.
struct VerifyReport {
  Signature signature;
  std::vector<VerifyProblem> problems;
  /// True when no hash mismatched.
  bool ok() const { return problems.empty(); }
};

/// Recomputes every code-page hash of every CodeDirectory and the special
/// slots that hash blobs of the signature (requirements, entitlements);
/// mismatches are collected, not thrown. Throws Error(Errc::not_found) for an
/// unsigned slice and parse_signature's errors.
VerifyReport verify_signature(const ByteView& slice, const SliceLayout& layout);

/// The size of the ad-hoc signature `build_adhoc_signature` writes.
u64 adhoc_signature_size(u64 code_limit, std::string_view identifier);

/// An ad-hoc signature laid out exactly as ld64.lld writes its linker
/// signature: SHA-256, 4 KiB pages, CS_ADHOC|CS_LINKER_SIGNED, version
/// 0x20400, exec segment = __TEXT. Hashes slice[0, layout.code_limit); throws
/// Error(Errc::usage) when that is past the slice, Errc::unsupported when
/// it passes 4 GiB.
std::vector<u8> build_adhoc_signature(std::span<const u8> slice,
                                      const SliceLayout& layout,
                                      std::string_view identifier);

/// The bytes of the slice being signed, read a range at a time, so a
/// re-signature that rehashes a few pages of a 200 MB slice reads only those
/// (the editor serves them from the mapped file plus its planned patches;
/// nothing copies the slice).
class SliceBytes {
 public:
  virtual ~SliceBytes() = default;
  /// The slice's size in bytes.
  virtual u64 size() const = 0;
  /// slice[offset, offset + size), valid until the next read. Throws
  /// Error(Errc::format) when the range is not inside size() (a signature
  /// whose code limit or page table points past the slice).
  std::span<const u8> read(u64 offset, u64 size);

 protected:
  /// The range, already checked to lie inside size().
  virtual std::span<const u8> read_checked(u64 offset, u64 size) = 0;
};

/// SliceBytes over bytes already in memory.
class SpanSliceBytes final : public SliceBytes {
 public:
  /// Reads from \p bytes, which must outlive this object.
  explicit SpanSliceBytes(std::span<const u8> bytes) : bytes_(bytes) {}
  /// The span's size.
  u64 size() const override { return bytes_.size(); }

 protected:
  /// bytes[offset, offset + size) (SliceBytes::read checked the range).
  std::span<const u8> read_checked(u64 offset, u64 size) override {
    return bytes_.subspan(offset, size);
  }

 private:
  std::span<const u8> bytes_;
};

/// Recomputes, in every CodeDirectory of `sig`, only the hashes of the code
/// pages that intersect `ranges` (slice offsets; pages past a
/// CodeDirectory's slots are skipped), reading just those pages through
/// `slice`: a sample check that costs a few pages, where verify_signature
/// reads the whole code limit. Mismatches come back as verify_signature
/// reports them. Throws parse_signature's errors, and SliceBytes::read's
/// when a page lies past the slice.
std::vector<VerifyProblem> verify_pages(SliceBytes& slice, const ByteView& sig,
                                        std::span<const ByteRange> ranges);

/// The size of `old_sig` re-signed for a slice whose code limit is now
/// `code_limit` (equal to the old size when the limit is unchanged); throws
/// parse_signature's errors.
u64 resign_size(const ByteView& old_sig, u64 code_limit);

/// Re-signs keeping every field of every CodeDirectory (identifier, flags,
/// version, exec segment, hash type, special slots) and every other blob;
/// only the pages touching `changed` (and pages past the old code limit) are
/// rehashed. `layout.code_limit` is the new code limit; the result has
/// `resign_size(old_sig, layout.code_limit)` bytes. A CMS signature is kept
/// as is (it no longer matches: only its signer could renew it).
/// The other pages' hashes are copied from the old CodeDirectory without
/// being checked: checking them would read the whole slice, which is what
/// this avoids. So a page whose hash was already wrong stays wrong (`pkgtool
/// macho verify` reports it); the re-signature only vouches for the pages
/// that changed. Only those pages are read from `slice`. Throws
/// Error(Errc::usage) when the code limit is past the slice, Errc::unsupported
/// when a CodeDirectory cannot be resized, and parse_signature's errors.
std::vector<u8> resign(SliceBytes& slice, const SliceLayout& layout,
                       const ByteView& old_sig,
                       std::span<const ByteRange> changed);
/// The same over bytes in memory.
std::vector<u8> resign(std::span<const u8> slice, const SliceLayout& layout,
                       const ByteView& old_sig,
                       std::span<const ByteRange> changed);

/// What place_signature did: the slice's new layout and the byte ranges it
/// changed below the code limit.
struct Placement {
  SliceLayout layout;
  std::vector<ByteRange> changed;
};
/// Makes room for a signature of `new_size` bytes in a 64-bit thin slice
/// whose signature is the last thing in __LINKEDIT (adding LC_CODE_SIGNATURE
/// in the header padding when the slice is unsigned): updates dataoff /
/// datasize, __LINKEDIT's filesize/vmsize, resizes `slice` and returns the
/// new layout plus the byte ranges it changed below the code limit. Throws a
/// format error when the signature is not at the end of __LINKEDIT or the
/// header has no room.
Placement place_signature(std::vector<u8>& slice, const std::string& name,
                          u64 new_size);

/// The signature of a signed slice re-signed keeping its fields, every page
/// rehashed, to be written back at `layout.sig_offset` (so a caller can patch
/// a file in place instead of copying the slice). Smaller than
/// `layout.sig_size` it is zero-padded to it; it is larger when the old
/// CodeDirectory hashed fewer pages than the code limit holds, and must then
/// not be written in place (sign_slice grows the slice instead). Throws as
/// resign does.
std::vector<u8> resign_all_pages(const ByteView& slice,
                                 const SliceLayout& layout);

/// Signs a 64-bit thin slice in memory: a signed slice is re-signed keeping
/// its signature's fields (every page rehashed; a signature that grows is
/// moved with place_signature, which throws when it is not last); an unsigned
/// one gets an ad-hoc signature named `identifier` after __LINKEDIT. Throws
/// Error(Errc::format) on bad load commands and the errors of the calls above.
void sign_slice(std::vector<u8>& slice, const std::string& name,
                std::string_view identifier);

}  // namespace libpkg::macho
