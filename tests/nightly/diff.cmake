# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool diff` over wheels, .conda and .tar.bz2 packages built at test time
# (libraries compiled with gcc, facts cross-checked with readelf, hashlib).
libpkg_add_script_test(nightly_diff_cli diff_cli.py LABELS integration TIMEOUT 300)
