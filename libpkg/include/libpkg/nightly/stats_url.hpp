// SPDX-License-Identifier: BSD-3-Clause
// Where a stats store lives, as given to `--stats-url`:
// - an SQLite file: `sqlite:PATH`, or a plain path (the default, stats.db);
// - a PostgreSQL database: a `postgresql://` or `postgres://` URL, or a
//   libpq keyword/value string (`host=/run/pg dbname=stats user=ci`).
// A string is a keyword/value string when it starts with one of libpq's
// keywords followed by '='; any other string is a path (`sqlite:` forces
// one). Passwords (in the URL, or better in PGPASSWORD / ~/.pgpass, which
// libpq reads itself) are never part of the name used in messages.
#pragma once

#include <filesystem>
#include <string>

namespace libpkg::nightly {

/// The database engine a StatsLocation names.
enum class StatsBackendKind { sqlite, postgresql };

/// A parsed --stats-url.
struct StatsLocation {
  StatsBackendKind kind = StatsBackendKind::sqlite;
  std::filesystem::path path;  // sqlite: the database file
  std::string conninfo;        // postgresql: the URL or string as given
  // For messages: the path as given, or the PostgreSQL URL rebuilt from
  // its user, host, port and database, without the password.
  std::string name;
};

/// Parses \p url (see above). Throws Errc::usage for an empty URL, an empty
/// `sqlite:` path, or a PostgreSQL string libpq cannot parse; the message
/// names the URL without its password.
StatsLocation parse_stats_url(const std::string& url);

}  // namespace libpkg::nightly
