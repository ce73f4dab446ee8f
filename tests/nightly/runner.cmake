# SPDX-License-Identifier: BSD-3-Clause
libpkg_add_script_test(nightly_runner runner_test.py TIMEOUT 300)
libpkg_add_gtest(nightly_jobs_test jobs_test.cpp)
libpkg_add_gtest(nightly_files_test files_test.cpp)
libpkg_add_script_test(nightly_publish publish_test.py TIMEOUT 300)
libpkg_add_script_test(nightly_integration integration_test.py TIMEOUT 600)
# A full disk for real: a small tmpfs in a private mount namespace.
libpkg_add_script_test(nightly_full_disk full_disk_test.py TIMEOUT 300)
libpkg_add_script_test(nightly_job_order job_order_test.py TIMEOUT 300)
