// SPDX-License-Identifier: BSD-3-Clause
#include "stats_pg.hpp"

#include <fmt/format.h>

#include <charconv>
#include <memory>

namespace libpkg::nightly::detail {

namespace {

// The password the URL carries, if any (libpq may also take one from
// PGPASSWORD or ~/.pgpass: PQpass() tells after connecting).
std::string url_password(const std::string& conninfo) {
  std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> parsed(
      pq().PQconninfoParse(conninfo.c_str(), nullptr), pq().PQconninfoFree);
  for (auto* o = parsed.get(); o && o->keyword; ++o)
    if (std::string_view(o->keyword) == "password" && o->val) return o->val;
  return "";
}

// "line 17" in a COPY error's context: the 1-based line refused.
long copy_line(const PGresult* result) {
  const char* context = pq().PQresultErrorField(result, PG_DIAG_CONTEXT);
  if (!context) return 0;
  // "JSON data, line 1: ..." may come first: the COPY's line is wanted.
  std::string_view c(context);
  auto copy = c.find("COPY ");
  if (copy == std::string_view::npos) return 0;
  c.remove_prefix(copy);
  auto at = c.find(", line ");
  if (at == std::string_view::npos) return 0;
  c.remove_prefix(at + 7);
  long line = 0;
  std::from_chars(c.data(), c.data() + c.size(), line);
  return line;
}

}  // namespace

std::string pg_one_line(std::string_view message) {
  std::string out;
  bool gap = false;
  for (char c : message) {
    if (c == '\n' || c == '\r' || c == '\t') {
      gap = true;
      continue;
    }
    if (gap && !out.empty())
      out += out.back() == '.' || out.back() == ':' ? " " : "; ";
    gap = false;
    out += c;
  }
  return out;
}

PgConn::PgConn(const StatsLocation& location)
    : conninfo_(location.conninfo),
      name_(location.name),
      password_(url_password(location.conninfo)) {
  // A constructor that throws runs no destructor: the refused connection's
  // PGconn is freed here (LeakSanitizer found it).
  try {
    connect();
  } catch (...) {
    pq().PQfinish(conn_);
    conn_ = nullptr;
    throw;
  }
}

PgConn::~PgConn() {
  if (conn_) pq().PQfinish(conn_);
}

void PgConn::connect() {
  // Keywords are applied in order: the URL (expanded from "dbname") may
  // override the timeout and the application name, not the encoding.
  const char* keys[] = {"connect_timeout", "fallback_application_name",
                        "dbname", "client_encoding", nullptr};
  const char* values[] = {"10", "pkgtool-stats", conninfo_.c_str(), "UTF8",
                          nullptr};
  pq().PQfinish(conn_);
  conn_ = pq().PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (!conn_) throw Error(Errc::io, name_, "cannot connect: out of memory");
  if (const char* used = pq().PQpass(conn_); used && *used) password_ = used;
  if (pq().PQstatus(conn_) != CONNECTION_OK) fail("cannot connect", nullptr);
  // Quiet NOTICEs ("relation already exists, skipping") on stderr.
  pq().PQsetNoticeProcessor(
      conn_, [](void*, const char*) {}, nullptr);
}

void PgConn::ensure_connected() {
  if (pq().PQstatus(conn_) != CONNECTION_OK) connect();
}

std::string PgConn::scrub(std::string message) const {
  if (password_.empty()) return message;
  for (std::size_t at; (at = message.find(password_)) != std::string::npos;)
    message.replace(at, password_.size(), "***");
  return message;
}

void PgConn::fail(std::string_view what, const PGresult* result,
                  Errc code) const {
  std::string why;
  if (result) {
    const char* primary =
        pq().PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
    why = primary ? primary : pq().PQresultErrorMessage(result);
  }
  if (why.empty()) why = pq().PQerrorMessage(conn_);
  if (why.empty()) why = "unknown error";
  throw Error(code, name_,
              scrub(fmt::format("{}: {}", what, pg_one_line(why))));
}

void PgConn::drain() {
  while (PGresult* r = pq().PQgetResult(conn_)) pq().PQclear(r);
}

void PgConn::exec(const std::string& sql) {
  PgResult r(pq().PQexec(conn_, sql.c_str()));
  ExecStatusType s = pq().PQresultStatus(r.get());
  if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) fail("SQL", r.get());
}

