// SPDX-License-Identifier: BSD-3-Clause
// Name folding shared by the zip reader's extraction plan and the zip
// writer, so the writer never produces a name the reader refuses: both see
// two names as one file when their segments' Unicode NFKC case folds match
// (what macOS and Windows file systems merge), and both need valid UTF-8
// for a name flagged UTF-8 (the writer flags every non-ASCII name).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace libpkg::archive::names {

bool is_ascii(std::string_view s);
std::string ascii_lower(std::string_view s);

// NFKC_Casefold of one segment; nullopt when it is not valid UTF-8.
std::optional<std::string> nfkc_casefold(std::string_view segment);

}  // namespace libpkg::archive::names
