// SPDX-License-Identifier: BSD-3-Clause
// The one HTML escaper of the nightly's pages (the report and the channel's
// index pages): safe in element content and in either kind of quoted
// attribute.
#include "nightly/html.hpp"

#include <gtest/gtest.h>

using libpkg::nightly::detail::append_html_escaped;
using libpkg::nightly::detail::html_escape;

TEST(NightlyHtml, EscapesTheFiveSpecialCharacters) {
  EXPECT_EQ(html_escape(R"(<a href="x">Tom & Jerry's</a>)"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;");
  EXPECT_EQ(html_escape(">=3.8"), "&gt;=3.8");
  EXPECT_EQ(html_escape(""), "");
  EXPECT_EQ(html_escape("plain ✓ text"), "plain ✓ text");
  std::string out = "<td>";
  append_html_escaped(out, "a&b");
  append_html_escaped(out, "'");
  EXPECT_EQ(out, "<td>a&amp;b&#39;");
}