PgResult PgConn::query(const std::string& sql,
                       const std::vector<const char*>& params, Errc code) {
  PgResult r(pq().PQexecParams(conn_, sql.c_str(),
                               static_cast<int>(params.size()), nullptr,
                               params.data(), nullptr, nullptr, 0));
  switch (pq().PQresultStatus(r.get())) {
    case PGRES_COMMAND_OK:
    case PGRES_TUPLES_OK:
      return r;
    case PGRES_COPY_IN:
    case PGRES_COPY_OUT:
    case PGRES_COPY_BOTH:
      // Not a query: end the copy so the connection stays usable.
      pq().PQputCopyEnd(conn_, "not supported");
      drain();
      throw Error(code, name_, "SQL: COPY is not supported here");
    default:
      fail("SQL", r.get(), code);
  }
}

void PgConn::stream(const std::string& sql,
                    const std::vector<const char*>& params,
                    const std::function<void(const PgResult&)>& row) {
  if (!pq().PQsendQueryParams(conn_, sql.c_str(),
                              static_cast<int>(params.size()), nullptr,
                              params.data(), nullptr, nullptr, 0))
    fail("SQL", nullptr);
  pq().PQsetSingleRowMode(conn_);
  bool failed = false;
  std::string error;
  while (PGresult* raw = pq().PQgetResult(conn_)) {
    PgResult r(raw);
    ExecStatusType s = pq().PQresultStatus(raw);
    if (failed) continue;  // drain after an error (or a callback's throw)
    if (s == PGRES_SINGLE_TUPLE) {
      try {
        row(r);
      } catch (...) {
        drain();
        throw;
      }
    } else if (s != PGRES_TUPLES_OK) {
      failed = true;
      try {
        fail("SQL", raw);
      } catch (const Error& e) {
        error = e.message();
      }
    }
  }
  if (failed) throw Error(Errc::io, name_, error);
}

void PgConn::copy_in(
    const std::string& sql, const std::function<bool(std::string&)>& next,
    const std::function<void(long, const std::string&)>& on_line_error) {
  {
    PgResult start(pq().PQexec(conn_, sql.c_str()));
    if (pq().PQresultStatus(start.get()) != PGRES_COPY_IN)
      fail("SQL", start.get());
  }
  // Sent in pieces as the lines are made: a batch of 10^5 documents is
  // never copied into one buffer whole.
  constexpr std::size_t kPiece = 1 << 20;
  std::string piece;
  piece.reserve(kPiece + kPiece / 4);
  bool sent = true, more = true;
  while (more && sent) {
    more = next(piece);
    if (piece.size() >= kPiece || (!more && !piece.empty())) {
      sent = pq().PQputCopyData(conn_, piece.data(),
                                static_cast<int>(piece.size())) == 1;
      piece.clear();
    }
  }
  if (!sent || pq().PQputCopyEnd(conn_, nullptr) != 1) {
    drain();
    fail("COPY", nullptr);
  }
  PgResult done(pq().PQgetResult(conn_));
  const bool ok = pq().PQresultStatus(done.get()) == PGRES_COMMAND_OK;
  std::string message;
  if (!ok) {
    const char* primary =
        pq().PQresultErrorField(done.get(), PG_DIAG_MESSAGE_PRIMARY);
    message = scrub(pg_one_line(primary ? primary : ""));
  }
  drain();
  if (ok) return;
  if (long line = copy_line(done.get()); line > 0) on_line_error(line, message);
  fail("COPY", done.get());
}

void append_copy_field(std::string& out, const std::string* field) {
  if (!field) {
    out += "\\N";
    return;
  }
  std::size_t plain = 0;
  const std::string& s = *field;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char* escaped;
    switch (s[i]) {
      case '\\':
        escaped = "\\\\";
        break;
      case '\n':
        escaped = "\\n";
        break;
      case '\r':
        escaped = "\\r";
        break;
      case '\t':
        escaped = "\\t";
        break;
      default:
        continue;
    }
    out.append(s, plain, i - plain);
    out += escaped;
    plain = i + 1;
  }
  out.append(s, plain, std::string::npos);
}

}  // namespace libpkg::nightly::detail
