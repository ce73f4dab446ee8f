#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Fetches auditwheel (the reference the repair and show benchmarks compare
# against) from Debian's archive, with apt checking the archive's signature,
# without touching the system's apt configuration or installing anything
# from sid: python3-auditwheel is "Architecture: all" (pure Python), so its
# .deb is unpacked into a private prefix and run with bookworm's
# /usr/bin/python3, python3-packaging and python3-pyelftools.
#
#   bench/get_auditwheel.sh [PREFIX]             prints the path of the auditwheel wrapper
#   bench/get_auditwheel.sh --patchelf [PREFIX]  builds sid's patchelf from its Debian
#                                                source package (apt-get source: the
#                                                .dsc's hashes checked against the signed
#                                                Sources index) into PREFIX/patchelf and
#                                                prints its path (sid's binary needs a newer
#                                                glibc than bookworm's)
#
# PREFIX defaults to ${XDG_CACHE_HOME:-$HOME/.cache}/libpkg-bench/auditwheel.
# Inside it: apt/ (a private sources list for sid signed by
# /usr/share/keyrings/debian-archive-keyring.gpg, private lists, cache and an
# empty dpkg status, read through APT_CONFIG so /etc/apt/apt.conf.d is not
# read either), debs/ (the downloaded .deb), root/ (dpkg-deb -x) and
# bin/auditwheel. Idempotent: a prefix whose wrapper already runs is reused
# (AUDITWHEEL_REFRESH=1 fetches again). Needs the network; it is a bench
# helper, not part of the tests or CI. Exit status 2 on any failure.
set -euo pipefail

die() {
  echo "get_auditwheel.sh: error: $*" >&2
  exit 2
}
trap 'die "command failed (line $LINENO): $BASH_COMMAND"' ERR

PKG=python3-auditwheel
SUITE=${AUDITWHEEL_SUITE:-sid}
MIRROR=${AUDITWHEEL_MIRROR:-http://deb.debian.org/debian}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
PY=/usr/bin/python3
mode=auditwheel
if [[ ${1:-} == --patchelf ]]; then
  mode=patchelf
  shift
fi
prefix=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/libpkg-bench/auditwheel}
mkdir -p "$prefix" || die "cannot create $prefix"
prefix=$(cd "$prefix" && pwd)
wrapper=$prefix/bin/auditwheel

patchelf_bin=$prefix/patchelf/bin/patchelf

# Reuse a working install.
if [[ ${AUDITWHEEL_REFRESH:-0} != 1 ]]; then
  if [[ $mode == auditwheel && -x $wrapper ]] && "$wrapper" --version >/dev/null 2>&1; then
    echo "$wrapper"
    exit 0
  fi
  if [[ $mode == patchelf && -x $patchelf_bin ]] && "$patchelf_bin" --version >/dev/null 2>&1; then
    echo "$patchelf_bin"
    exit 0
  fi
fi

for tool in apt-get dpkg-deb "$PY"; do
  command -v "$tool" >/dev/null || die "$tool not found (a Debian system is needed)"
done
[[ -r $KEYRING ]] || die "$KEYRING missing (apt-get install debian-archive-keyring)"

