// SPDX-License-Identifier: BSD-3-Clause
// Verifies a signature by recomputing what it hashes: every code page of
// every CodeDirectory and the special slots that hash blobs of the same
// signature. Problems are collected (not thrown) so a report names every
// bad page; only an unreadable signature throws.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "libpkg/base/error.hpp"
#include "libpkg/macho/codesign.hpp"

namespace libpkg::macho {

std::span<const u8> SliceBytes::read(u64 offset, u64 n) {
  if (offset > size() || n > size() - offset)
    throw Error(Errc::format, "",
                fmt::format("read of 0x{:x} bytes at 0x{:x} past the slice "
                            "(0x{:x} bytes)",
                            n, offset, size()));
  return read_checked(offset, n);
}

namespace {

// "page 2 (0x2000-0x3000): hash mismatch", the words both verifiers use.
std::string page_mismatch(u64 i, u64 begin, u64 end) {
  return fmt::format("page {} (0x{:x}-0x{:x}): hash mismatch", i, begin, end);
}

// Special slots whose content is a blob of the signature itself.
constexpr u32 kCheckableSlots[] = {kSlotRequirements, kSlotEntitlements,
                                   kSlotDerEntitlements};

void verify_code_directory(const ByteView& slice, const ByteView& sig,
                           const Signature& parsed, size_t index,
                           const SliceLayout& layout,
                           std::vector<VerifyProblem>& problems) {
  const CodeDirectory& cd = parsed.code_directories[index];
  auto problem = [&](i64 slot, std::string what) {
    problems.push_back({index, slot, std::move(what)});
  };
  std::vector<u8> probe = code_hash(cd.hash_type, {});
  if (probe.size() != cd.hash_size) {
    problem(0, fmt::format("hashSize {} does not match hash type {} ({} "
                           "bytes)",
                           cd.hash_size, cd.hash_type, probe.size()));
    return;
  }
  u64 limit = cd.effective_code_limit();
  if (limit != layout.code_limit)
    problem(0, fmt::format("codeLimit 0x{:x} differs from LC_CODE_SIGNATURE "
                           "dataoff 0x{:x}",
                           limit, layout.code_limit));
  if (limit > slice.size()) {
    problem(0, fmt::format("codeLimit 0x{:x} past the slice (0x{:x} bytes)",
                           limit, slice.size()));
    return;
  }
  const u8* hashes = sig.data() + cd.offset + cd.hash_offset;
  u64 page = cd.page_size() ? cd.page_size() : std::max<u64>(limit, 1);
  for (u64 i = 0; i < cd.n_code_slots; ++i) {
    u64 begin = i * page;
    u64 end = std::min(begin + page, limit);
    auto got =
        code_hash(cd.hash_type, slice.span().subspan(begin, end - begin));
    if (std::memcmp(got.data(), hashes + i * cd.hash_size, cd.hash_size) != 0)
      problem(static_cast<i64>(i), page_mismatch(i, begin, end));
  }
  for (u32 slot : kCheckableSlots) {
    if (slot > cd.n_special_slots) continue;
    const u8* stored = hashes - u64{slot} * cd.hash_size;
    auto blob =
        std::find_if(parsed.blobs.begin(), parsed.blobs.end(),
                     [&](const BlobEntry& b) { return b.type == slot; });
    bool stored_zero =
        std::all_of(stored, stored + cd.hash_size, [](u8 b) { return b == 0; });
    if (blob == parsed.blobs.end()) {
      if (!stored_zero)
        problem(
            -static_cast<i64>(slot),
            fmt::format("special slot -{}: hash present but no blob", slot));
      continue;
    }
    auto got =
        code_hash(cd.hash_type, sig.span().subspan(blob->offset, blob->length));
    if (std::memcmp(got.data(), stored, cd.hash_size) != 0)
      problem(-static_cast<i64>(slot),
              fmt::format("special slot -{} (blob type {}): hash mismatch",
                          slot, slot));
  }
}

}  // namespace

std::vector<VerifyProblem> verify_pages(SliceBytes& slice, const ByteView& sig,
                                        std::span<const ByteRange> ranges) {
  const Signature parsed = parse_signature(sig);
  std::vector<VerifyProblem> problems;
  for (size_t index = 0; index < parsed.code_directories.size(); ++index) {
    const CodeDirectory& cd = parsed.code_directories[index];
    const u64 limit = cd.effective_code_limit();
    const u64 page = cd.page_size() ? cd.page_size() : std::max<u64>(limit, 1);
    const u8* hashes = sig.data() + cd.offset + cd.hash_offset;
    std::vector<u64> pages;
    for (const auto& r : ranges) {
      if (r.size == 0) continue;
      for (u64 i = r.offset / page;
           i < cd.n_code_slots && i * page < r.offset + r.size; ++i)
        pages.push_back(i);
    }
    std::sort(pages.begin(), pages.end());
    pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
    for (u64 i : pages) {
      const u64 begin = i * page, end = std::min(begin + page, limit);
      if (begin >= end) continue;
      auto got = code_hash(cd.hash_type, slice.read(begin, end - begin));
      if (got.size() != cd.hash_size ||
          std::memcmp(got.data(), hashes + i * cd.hash_size, cd.hash_size) != 0)
        problems.push_back(
            {index, static_cast<i64>(i), page_mismatch(i, begin, end)});
    }
  }
  return problems;
}

VerifyReport verify_signature(const ByteView& slice,
                              const SliceLayout& layout) {
  if (!layout.signed_())
    throw Error(Errc::not_found, slice.name(),
                "not signed (no LC_CODE_SIGNATURE)");
  ByteView sig =
      slice.slice(layout.sig_offset, layout.sig_size, "code signature");
  VerifyReport report;
  report.signature = parse_signature(sig);
  for (size_t i = 0; i < report.signature.code_directories.size(); ++i)
    verify_code_directory(slice, sig, report.signature, i, layout,
                          report.problems);
  return report;
}

}  // namespace libpkg::macho
