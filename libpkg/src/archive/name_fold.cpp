// SPDX-License-Identifier: BSD-3-Clause
#include "archive/name_fold.hpp"

#include <fmt/format.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include "libpkg/base/error.hpp"

namespace libpkg::archive::names {

bool is_ascii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::optional<std::string> nfkc_casefold(std::string_view segment) {
  if (is_ascii(segment)) return ascii_lower(segment);
  UErrorCode err = U_ZERO_ERROR;
  const UNormalizer2* norm = unorm2_getNFKCCasefoldInstance(&err);
  if (U_FAILURE(err))
    throw Error(
        Errc::io, "ICU",
        fmt::format("NFKC_Casefold data unavailable: {}", u_errorName(err)));
  std::u16string utf16(segment.size(), u'\0');
  int32_t len = 0;
  u_strFromUTF8(reinterpret_cast<UChar*>(utf16.data()),
                static_cast<int32_t>(utf16.size()), &len, segment.data(),
                static_cast<int32_t>(segment.size()), &err);
  if (U_FAILURE(err)) return std::nullopt;
  utf16.resize(static_cast<std::size_t>(len));
  // NFKC_Casefold can expand (ligatures, U+FDFA expands to 18 code units).
  std::u16string folded(utf16.size() * 18 + 16, u'\0');
  int32_t flen =
      unorm2_normalize(norm, reinterpret_cast<const UChar*>(utf16.data()), len,
                       reinterpret_cast<UChar*>(folded.data()),
                       static_cast<int32_t>(folded.size()), &err);
  if (U_FAILURE(err))
    throw Error(Errc::io, "ICU",
                fmt::format("NFKC_Casefold failed: {}", u_errorName(err)));
  std::string out(static_cast<std::size_t>(flen) * 3 + 1, '\0');
  int32_t olen = 0;
  u_strToUTF8(out.data(), static_cast<int32_t>(out.size()), &olen,
              reinterpret_cast<const UChar*>(folded.data()), flen, &err);
  if (U_FAILURE(err))
    throw Error(Errc::io, "ICU",
                fmt::format("UTF-16 to UTF-8 failed: {}", u_errorName(err)));
  out.resize(static_cast<std::size_t>(olen));
  return out;
}

}  // namespace libpkg::archive::names
