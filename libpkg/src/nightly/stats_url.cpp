// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/nightly/stats_url.hpp"

#include <cctype>
#include <map>
#include <memory>
#include <set>

#include "libpkg/base/error.hpp"
#include "libpq_loader.hpp"
#include "stats_pg.hpp"

namespace libpkg::nightly {

namespace {

using Options = std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)>;

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// libpq's own keywords (host, dbname, sslmode, ...), so a path that merely
// contains '=' is not taken for a connection string.
const std::set<std::string>& libpq_keywords() {
  static const std::set<std::string> keywords = [] {
    std::set<std::string> out;
    Options defaults(detail::pq().PQconndefaults(),
                     detail::pq().PQconninfoFree);
    for (auto* o = defaults.get(); o && o->keyword; ++o) out.insert(o->keyword);
    return out;
  }();
  return keywords;
}

bool is_keyword_string(const std::string& url) {
  std::size_t i = url.find_first_not_of(" \t");
  if (i == std::string::npos) return false;
  std::size_t end = i;
  while (
      end < url.size() &&
      (std::isalnum(static_cast<unsigned char>(url[end])) || url[end] == '_'))
    ++end;
  std::size_t eq = url.find_first_not_of(" \t", end);
  return end > i && eq != std::string::npos && url[eq] == '=' &&
         libpq_keywords().count(url.substr(i, end - i));
}

// postgresql://user@host:port/dbname, rebuilt from what libpq parsed: the
// password (and every other option) left out.
std::string display_name(const std::string& url) {
  char* error = nullptr;
  Options parsed(detail::pq().PQconninfoParse(url.c_str(), &error),
                 detail::pq().PQconninfoFree);
  if (!parsed) {
    // libpq quotes pieces of the string in its message, and a piece may be
    // a password: keep only the message's text outside quotes.
    std::string why = error ? detail::pg_one_line(error) : "out of memory";
    detail::pq().PQfreemem(error);
    std::string kept;
    bool quoted = false;
    for (char c : why) {
      if (c == '"') {
        quoted = !quoted;
        kept += quoted ? "\"…" : "\"";
      } else if (!quoted) {
        kept += c;
      }
    }
    throw Error(Errc::usage, "--stats-url",
                "not a PostgreSQL connection string libpq accepts: " + kept);
  }
  std::map<std::string, std::string> v;
  for (auto* o = parsed.get(); o->keyword; ++o)
    if (o->val && *o->val) v[o->keyword] = o->val;
  std::string host = v.count("host") ? v["host"] : v["hostaddr"];
  std::string out = "postgresql://";
  if (v.count("user")) out += v["user"] + "@";
  const bool socket = !host.empty() && host.front() == '/';
  if (!socket) out += host;
  if (v.count("port")) out += ":" + v["port"];
  out += "/" + v["dbname"];
  std::string query;
  if (socket) query += "host=" + host;
  if (v.count("service"))
    query +=
        (query.empty() ? "" : "&") + std::string("service=") + v["service"];
  if (!query.empty()) out += "?" + query;
  return out;
}

}  // namespace

StatsLocation parse_stats_url(const std::string& url) {
  if (url.empty()) throw Error(Errc::usage, "--stats-url", "empty URL");
  StatsLocation out;
  if (starts_with(url, "postgresql://") || starts_with(url, "postgres://") ||
      is_keyword_string(url)) {
    out.kind = StatsBackendKind::postgresql;
    out.conninfo = url;
    out.name = display_name(url);
    return out;
  }
  std::string path = starts_with(url, "sqlite:") ? url.substr(7) : url;
  if (path.empty())
    throw Error(Errc::usage, "--stats-url", "sqlite: needs a path");
  out.kind = StatsBackendKind::sqlite;
  out.path = path;
  out.name = path;
  return out;
}

}  // namespace libpkg::nightly
