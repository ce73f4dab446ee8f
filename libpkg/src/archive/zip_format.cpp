// SPDX-License-Identifier: BSD-3-Clause
#include "archive/zip_format.hpp"

#include <algorithm>

namespace libpkg::archive::zipfmt {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
// days_from_civil), and its inverse.
i64 days_from_civil(i64 y, unsigned m, unsigned d) {
  y -= m <= 2;
  const i64 era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<i64>(doe) - 719468;
}

void civil_from_days(i64 z, i64& y, unsigned& m, unsigned& d) {
  z += 719468;
  const i64 era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<i64>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
}

constexpr i64 kDosEpoch = 315532800;  // 1980-01-01T00:00:00Z
// 2107-12-31T23:59:58Z, the last even second a DOS date can hold.
const i64 kDosMax = days_from_civil(2107, 12, 31) * 86400 + 86398;

}  // namespace

DosTime to_dos_time(i64 unix_seconds) {
  i64 t = std::clamp(unix_seconds, kDosEpoch, kDosMax);
  i64 days = t / 86400;
  i64 secs = t % 86400;
  i64 y;
  unsigned m, d;
  civil_from_days(days, y, m, d);
  DosTime out;
  out.date = static_cast<u16>(((y - 1980) << 9) | (m << 5) | d);
  out.time = static_cast<u16>(((secs / 3600) << 11) |
                              (((secs / 60) % 60) << 5) | ((secs % 60) / 2));
  return out;
}

i64 from_dos_time(u16 time, u16 date) {
  i64 y = 1980 + (date >> 9);
  unsigned m = std::clamp<unsigned>((date >> 5) & 0xf, 1, 12);
  unsigned d = std::clamp<unsigned>(date & 0x1f, 1, 31);
  i64 secs = i64{time >> 11} * 3600 + i64{(time >> 5) & 0x3f} * 60 +
             i64{time & 0x1f} * 2;
  return days_from_civil(y, m, d) * 86400 + secs;
}

}  // namespace libpkg::archive::zipfmt
