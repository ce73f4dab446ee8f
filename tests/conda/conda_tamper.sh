# SPDX-License-Identifier: BSD-3-Clause
# pkgtool conda verify: consistent packages pass (exit 0); a changed file, a
# missing file, an unlisted file, a wrong name, a bad metadata.json are
# findings (exit 1); unreadable packages are errors (exit 2).
source "$(dirname "${BASH_SOURCE[0]}")/conda_lib.sh"
require_tools gcc

P=$SCRATCH/prefix
stage_prefix "$P"
check "pack" "$PKGTOOL" conda pack "$P" --name foo --version 1.0 --format both -o "$SCRATCH/out"
check "extract" "$PKGTOOL" conda extract "$SCRATCH/out/foo-1.0-0.tar.bz2" -d "$SCRATCH/tree"
expect_status 0 "verify good packages" "$PKGTOOL" conda verify "$SCRATCH"/out/*

# rebuild NAME: re-tar $SCRATCH/t (with its old info/) as NAME.tar.bz2 with
# Python's tarfile, then verify must report a finding mentioning $2.
rebuild_and_expect() {
  local name=$1 needle=$2
  mkdir -p "$SCRATCH/bad"
  "${CHECK[@]}" retar "$SCRATCH/t" "$SCRATCH/bad/$name.tar.bz2"
  expect_status 1 "$name: verify reports a finding" "$PKGTOOL" conda verify "$SCRATCH/bad/$name.tar.bz2"
  if grep -q -- "$needle" "$SCRATCH/last.out"; then pass; else
    fail "$name: no finding mentioning '$needle'"
    cat "$SCRATCH/last.out" >&2
  fi
}
fresh() { rm -rf "$SCRATCH/t"; cp -a "$SCRATCH/tree" "$SCRATCH/t"; }

fresh
check "untampered re-tar is clean" "${CHECK[@]}" retar "$SCRATCH/t" "$SCRATCH/clean-1.0-0.tar.bz2"
mv "$SCRATCH/clean-1.0-0.tar.bz2" "$SCRATCH/foo-1.0-0.tar.bz2"
expect_status 0 "Python re-tar of the same tree verifies" "$PKGTOOL" conda verify "$SCRATCH/foo-1.0-0.tar.bz2"

fresh
printf '#define FOO_ANSWER 43\n' >"$SCRATCH/t/include/nested/deep/foo.h"  # same size
rebuild_and_expect foo-1.0-0 "include/nested/deep/foo.h: sha256"
mv "$SCRATCH/bad/foo-1.0-0.tar.bz2" "$SCRATCH/bad/same-size.tar.bz2"

fresh
printf 'longer content\n' >>"$SCRATCH/t/bin/run-foo"
rebuild_and_expect foo-1.0-0 "bin/run-foo: size"
rm "$SCRATCH/bad/foo-1.0-0.tar.bz2"

fresh
rm "$SCRATCH/t/lib/libfoo.so.1"
rebuild_and_expect foo-1.0-0 "lib/libfoo.so.1: listed in info/paths.json but missing"
rm "$SCRATCH/bad/foo-1.0-0.tar.bz2"

fresh
echo extra >"$SCRATCH/t/share/extra.txt"
rebuild_and_expect foo-1.0-0 "share/extra.txt: member not listed"
rm "$SCRATCH/bad/foo-1.0-0.tar.bz2"

fresh
rm "$SCRATCH/t/lib/libfoo.so" && ln -s ../bin/foo "$SCRATCH/t/lib/libfoo.so"
rebuild_and_expect foo-1.0-0 "lib/libfoo.so: softlink sha256"
rm "$SCRATCH/bad/foo-1.0-0.tar.bz2"

fresh
rm "$SCRATCH/t/info/index.json"
rebuild_and_expect foo-1.0-0 "info/index.json: missing"
rm "$SCRATCH/bad/foo-1.0-0.tar.bz2"

fresh
rebuild_and_expect foo-2.0-0 "does not match the file name"

# .conda with a wrong metadata.json and a misnamed component.
"$LIBPKG_PYTHON" - "$SCRATCH/out/foo-1.0-0.conda" "$SCRATCH/bad/foo-1.0-0.conda" <<'PY'
import sys, zipfile
src, dst = sys.argv[1:]
with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w") as out:
    out.writestr("metadata.json", '{"conda_pkg_format_version": 3}')
    out.writestr("pkg-other-1.0-0.tar.zst", z.read("pkg-foo-1.0-0.tar.zst"))
    out.writestr("info-foo-1.0-0.tar.zst", z.read("info-foo-1.0-0.tar.zst"))
PY
expect_status 1 "bad .conda: verify reports findings" "$PKGTOOL" conda verify --json "$SCRATCH/bad/foo-1.0-0.conda"
check "findings name metadata.json and the missing pkg member" "$LIBPKG_PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))[0]
where = {f["where"] for f in r["findings"]}
assert not r["ok"], r
assert {"metadata.json", "pkg-foo-1.0-0.tar.zst", "pkg-other-1.0-0.tar.zst"} <= where, where
' "$SCRATCH/last.out"

# Unreadable input is an error, not a finding.
head -c 3000 "$SCRATCH/out/foo-1.0-0.tar.bz2" >"$SCRATCH/bad/trunc-1.0-0.tar.bz2"
expect_status 2 "truncated .tar.bz2" "$PKGTOOL" conda verify "$SCRATCH/bad/trunc-1.0-0.tar.bz2"
head -c 3000 "$SCRATCH/out/foo-1.0-0.conda" >"$SCRATCH/bad/trunc-1.0-0.conda"
expect_status 2 "truncated .conda" "$PKGTOOL" conda verify "$SCRATCH/bad/trunc-1.0-0.conda"
expect_status 2 "not a package name" "$PKGTOOL" conda verify "$SCRATCH/tree/info/index.json"

# Metadata from --meta, overridden by flags, lands in index.json/about.json.
cat >"$SCRATCH/meta.json" <<'JSON'
{"name": "bar", "version": "2.0", "build": "h1234_1", "build_number": 1,
 "depends": ["python >=3.8"], "constrains": ["baz <2"], "license": "BSD-3-Clause",
 "summary": "a summary", "home": "https://example.org", "description": "long"}
JSON
check "pack with --meta" "$PKGTOOL" conda pack "$P" --meta "$SCRATCH/meta.json" \
  --license MIT --no-placeholder -o "$SCRATCH/meta-out"
check "index.json and about.json from --meta" "$LIBPKG_PYTHON" - \
  "$SCRATCH/meta-out/bar-2.0-h1234_1.conda" <<'PY'
import io, json, sys, tarfile, zipfile, zstandard
z = zipfile.ZipFile(sys.argv[1])
raw = zstandard.ZstdDecompressor().decompress(z.read("info-bar-2.0-h1234_1.tar.zst"))
t = tarfile.open(fileobj=io.BytesIO(raw))
index = json.load(t.extractfile("info/index.json"))
about = json.load(t.extractfile("info/about.json"))
assert index["name"] == "bar" and index["build"] == "h1234_1", index
assert index["build_number"] == 1 and index["depends"] == ["python >=3.8"], index
assert index["constrains"] == ["baz <2"] and index["license"] == "MIT", index
assert index["subdir"] and index["timestamp"] == 1700000000000, index
assert about["summary"] == "a summary" and about["home"] == "https://example.org", about
assert "info/has_prefix" not in t.getnames(), "--no-placeholder still wrote has_prefix"
PY
echo '{"name": "bar", "verison": "1"}' >"$SCRATCH/typo.json"
expect_status 2 "unknown key in --meta" "$PKGTOOL" conda pack "$P" --meta "$SCRATCH/typo.json" -o "$SCRATCH/x"
expect_status 2 "missing --version" "$PKGTOOL" conda pack "$P" --name foo -o "$SCRATCH/x"
expect_status 2 "bad version" "$PKGTOOL" conda pack "$P" --name foo --version 1-2 -o "$SCRATCH/x"

finish
