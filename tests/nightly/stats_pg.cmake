# SPDX-License-Identifier: BSD-3-Clause
# The stats store on PostgreSQL 15: a private server started by the test
# (tests/nightly/pg_server.py; postgresql-15 from scripts/setup.sh), psql as
# the oracle, SQLite and PostgreSQL giving the same report.
libpkg_add_script_test(nightly_stats_postgresql stats_pg_cli.py LABELS integration TIMEOUT 600)
