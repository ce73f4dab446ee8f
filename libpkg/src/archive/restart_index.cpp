// SPDX-License-Identifier: BSD-3-Clause
#include "archive/restart_index.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace libpkg::archive {
namespace {

constexpr char kMagic[4] = {'L', 'P', 'R', 'X'};
constexpr std::size_t kHeader = sizeof(kMagic) + 1;  // magic, version

void put_uleb(std::vector<u8>& out, u64 v) {
  do {
    u8 b = static_cast<u8>(v & 0x7f);
    v >>= 7;
    out.push_back(static_cast<u8>(b | (v != 0 ? 0x80 : 0)));
  } while (v != 0);
}

std::size_t uleb_size(u64 v) {
  std::size_t n = 1;
  while (v >>= 7) ++n;
  return n;
}

// The body's size when every `step`-th point is kept.
std::size_t body_size(std::span<const RestartPoint> points, std::size_t step) {
  std::size_t n = kHeader;
  RestartPoint prev;
  for (std::size_t i = step - 1; i < points.size(); i += step) {
    n += uleb_size(points[i].uncompressed - prev.uncompressed) +
         uleb_size(points[i].compressed - prev.compressed);
    prev = points[i];
  }
  return n;
}

// Reads one ULEB128 value of at most 64 bits at `pos`; false when it runs
// past `body` or overflows.
bool get_uleb(std::span<const u8> body, std::size_t& pos, u64& v) {
  v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (pos >= body.size()) return false;
    const u8 b = body[pos++];
    const u64 bits = b & 0x7f;
    if (shift == 63 && bits > 1) return false;
    v |= bits << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

std::string parse_body(std::span<const u8> body, u64 usize, u64 csize,
                       std::vector<RestartPoint>& out) {
  if (body.size() < kHeader) return "field shorter than its header";
  if (body[4] != kRestartIndexVersion)
    return fmt::format("unknown version {}", body[4]);
  std::size_t pos = kHeader;
  RestartPoint prev;
  while (pos < body.size()) {
    u64 du = 0, dc = 0;
    if (!get_uleb(body, pos, du) || !get_uleb(body, pos, dc))
      return fmt::format("point {} is truncated or overflows", out.size() + 1);
    if (du == 0 || dc == 0)
      return fmt::format("point {} does not follow the previous one",
                         out.size() + 1);
    RestartPoint p{prev.uncompressed + du, prev.compressed + dc};
    if (p.uncompressed < prev.uncompressed || p.compressed < prev.compressed ||
        p.uncompressed >= usize || p.compressed >= csize)
      return fmt::format(
          "point {} (uncompressed {}, compressed {}) lies outside the member "
          "({} bytes, {} compressed)",
          out.size() + 1, p.uncompressed, p.compressed, usize, csize);
    out.push_back(p);
    prev = p;
  }
  if (out.empty()) return "field lists no point";
  return {};
}

}  // namespace

std::vector<u8> encode_restart_extra(std::span<const RestartPoint> points) {
  if (points.empty()) return {};
  std::size_t step = 1;
  while (body_size(points, step) > kMaxRestartBody) ++step;
  std::vector<u8> out;
  out.reserve(4 + body_size(points, step));
  out.resize(4);
  out.insert(out.end(), kMagic, kMagic + sizeof(kMagic));
  out.push_back(kRestartIndexVersion);
  RestartPoint prev;
  for (std::size_t i = step - 1; i < points.size(); i += step) {
    put_uleb(out, points[i].uncompressed - prev.uncompressed);
    put_uleb(out, points[i].compressed - prev.compressed);
    prev = points[i];
  }
  const std::size_t body = out.size() - 4;
  out[0] = static_cast<u8>(kRestartIndexId & 0xff);
  out[1] = static_cast<u8>(kRestartIndexId >> 8);
  out[2] = static_cast<u8>(body & 0xff);
  out[3] = static_cast<u8>(body >> 8);
  return out;
}

RestartIndexParse parse_restart_extra(std::span<const u8> extra, u16 method,
                                      u64 uncompressed_size,
                                      u64 compressed_size) {
  RestartIndexParse result;
  std::size_t pos = 0;
  while (extra.size() - pos >= 4) {
    const u16 id = static_cast<u16>(extra[pos] | (extra[pos + 1] << 8));
    const std::size_t size = extra[pos + 2] | (extra[pos + 3] << 8);
    const std::size_t body_at = pos + 4;
    if (size > extra.size() - body_at) break;  // the caller's check failed
    std::span<const u8> body = extra.subspan(body_at, size);
    pos = body_at + size;
    if (id != kRestartIndexId || body.size() < sizeof(kMagic) ||
        std::memcmp(body.data(), kMagic, sizeof(kMagic)) != 0)
      continue;
    if (!result.points.empty() || !result.error.empty()) {
      result.points.clear();
      result.error = "the restart-point field appears twice";
      return result;
    }
    if (method != 8) {
      result.error = "a restart-point field on a member that is not deflated";
      continue;
    }
    result.error =
        parse_body(body, uncompressed_size, compressed_size, result.points);
    if (!result.error.empty()) result.points.clear();
  }
  return result;
}

}  // namespace libpkg::archive
