// SPDX-License-Identifier: BSD-3-Clause
#include "stats_sqlite.hpp"

#include <fmt/format.h>

namespace libpkg::nightly::detail {

SqliteDb::SqliteDb(const std::filesystem::path& path, bool read_only)
    : name_(path.string()) {
  int flags = read_only ? SQLITE_OPEN_READONLY
                        : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  // No shared cache, no URI interpretation of the name: a path is a path.
  flags |= SQLITE_OPEN_NOMUTEX;
  if (read_only && !std::filesystem::exists(path))
    throw Error(Errc::io, name_, "no such database");
  int rc = sqlite3_open_v2(name_.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(Errc::io, name_, "cannot open database: " + message);
  }
  // Several writers (the runner's queues, CI ingests) share one file: wait
  // for a lock rather than failing at once.
  sqlite3_busy_timeout(db_, 30000);
}

SqliteDb::~SqliteDb() { sqlite3_close(db_); }

void SqliteDb::exec(const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message ? message : "unknown error";
    sqlite3_free(message);
    throw Error(Errc::io, name_, text);
  }
}

void SqliteDb::fail(std::string_view what, Errc code) const {
  throw Error(code, name_, fmt::format("{}: {}", what, sqlite3_errmsg(db_)));
}

SqliteStmt::SqliteStmt(SqliteDb& db, std::string_view sql, Errc code)
    : db_(db), code_(code) {
  const char* tail = nullptr;
  if (sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()),
                         &stmt_, &tail) != SQLITE_OK)
    db.fail("SQL", code);
  if (!stmt_) throw Error(code, db.name(), "SQL: empty statement");
  // One statement per query: the rest would be silently ignored.
  std::string_view rest(tail, sql.data() + sql.size() - tail);
  if (rest.find_first_not_of(" \t\r\n;") != std::string_view::npos) {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
    throw Error(code, db.name(), "SQL: one statement at a time");
  }
}

SqliteStmt::~SqliteStmt() { sqlite3_finalize(stmt_); }

void SqliteStmt::bind(int index, std::string_view text) {
  if (sqlite3_bind_text(stmt_, index, text.data(),
                        static_cast<int>(text.size()),
                        SQLITE_TRANSIENT) != SQLITE_OK)
    db_.fail("bind");
}

void SqliteStmt::bind_optional(int index,
                               const std::optional<std::string>& text) {
  if (text)
    bind(index, std::string_view(*text));
  else
    bind_null(index);
}

void SqliteStmt::bind(int index, i64 value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) db_.fail("bind");
}

void SqliteStmt::bind(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) db_.fail("bind");
}

void SqliteStmt::bind_null(int index) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) db_.fail("bind");
}

bool SqliteStmt::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail("query", code_);
}

void SqliteStmt::run() {
  while (step()) {
  }
  reset();
}

void SqliteStmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string SqliteStmt::text(int column) const {
  const unsigned char* p = sqlite3_column_text(stmt_, column);
  if (!p) return {};
  return std::string(
      reinterpret_cast<const char*>(p),
      static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

void SqliteStmt::text_into(int column, std::string& out) const {
  const unsigned char* p = sqlite3_column_text(stmt_, column);
  out.assign(
      p ? reinterpret_cast<const char*>(p) : "",
      p ? static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)) : 0);
}

bool SqliteStmt::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

i64 SqliteStmt::integer(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double SqliteStmt::real(int column) const {
  return sqlite3_column_double(stmt_, column);
}

}  // namespace libpkg::nightly::detail
