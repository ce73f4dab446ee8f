// SPDX-License-Identifier: BSD-3-Clause
// libpq, loaded when the PostgreSQL stats store is first used rather than by
// every libpkg program at start: libpq.so.5 and what it pulls in (gnutls,
// krb5, ldap, sasl, p11-kit, with constructors that run at load) cost ~7 ms
// of each start of pkgtool, check_binary, the drivers and the Python module
// (bench/RESULTS.md), for a store only `--stats-url postgresql://...` uses.
// libpq-fe.h still gives the types and the functions' signatures.
#pragma once

#include <libpq-fe.h>

namespace libpkg::nightly::detail {

// Every libpq function the stats store calls; a new call needs its name
// here (the compiler says so: there is no link-time libpq any more).
#define LIBPKG_LIBPQ_FUNCTIONS(X) \
  X(PQclear)                      \
  X(PQconndefaults)               \
  X(PQconnectdbParams)            \
  X(PQconninfoFree)               \
  X(PQconninfoParse)              \
  X(PQerrorMessage)               \
  X(PQexec)                       \
  X(PQexecParams)                 \
  X(PQfinish)                     \
  X(PQfname)                      \
  X(PQfreemem)                    \
  X(PQftype)                      \
  X(PQgetResult)                  \
  X(PQgetisnull)                  \
  X(PQgetlength)                  \
  X(PQgetvalue)                   \
  X(PQnfields)                    \
  X(PQntuples)                    \
  X(PQpass)                       \
  X(PQputCopyData)                \
  X(PQputCopyEnd)                 \
  X(PQresultErrorField)           \
  X(PQresultErrorMessage)         \
  X(PQresultStatus)               \
  X(PQsendQueryParams)            \
  X(PQsetNoticeProcessor)         \
  X(PQsetSingleRowMode)           \
  X(PQstatus)

// libpq's functions, resolved from libpq.so.5: call sites read
// `pq().PQexec(conn, sql)`.
struct Libpq {
#define LIBPKG_LIBPQ_MEMBER(name) decltype(&::name) name = nullptr;
  LIBPKG_LIBPQ_FUNCTIONS(LIBPKG_LIBPQ_MEMBER)
#undef LIBPKG_LIBPQ_MEMBER
};

// The soname loaded: the one Debian's libpq5 (and every libpq since 8.0)
// provides.
inline constexpr const char* kLibpqSoname = "libpq.so.5";

// libpq's functions; the first call dlopen()s libpq.so.5 (once, whichever
// thread comes first; never unloaded). Throws Errc::io naming --stats-url,
// "the PostgreSQL stats store needs libpq.so.5 (apt install libpq5): <why>",
// on every call when it cannot be loaded or lacks one of the functions.
const Libpq& pq();

}  // namespace libpkg::nightly::detail
