// SPDX-License-Identifier: BSD-3-Clause
// A minimal RAII layer over libpq for the stats store: one connection, its
// results, and errors that become one-line libpkg::Error naming the store
// (never its password).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/base/error.hpp"
#include "libpkg/nightly/stats_url.hpp"
#include "libpq_loader.hpp"

namespace libpkg::nightly::detail {

// libpq's messages span lines ("...failed: Connection refused\n\tIs the
// server running...?"): one line, trailing newline dropped.
std::string pg_one_line(std::string_view message);

class PgResult {
 public:
  explicit PgResult(PGresult* result = nullptr) : result_(result) {}
  ~PgResult() {
    if (result_) pq().PQclear(result_);
  }
  PgResult(PgResult&& other) noexcept : result_(other.result_) {
    other.result_ = nullptr;
  }
  PgResult& operator=(PgResult&& other) noexcept {
    std::swap(result_, other.result_);
    return *this;
  }
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;

  PGresult* get() const { return result_; }
  int rows() const { return pq().PQntuples(result_); }
  int columns() const { return pq().PQnfields(result_); }
  bool is_null(int row, int column) const {
    return pq().PQgetisnull(result_, row, column);
  }
  std::string_view text(int row, int column) const {
    return {pq().PQgetvalue(result_, row, column),
            static_cast<std::size_t>(pq().PQgetlength(result_, row, column))};
  }

 private:
  PGresult* result_;
};

class PgConn {
 public:
  // Connects (UTF-8, a 10 s connect timeout unless the URL sets one);
  // Errc::io naming the store with libpq's reason when it cannot.
  explicit PgConn(const StatsLocation& location);
  ~PgConn();
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  PGconn* handle() const { return conn_; }
  const std::string& name() const { return name_; }
  // Reconnects when the connection was lost (a long nightly outlives a
  // server restart); throws like the constructor.
  void ensure_connected();

  // Our own SQL (may be several statements), no rows wanted.
  void exec(const std::string& sql);
  // One statement with text parameters (nullptr: NULL); the result holds
  // rows or a command status. Errors: `code` with the server's message.
  PgResult query(const std::string& sql,
                 const std::vector<const char*>& params = {},
                 Errc code = Errc::io);
  // Runs one statement returning rows, calling `row` with each as it
  // arrives (single-row mode: 10^5 rows are never held at once).
  void stream(const std::string& sql, const std::vector<const char*>& params,
              const std::function<void(const PgResult&)>& row);
  // COPY ... FROM STDIN in COPY's text format: `next(buffer)` appends the
  // next line and returns false when there is none left; the lines are
  // sent in pieces of about 1 MiB. On a refused line,
  // `on_line_error(line, message)` may throw a better error first.
  void copy_in(
      const std::string& sql, const std::function<bool(std::string&)>& next,
      const std::function<void(long, const std::string&)>& on_line_error);

  // Throws `code` "NAME: WHAT: <libpq's message of `result` or of the
  // connection>", one line, the password replaced by ***.
  [[noreturn]] void fail(std::string_view what, const PGresult* result,
                         Errc code = Errc::io) const;
  // `message` with the password (from the URL, PGPASSWORD or .pgpass,
  // whatever libpq used) replaced by ***.
  std::string scrub(std::string message) const;

 private:
  void connect();
  // Drains the results left of a failed multi-result command, so the
  // connection can be used (and closed) cleanly.
  void drain();

  std::string conninfo_;
  std::string name_;
  std::string password_;
  PGconn* conn_ = nullptr;
};

// `field` in COPY's text format: \N for null, backslash escapes.
void append_copy_field(std::string& out, const std::string* field);

}  // namespace libpkg::nightly::detail
