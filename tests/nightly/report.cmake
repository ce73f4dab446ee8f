# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool nightly report` over a generated 30-night history: the data
# against Python's sqlite3, the page's self-containment, and the page in
# headless chromium (selenium + chromedriver, installed by setup.sh).
libpkg_add_script_test(nightly_report_cli report_cli.py LABELS integration TIMEOUT 300)
libpkg_add_script_test(nightly_report_browser report_browser.py LABELS integration TIMEOUT 300)
