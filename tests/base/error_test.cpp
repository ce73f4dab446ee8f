// SPDX-License-Identifier: BSD-3-Clause
// libpkg::Error: the rendered what() and the fields frontends rely on.
#include "libpkg/base/error.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

namespace libpkg {
namespace {

TEST(Error, WhatWithFileAndOffset) {
  Error e(Errc::format, "lib.so", "bad thing", 0x1f);
  EXPECT_STREQ(e.what(), "lib.so: bad thing (at offset 0x1f)");
  EXPECT_EQ(e.code(), Errc::format);
  EXPECT_EQ(e.file(), "lib.so");
  EXPECT_EQ(e.message(), "bad thing");
  EXPECT_EQ(e.offset(), 0x1fu);
  EXPECT_EQ(e.exit_code(), 2);
}

TEST(Error, WhatWithoutOffset) {
  Error e(Errc::not_found, "a/b.so", "no such section");
  EXPECT_STREQ(e.what(), "a/b.so: no such section");
  EXPECT_FALSE(e.offset().has_value());
}

TEST(Error, OffsetZeroIsPrinted) {
  Error e(Errc::format, "x", "m", 0);
  EXPECT_STREQ(e.what(), "x: m (at offset 0x0)");
}

TEST(Error, WhatWithoutFile) {
  Error e(Errc::usage, "", "bad option");
  EXPECT_STREQ(e.what(), "bad option");
}

TEST(Error, LargeOffsetInHex) {
  Error e(Errc::format, "f", "m", 0xffffffffffffffff);
  EXPECT_STREQ(e.what(), "f: m (at offset 0xffffffffffffffff)");
}

TEST(Error, CodeNames) {
  EXPECT_STREQ(errc_name(Errc::io), "io");
  EXPECT_STREQ(errc_name(Errc::format), "format");
  EXPECT_STREQ(errc_name(Errc::unsupported), "unsupported");
  EXPECT_STREQ(errc_name(Errc::usage), "usage");
  EXPECT_STREQ(errc_name(Errc::not_found), "not_found");
}

TEST(Error, ThrowFormat) {
  try {
    throw_format("f.o", 0x40, "e_phentsize is 3, expected 56");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format);
    EXPECT_EQ(e.offset(), 0x40u);
    EXPECT_STREQ(e.what(),
                 "f.o: e_phentsize is 3, expected 56 (at offset 0x40)");
  }
}

TEST(Error, ThrowErrnoCarriesStrerror) {
  try {
    errno = ENOENT;
    throw_errno("missing.so", "cannot open");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io);
    EXPECT_EQ(e.file(), "missing.so");
    EXPECT_EQ(e.message(),
              std::string("cannot open: ") + std::strerror(ENOENT));
    EXPECT_FALSE(e.offset().has_value());
  }
}

TEST(Error, IsARuntimeError) {
  try {
    throw Error(Errc::io, "f", "m");
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "f: m");
  }
}

}  // namespace
}  // namespace libpkg
