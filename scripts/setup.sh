#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs every dependency from Debian's archive on a fresh Debian 12 machine,
# then configures and builds libpkg into build/ (BUILD_DIR to change).
#
#   scripts/setup.sh            install packages (if missing), configure, build
#   LIBPKG_SKIP_APT=1 ...       don't touch packages (no root, or done already)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$root/build}"
build_type="${CMAKE_BUILD_TYPE:-RelWithDebInfo}"

packages=(
  # toolchain and build
  build-essential cmake ninja-build pkg-config clang-format file
  # libraries
  libfmt-dev nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev
  pybind11-dev libdeflate-dev libisal-dev zlib1g-dev libzstd-dev libarchive-dev libbz2-dev
  libssl-dev libicu-dev
  # the nightly stats store: SQLite (stats.db) and PostgreSQL (libpq-dev's
  # headers at build time; libpq5, dlopen()ed at run time; the server the
  # tests start themselves: initdb/pg_ctl of postgresql-15)
  libsqlite3-dev libpq-dev libpq5 postgresql-15
  # Python (Debian's interpreter, named explicitly as /usr/bin/python3)
  python3-dev python3-venv python3-pytest python3-wheel python3-pip
  python3-setuptools python3-pyelftools
  # auditwheel's dependencies (bench/get_auditwheel.sh runs Debian sid's
  # pure-Python python3-auditwheel on them; pyelftools is above)
  python3-packaging
  # independent tools the tests cross-check against
  patchelf elfutils binutils liblief-dev libarchive-tools unzip zip
  conda-package-handling python3-zstandard zstd bzip2
  # the libtorch driver's debug split (gdb follows the debuglink) and its
  # build hash from a source checkout (git)
  gdb git
  # thread counts of -j (tests/bundle/options.sh); bytes read by
  # `nightly logs --tail` (tests/nightly/runner_test.py)
  strace
  # cross targets: 32-bit, aarch64 (64 KiB pages), big-endian s390x
  qemu-user gcc-aarch64-linux-gnu g++-aarch64-linux-gnu gcc-s390x-linux-gnu
  g++-s390x-linux-gnu gcc-i686-linux-gnu g++-i686-linux-gnu
  gcc-arm-linux-gnueabihf libc6-dev-armhf-cross libc6-dev-arm64-cross
  libc6-dev-s390x-cross libc6-dev-i386-cross
  # show/repair fidelity fixtures: musl extensions, soft-float ARM (armel),
  # ppc64le wheels analysed without their sysroot
  musl-tools gcc-arm-linux-gnueabi libc6-dev-armel-cross
  gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross
  # the SBOM's owner lookup on an rpm host (rpm -qf; rpmbuild builds the
  # package the test registers in a private database)
  rpm
  # Mach-O fixtures (no SDK: clang-14 -fuse-ld=lld: ld64.lld) and their
  # independent oracles (llvm-otool/objdump/lipo, macholib)
  clang-14 lld-14 llvm-14 lld-19 llvm-19 python3-macholib
  # the nightly report in a real browser (tests/nightly/report_browser.py)
  chromium chromium-driver python3-selenium
  # the generated GitHub Actions workflow read back (tests/nightly/workflow_test.py);
  # unshare/mount/setpriv (util-linux) for the full-disk and unwritable-root tests
  python3-yaml util-linux
  # benchmarks
  hyperfine
  # fuzz/run.sh: libFuzzer and the sanitizer runtimes come with clang
  clang libclang-rt-14-dev
  # peak RSS of a child (tests/archive/writer_peak_rss.sh)
  time
)

if [[ "${LIBPKG_SKIP_APT:-0}" != 1 ]]; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    echo "setup: installing ${#missing[@]} Debian packages: ${missing[*]}"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
fi

cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" \
  -DLIBPKG_PYTHON=/usr/bin/python3 ${LIBPKG_CMAKE_ARGS:-}
cmake --build "$build_dir"
echo "setup: built into $build_dir"
