# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool workflow`: the YAML's structure (python3-yaml), every packaging
# step run against the built drivers, the final job's steps, --check.
libpkg_add_script_test(nightly_workflow workflow_test.py TIMEOUT 600)
set_property(TEST nightly_workflow APPEND PROPERTY ENVIRONMENT
  "MANYWHEEL=$<TARGET_FILE:manywheel>"
  "LIBTORCH_DRIVER=$<TARGET_FILE:libtorch_driver>"
  "CONDA_DRIVER=$<TARGET_FILE:conda_driver>"
  "WHEEL_MACOS=$<TARGET_FILE:wheel_macos>"
  "CHECK_BINARY=$<TARGET_FILE:check_binary>")
