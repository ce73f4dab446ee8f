// SPDX-License-Identifier: BSD-3-Clause
// A minimal RAII layer over the SQLite C API for the stats store: one owned
// connection and prepared statements whose errors become libpkg::Error
// naming the database file.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "libpkg/base/error.hpp"
#include "libpkg/base/integers.hpp"

namespace libpkg::nightly::detail {

class SqliteDb {
 public:
  // Opens (read-write: creating it) or opens read-only; throws Errc::io.
  SqliteDb(const std::filesystem::path& path, bool read_only);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  sqlite3* handle() const { return db_; }
  const std::string& name() const { return name_; }
  // Runs one or more statements without results.
  void exec(const std::string& sql);
  // Throws Errc::io (or `code`) with SQLite's message for the connection.
  [[noreturn]] void fail(std::string_view what, Errc code = Errc::io) const;

 private:
  sqlite3* db_ = nullptr;
  std::string name_;
};

class SqliteStmt {
 public:
  SqliteStmt(SqliteDb& db, std::string_view sql, Errc code = Errc::io);
  ~SqliteStmt();
  SqliteStmt(const SqliteStmt&) = delete;
  SqliteStmt& operator=(const SqliteStmt&) = delete;

  sqlite3_stmt* handle() const { return stmt_; }
  void bind(int index, std::string_view text);
  void bind_optional(int index, const std::optional<std::string>& text);
  void bind(int index, i64 value);
  void bind(int index, double value);
  void bind_null(int index);
  // Advances; true while a row is available.
  bool step();
  // For statements without rows: step then reset for reuse.
  void run();
  void reset();

  std::string text(int column) const;
  // The text of `column` into `out` (reusing its buffer: the report reads
  // 10^5 rows).
  void text_into(int column, std::string& out) const;
  bool is_null(int column) const;
  i64 integer(int column) const;
  double real(int column) const;

 private:
  SqliteDb& db_;
  sqlite3_stmt* stmt_ = nullptr;
  Errc code_;
};

}  // namespace libpkg::nightly::detail
