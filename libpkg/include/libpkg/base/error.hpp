// SPDX-License-Identifier: BSD-3-Clause
// The one error type of the library.
//
// Library code never exits: it throws `libpkg::Error`, which says which file,
// where in it (when a byte offset is meaningful) and what was expected versus
// found. Frontends map `code()` to exit statuses (2 for bad input or usage)
// and print `error: FILE: message`; the Python module maps it to libpkg.Error.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace libpkg {

/// The class of a libpkg::Error, for callers that react to the kind of failure
/// rather than to the message.
enum class Errc {
  io,      // open/read/write/rename failed
  format,  // the bytes are not what the format requires (truncated, corrupt)
  unsupported,  // well-formed but outside what we handle (machine, layout)
  usage,        // the caller asked for something impossible or inconsistent
  not_found,    // a requested thing (section, entry, library) does not exist
};

/// The name of `code` ("io", "format", "unsupported", "usage", "not_found").
const char* errc_name(Errc code);

/// The one exception type libpkg throws: a code, the file it concerns, a
/// message and optionally the file offset at fault.
class Error : public std::runtime_error {
 public:
  /// An error about `file` (may be empty); what() renders "FILE: MESSAGE (at
  /// offset 0x..)".
  Error(Errc code, std::string file, std::string message,
        std::optional<std::uint64_t> offset = std::nullopt);

  /// The class of failure.
  Errc code() const { return code_; }
  /// The file the error concerns; empty when none.
  const std::string& file() const { return file_; }
  /// The message without the file name or offset.
  const std::string& message() const { return message_; }
  /// The offset in the file where the fault lies, when known.
  std::optional<std::uint64_t> offset() const { return offset_; }
  /// errno of the failed system call behind an io error, 0 when none (so
  /// bindings can tell "no such file" from "permission denied").
  int sys_errno() const { return sys_errno_; }
  /// Attaches the errno of the failed system call; returns *this for chaining
  /// before `throw`.
  Error& with_errno(int err) {
    sys_errno_ = err;
    return *this;
  }

  /// Exit status a frontend should use for this error: 2 for bad input/usage.
  int exit_code() const { return 2; }

 private:
  static std::string render(const std::string& file, const std::string& message,
                            std::optional<std::uint64_t> offset);

  Errc code_;
  std::string file_;
  std::string message_;
  std::optional<std::uint64_t> offset_;
  int sys_errno_ = 0;
};

/// Throws a format error "FILE: WHAT at offset 0x..".
[[noreturn]] void throw_format(const std::string& file, std::uint64_t offset,
                               const std::string& message);

/// Throws an io error carrying strerror(errno) for the given action.
[[noreturn]] void throw_errno(const std::string& file,
                              const std::string& action);

}  // namespace libpkg
