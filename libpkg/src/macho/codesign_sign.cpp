// SPDX-License-Identifier: BSD-3-Clause
// Signing a whole slice in memory: re-sign when signed, ad-hoc otherwise.
#include "libpkg/base/error.hpp"
#include "libpkg/macho/codesign.hpp"
#include "macho/codesign_layout.hpp"

namespace libpkg::macho {

std::vector<u8> resign_all_pages(const ByteView& slice,
                                 const SliceLayout& layout) {
  // Nothing says which pages changed: rehash them all, keeping the fields.
  ByteView old_sig =
      slice.slice(layout.sig_offset, layout.sig_size, "code signature");
  const ByteRange all{0, layout.code_limit};
  std::vector<u8> sig = resign(slice.span(), layout, old_sig, {&all, 1});
  // A CodeDirectory that hashed fewer pages than the code limit holds
  // changes size; a smaller one is zero-padded (as signers pad) so it still
  // fills LC_CODE_SIGNATURE's datasize. A larger one is returned as is:
  // callers must not write it in place.
  if (sig.size() < layout.sig_size) sig.resize(layout.sig_size, 0);
  return sig;
}

void sign_slice(std::vector<u8>& slice, const std::string& name,
                std::string_view identifier) {
  ByteView view(slice, name);
  cs::SliceCommands sc = cs::walk_slice(view);
  const SliceLayout& layout = sc.layout;
  if (layout.signed_()) {
    // resign reads the old signature while writing a new buffer: no alias.
    auto sig = resign_all_pages(view, layout);
    if (sig.size() > layout.sig_size) {
      // It grows: make room at the end of __LINKEDIT (place_signature
      // refuses when the signature is not last), then sign again, since
      // the placement patched header fields below the code limit.
      std::vector<u8> old_bytes(
          slice.begin() + static_cast<std::ptrdiff_t>(layout.sig_offset),
          slice.begin() +
              static_cast<std::ptrdiff_t>(layout.sig_offset + layout.sig_size));
      Placement p = place_signature(slice, name, sig.size());
      const ByteRange all{0, p.layout.code_limit};
      sig = resign(slice, p.layout, ByteView(old_bytes, name), {&all, 1});
    }
    if (layout.sig_offset + sig.size() > slice.size())
      throw Error(Errc::unsupported, name,
                  "the re-signed signature does not fit the slice");
    std::copy(sig.begin(), sig.end(),
              slice.begin() + static_cast<std::ptrdiff_t>(layout.sig_offset));
    return;
  }
  // A new signature goes 16-byte aligned after __LINKEDIT's data (checked
  // by place_signature), which is also its code limit.
  u64 limit = align_up(sc.linkedit_fileoff + sc.linkedit_filesize, 16);
  Placement p =
      place_signature(slice, name, adhoc_signature_size(limit, identifier));
  auto sig = build_adhoc_signature(slice, p.layout, identifier);
  std::copy(sig.begin(), sig.end(), slice.begin() + p.layout.sig_offset);
}

}  // namespace libpkg::macho
