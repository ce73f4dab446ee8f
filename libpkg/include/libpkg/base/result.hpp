// SPDX-License-Identifier: BSD-3-Clause
// Result<T>: a value or the Error that kept it from being made.
//
// Exceptions stay the library's channel for failures. A probe ("is this an
// ELF file?", "does this name parse?") is different: not finding what it
// looks for is an answer, not a failure, and catching every Error to get
// that answer also swallows the real failures (permission denied, EIO) it
// should report. The try_ forms return Result instead, and `attempt`
// captures only the error codes the caller means as "no".
#pragma once

#include <initializer_list>
#include <type_traits>
#include <utility>
#include <variant>

#include "libpkg/base/error.hpp"

namespace libpkg {

/// A value, or the Error that would have been thrown instead of it.
template <typename T>
class Result {
 public:
  /// A result holding `value`.
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  /// A result holding `error`.
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}

  /// True when a value is held.
  bool ok() const { return v_.index() == 0; }
  /// True when a value is held.
  explicit operator bool() const { return ok(); }

  /// The value; throws the held Error when there is none.
  T& value() & {
    if (!ok()) throw std::get<1>(v_);
    return std::get<0>(v_);
  }
  /// The value, moved out; throws the held Error when there is none.
  T&& value() && {
    if (!ok()) throw std::get<1>(v_);
    return std::get<0>(std::move(v_));
  }
  /// The error; only valid when !ok().
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

/// Runs `f` and returns its value, or the Error it threw when the error's
/// code is one of `expected`; any other Error propagates (an io error is
/// never taken for "no").
template <typename F>
auto attempt(std::initializer_list<Errc> expected, F&& f)
    -> Result<std::invoke_result_t<F>> {
  try {
    return std::forward<F>(f)();
  } catch (const Error& e) {
    for (Errc c : expected)
      if (e.code() == c) return e;
    throw;
  }
}

}  // namespace libpkg
