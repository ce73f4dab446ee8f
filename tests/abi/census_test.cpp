// SPDX-License-Identifier: BSD-3-Clause
// The census classification rule on demangled names (no ELF needed):
// namespaces anchored at the start, patterns after them, basic_string_view
// not counted, one count per family.
#include "libpkg/abi/census.hpp"

#include <gtest/gtest.h>

namespace {

using libpkg::abi::CensusOptions;
using libpkg::abi::counts_as_cxx11;
using libpkg::abi::counts_as_pre_cxx11;

const std::string kNewString =
    "std::__cxx11::basic_string<char, std::char_traits<char>, "
    "std::allocator<char> >";
const std::string kOldString =
    "std::basic_string<char, std::char_traits<char>, std::allocator<char> >";

TEST(CensusRule, NewAndOldStrings) {
  CensusOptions o;
  EXPECT_TRUE(counts_as_cxx11("c10::f(" + kNewString + " const&)", o));
  EXPECT_FALSE(counts_as_pre_cxx11("c10::f(" + kNewString + " const&)", o));
  EXPECT_TRUE(counts_as_pre_cxx11("at::g(" + kOldString + ")", o));
  EXPECT_FALSE(counts_as_cxx11("at::g(" + kOldString + ")", o));
}

TEST(CensusRule, StringViewIsNeither) {
  CensusOptions o;
  std::string view =
      "c10::f(std::basic_string_view<char, std::char_traits<char> >)";
  EXPECT_FALSE(counts_as_cxx11(view, o));
  EXPECT_FALSE(counts_as_pre_cxx11(view, o));
}

TEST(CensusRule, Lists) {
  CensusOptions o;
  EXPECT_TRUE(counts_as_cxx11(
      "torch::h(std::__cxx11::list<int, std::allocator<int> > const&)", o));
  EXPECT_FALSE(counts_as_pre_cxx11(
      "torch::h(std::__cxx11::list<int, std::allocator<int> > const&)", o));
  EXPECT_TRUE(counts_as_pre_cxx11(
      "torch::h(std::list<int, std::allocator<int> > const&)", o));
  EXPECT_FALSE(
      counts_as_cxx11("torch::h(std::list<int, std::allocator<int> >)", o));
}

TEST(CensusRule, NamespaceAnchoredAtTheStart) {
  CensusOptions o;
  // Nested or later occurrences of the namespace don't count ...
  EXPECT_FALSE(counts_as_cxx11("foo::c10::f(" + kNewString + ")", o));
  EXPECT_FALSE(counts_as_cxx11("vtable for c10::X<" + kNewString + ">", o));
  // ... nor a template function whose demangled name starts with its
  // return type (re.match anchors at the start).
  EXPECT_FALSE(counts_as_cxx11(kNewString + " c10::str<int>(int const&)", o));
  // The pattern must come after the namespace prefix, anywhere after it.
  EXPECT_TRUE(counts_as_cxx11("c10::detail::X<int>::y(" + kNewString + ")", o));
  EXPECT_FALSE(counts_as_cxx11("caffe2", o));
  EXPECT_FALSE(counts_as_cxx11("c10::f()", o));
  // "c10:" is not "c10::".
  EXPECT_FALSE(counts_as_cxx11("c10:f(" + kNewString + ")", o));
}

TEST(CensusRule, BothFamiliesInOneSymbolCountOncePerFamily) {
  CensusOptions o;
  // New string and old list in one (odd but possible) signature: counts
  // for both families. (That a symbol matching two patterns of one family
  // counts once is checked on a real library by census_vs_nm.sh:
  // torch::jit::load(std::list<std::string>) against Python's any().)
  std::string both = "c10::f(" + kNewString + ", std::list<int>)";
  EXPECT_TRUE(counts_as_cxx11(both, o));
  EXPECT_TRUE(counts_as_pre_cxx11(both, o));
}

TEST(CensusRule, CustomNamespacesAndPatterns) {
  CensusOptions o;
  o.namespaces = {"mylib::"};
  EXPECT_FALSE(counts_as_cxx11("c10::f(" + kNewString + ")", o));
  EXPECT_TRUE(counts_as_cxx11("mylib::f(" + kNewString + ")", o));
  o.cxx11_patterns = {"std::__cxx11::list"};
  EXPECT_FALSE(counts_as_cxx11("mylib::f(" + kNewString + ")", o));
}

TEST(CensusRule, AbiNames) {
  using libpkg::abi::CxxAbi;
  EXPECT_STREQ(libpkg::abi::cxx_abi_name(CxxAbi::cxx11), "cxx11");
  EXPECT_STREQ(libpkg::abi::cxx_abi_name(CxxAbi::pre_cxx11), "pre_cxx11");
  EXPECT_STREQ(libpkg::abi::cxx_abi_name(CxxAbi::mixed), "mixed");
  EXPECT_STREQ(libpkg::abi::cxx_abi_name(CxxAbi::none), "none");
}

}  // namespace