# auditwheel's own Python dependencies, from bookworm (the system's apt).
missing=()
"$PY" -c 'import packaging' 2>/dev/null || missing+=(python3-packaging)
"$PY" -c 'import elftools' 2>/dev/null || missing+=(python3-pyelftools)
if ((${#missing[@]})); then
  echo "get_auditwheel.sh: installing ${missing[*]} (bookworm) with apt-get" >&2
  [[ $(id -u) == 0 ]] || die "${missing[*]} missing and not root: apt-get install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2 ||
    die "apt-get install ${missing[*]} failed"
fi

# A private apt: only this file is read (APT_CONFIG first, then an empty
# parts dir instead of /etc/apt/apt.conf.d, no main apt.conf), one deb822
# source for sid whose Release signature apt checks against the Debian
# archive keyring, and its own lists, caches and an empty dpkg status.
apt_dir=$prefix/apt
mkdir -p "$apt_dir"/{conf.d,sources.d,preferences.d,lists/partial,cache/archives/partial,state} "$prefix/debs"
: >"$apt_dir/state/status"
types=deb
[[ $mode == patchelf ]] && types="deb deb-src"
cat >"$apt_dir/sources.d/$SUITE.sources" <<EOF
Types: $types
URIs: $MIRROR
Suites: $SUITE
Components: main
Signed-By: $KEYRING
EOF
cat >"$apt_dir/apt.conf" <<EOF
Dir::Etc::Parts "$apt_dir/conf.d";
Dir::Etc::Main "/dev/null";
Dir::Etc::SourceList "/dev/null";
Dir::Etc::SourceParts "$apt_dir/sources.d";
Dir::Etc::Preferences "/dev/null";
Dir::Etc::PreferencesParts "$apt_dir/preferences.d";
Dir::Etc::TrustedParts "/dev/null";
Dir::Etc::Trusted "/dev/null";
Dir::State "$apt_dir/state";
Dir::State::Lists "$apt_dir/lists";
Dir::State::status "$apt_dir/state/status";
Dir::Cache "$apt_dir/cache";
APT::Architecture "$(dpkg --print-architecture)";
APT::Architectures { "$(dpkg --print-architecture)"; };
Acquire::Languages "none";
Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled "false";
APT::Sandbox::User "root";
EOF
export APT_CONFIG=$apt_dir/apt.conf
# A signature apt cannot verify makes `update` fail (or leave the source
# out, saying so on stderr): then this script stops.
update() { apt-get -q "$@" update >"$apt_dir/update.log" 2>&1; }
if ! update; then
  # A mirror (or a proxy's cached copy) whose Release is past its
  # Valid-Until: the signature is still checked, only the freshness is
  # not, and the script says so.
  if grep -q 'is expired' "$apt_dir/update.log"; then
    echo "get_auditwheel.sh: warning: $SUITE's Release file is past its Valid-Until" \
      "(a stale mirror); accepting it with its signature checked" >&2
    update -o Acquire::Check-Valid-Until=false || {
      cat "$apt_dir/update.log" >&2
      die "apt-get update of $SUITE failed"
    }
  else
    cat "$apt_dir/update.log" >&2
    die "apt-get update of $SUITE failed"
  fi
fi
if grep -qE '^(W|E): .*(NO_PUBKEY|not signed|EXPKEYSIG|BADSIG|InRelease)' "$apt_dir/update.log"; then
  cat "$apt_dir/update.log" >&2
  die "apt could not verify $SUITE's Release file"
fi
if [[ $mode == patchelf ]]; then
  command -v g++ >/dev/null || die "g++ not found (apt-get install build-essential)"
  src=$prefix/patchelf-src
  rm -rf "$src" "$prefix/patchelf"
  mkdir -p "$src"
  # apt checks every file it fetches against the hashes of the signed
  # Sources index. Some mirrors hold the upstream tarball but not the .dsc
  # or Debian's patch tarball: then the tarball alone is built (upstream's
  # source as Debian ships it, without Debian's patches), checked again
  # here against the index's SHA-256.
  (cd "$src" && apt-get -q source --download-only patchelf >&2) ||
    echo "get_auditwheel.sh: warning: apt-get source patchelf fetched only part of the source" >&2
  orig=$(ls "$src"/patchelf_*.orig.tar.* 2>/dev/null | head -1)
  [[ -n $orig ]] || die "apt-get source patchelf fetched no upstream tarball"
  want=$(apt-cache showsrc --only-source patchelf | sed -n '/^Checksums-Sha256:/,/^[^ ]/p' |
    awk -v f="$(basename "$orig")" '$3 == f { print $1; exit }')
  [[ -n $want && $(sha256sum "$orig" | cut -d' ' -f1) == "$want" ]] ||
    die "$orig does not match the signed Sources index"
  if ls "$src"/patchelf_*.dsc >/dev/null 2>&1; then
    (cd "$src" && dpkg-source -x "$(ls patchelf_*.dsc)" tree >&2) || die "dpkg-source -x failed"
  else
    echo "get_auditwheel.sh: warning: no .dsc on the mirror: building $(basename "$orig")" \
      "without Debian's patches" >&2
    mkdir "$src/tree" && tar -xf "$orig" -C "$src/tree" --strip-components=1
  fi
  upstream=$(cat "$src/tree/version" 2>/dev/null) || die "no version file in the patchelf source"
  # patchelf is one C++ file: compiled directly with the flags of its
  # src/Makefile.am and Debian's default -O2 (its tarball has no configure
  # script, and autoreconf is not needed for this).
  mkdir -p "$prefix/patchelf/bin"
  g++ -g -O2 -std=c++17 -D_FILE_OFFSET_BITS=64 "-DPACKAGE_STRING=\"patchelf $upstream\"" \
    -o "$patchelf_bin" "$src/tree/src/patchelf.cc" 2>"$src/build.log" ||
    die "building patchelf failed: see $src/build.log"
  "$patchelf_bin" --version >&2 || die "the built patchelf does not run"
  rm -rf "$src/tree"
  echo "$patchelf_bin"
  exit 0
fi

version=$(apt-cache show --no-all-versions "$PKG" 2>/dev/null | sed -n 's/^Version: //p' | head -1)
[[ -n $version ]] || die "$PKG not found in $SUITE"
deps=$(apt-cache show --no-all-versions "$PKG" | sed -n 's/^Depends: //p' | head -1)
echo "get_auditwheel.sh: $PKG $version ($SUITE), Depends: $deps" >&2
rm -f "$prefix"/debs/*.deb
(cd "$prefix/debs" && apt-get -q download "$PKG=$version" >&2) || die "apt-get download $PKG failed"
deb=$(ls "$prefix"/debs/*.deb)

# Every dependency must be a package this system has (python3:any, the
# two libraries): nothing else would be on sys.path.
IFS=',' read -ra dep_list <<<"$deps"
for d in "${dep_list[@]}"; do
  name=$(sed -E 's/^ *([^ :(|]+).*/\1/' <<<"$d")
  case $name in
    python3 | python3-packaging | python3-pyelftools) ;;
    *) die "$PKG $version depends on $name, which this script does not provide" ;;
  esac
done

rm -rf "$prefix/root"
dpkg-deb -x "$deb" "$prefix/root"
site=$(ls -d "$prefix"/root/usr/lib/python3/dist-packages 2>/dev/null) ||
  die "$deb has no usr/lib/python3/dist-packages"
[[ -f $site/auditwheel/main.py ]] || die "$deb has no auditwheel/main.py"

mkdir -p "$prefix/bin"
cat >"$wrapper.tmp" <<EOF
#!/bin/sh
# $PKG $version from Debian $SUITE ($(basename "$deb")), unpacked by bench/get_auditwheel.sh
PYTHONPATH="$site\${PYTHONPATH:+:\$PYTHONPATH}" exec $PY -c 'import sys; from auditwheel.main import main; sys.argv[0] = "auditwheel"; sys.exit(main())' "\$@"
EOF
chmod +x "$wrapper.tmp"
mv "$wrapper.tmp" "$wrapper"
"$wrapper" --version >&2 || die "the unpacked auditwheel does not run with $PY"
echo "$wrapper"
