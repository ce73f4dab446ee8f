// SPDX-License-Identifier: BSD-3-Clause
// HTML escaping for the pages the nightly writes (the report, the channel's
// PEP 503 and libtorch pages). One escaper for all of them: text escaped
// here is safe as element content and as an attribute value in either
// quote, since & < > " and ' all become character references.
#pragma once

#include <string>
#include <string_view>

namespace libpkg::nightly::detail {

// Appends `s` to `out` escaped (appending, so a page of 10^5 cells is built
// in one buffer without a temporary string per value).
inline void append_html_escaped(std::string& out, std::string_view s) {
  std::size_t plain = 0;  // start of the run of characters copied as is
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char* entity = nullptr;
    switch (s[i]) {
      case '&':
        entity = "&amp;";
        break;
      case '<':
        entity = "&lt;";
        break;
      case '>':
        entity = "&gt;";
        break;
      case '"':
        entity = "&quot;";
        break;
      case '\'':
        entity = "&#39;";
        break;
      default:
        continue;
    }
    out.append(s.substr(plain, i - plain));
    out.append(entity);
    plain = i + 1;
  }
  out.append(s.substr(plain));
}

// `s` escaped as above.
inline std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  append_html_escaped(out, s);
  return out;
}

}  // namespace libpkg::nightly::detail
