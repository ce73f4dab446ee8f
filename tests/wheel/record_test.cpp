// SPDX-License-Identifier: BSD-3-Clause
// RECORD: Python-csv-compatible quoting, rows, hashes.
#include "libpkg/wheel/record.hpp"

#include <gtest/gtest.h>

#include "libpkg/base/error.hpp"
#include "libpkg/base/sha256.hpp"

using libpkg::Error;
using libpkg::Sha256;
using namespace libpkg::wheel;

namespace {

TEST(Record, QuotesLikePythonCsv) {
  EXPECT_EQ(format_csv_row({"a", "b", "c"}), "a,b,c\n");
  EXPECT_EQ(format_csv_row({"a,b", "", "1"}), "\"a,b\",,1\n");
  EXPECT_EQ(format_csv_row({"say \"hi\"", "", ""}), "\"say \"\"hi\"\"\",,\n");
  EXPECT_EQ(format_csv_row({"line\nbreak", "x", "1"}), "\"line\nbreak\",x,1\n");
  EXPECT_EQ(format_csv_row({""}), "\"\"\n");  // as csv.writer does
}

TEST(Record, ParsesQuotedFields) {
  auto rows =
      parse_csv("\"a,b\",,1\n\"q\"\"x\",h,2\r\n\"multi\nline\",,\n", "RECORD");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"a,b", "", "1"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"q\"x", "h", "2"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"multi\nline", "", ""}));
  // No trailing newline, blank lines skipped.
  EXPECT_EQ(parse_csv("a,b,c\n\nd,e,f", "R").size(), 2u);
}

TEST(Record, RejectsMalformed) {
  EXPECT_THROW(parse_csv("\"open,,\n", "R"), Error);
  EXPECT_THROW(parse_csv("\"a\"b,,\n", "R"), Error);
  EXPECT_THROW(Record::parse("a,b\n", "R"), Error);
  EXPECT_THROW(Record::parse("a,b,c\n", "R"), Error);  // size not a number
  EXPECT_THROW(Record::parse("a,b,-1\n", "R"), Error);
  EXPECT_THROW(Record::parse(",sha256=x,1\n", "R"), Error);  // empty path
}

TEST(Record, RoundTrip) {
  Record r;
  auto digest = Sha256::of({});
  r.add({"pkg/a,b.py", record_hash(digest), 0});
  r.add({"pkg/\"q\".py", record_hash(digest), 12});
  r.add({"pkg-1.0.dist-info/RECORD", "", std::nullopt});
  std::string text = r.format();
  EXPECT_EQ(text,
            "\"pkg/a,b.py\",sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,"
            "0\n\"pkg/\"\"q\"\".py\",sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJW"
            "ZG3hSuFU,12\npkg-1.0.dist-info/RECORD,,\n");
  auto back = Record::parse(text, "RECORD");
  EXPECT_EQ(back.rows(), r.rows());
  ASSERT_NE(back.find("pkg/a,b.py"), nullptr);
  EXPECT_EQ(back.find("nope"), nullptr);
}

TEST(Record, Sha256Fields) {
  auto digest = Sha256::of({});
  std::string h = record_hash(digest);
  EXPECT_EQ(parse_sha256_hash(h), digest);
  EXPECT_EQ(parse_sha256_hash(h + "="), digest);  // tolerated padding
  EXPECT_FALSE(parse_sha256_hash("md5=1B2M2Y8AsgTpgAmY7PhCfg"));
  EXPECT_FALSE(parse_sha256_hash("sha256=short"));
  EXPECT_FALSE(parse_sha256_hash("sha256=" + std::string(43, '*')));
  EXPECT_EQ(hash_algorithm("sha1=abc"), "sha1");
  EXPECT_EQ(hash_algorithm("nohash"), "");
}

TEST(Record, RecordFiles) {
  EXPECT_TRUE(is_record_file("a-1.dist-info/RECORD"));
  EXPECT_TRUE(is_record_file("a-1.dist-info/RECORD.jws"));
  EXPECT_TRUE(is_record_file("a-1.dist-info/RECORD.p7s"));
  EXPECT_FALSE(is_record_file("RECORD"));
  EXPECT_FALSE(is_record_file("pkg/RECORD"));
  EXPECT_FALSE(is_record_file("a-1.dist-info/sub/RECORD"));
}

}  // namespace
