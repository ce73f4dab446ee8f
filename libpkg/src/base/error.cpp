// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/base/error.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace libpkg {

const char* errc_name(Errc code) {
  switch (code) {
    case Errc::io:
      return "io";
    case Errc::format:
      return "format";
    case Errc::unsupported:
      return "unsupported";
    case Errc::usage:
      return "usage";
    case Errc::not_found:
      return "not_found";
  }
  return "unknown";
}

Error::Error(Errc code, std::string file, std::string message,
             std::optional<std::uint64_t> offset)
    : std::runtime_error(render(file, message, offset)),
      code_(code),
      file_(std::move(file)),
      message_(std::move(message)),
      offset_(offset) {}

std::string Error::render(const std::string& file, const std::string& message,
                          std::optional<std::uint64_t> offset) {
  std::string out = file.empty() ? message : file + ": " + message;
  if (offset) out += fmt::format(" (at offset 0x{:x})", *offset);
  return out;
}

void throw_format(const std::string& file, std::uint64_t offset,
                  const std::string& message) {
  throw Error(Errc::format, file, message, offset);
}

void throw_errno(const std::string& file, const std::string& action) {
  int err = errno;
  throw Error(Errc::io, file, fmt::format("{}: {}", action, std::strerror(err)))
      .with_errno(err);
}

}  // namespace libpkg
