#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool cuda list|switch|env` over a fake root: exit statuses (0, and 2
# with a message naming the value and what is installed), --json output,
# and the env lines evaluated by bash.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
make_scratch
tmp=$SCRATCH
root=$tmp/root

# grep_err PATTERN DESCRIPTION: the last stderr contains PATTERN.
grep_err() {
  if grep -qE "$1" "$tmp/last.err"; then pass; else
    fail "$2: stderr lacks /$1/"
    sed 's/^/  | /' "$tmp/last.err" >&2
  fi
}
# json EXPR: EXPR evaluated with d = the last stdout's JSON.
json() { "$LIBPKG_PYTHON" -c "import json,sys; d=json.load(open('$tmp/last.out')); print($1)"; }

mkdir -p "$root/cuda-11.8" "$root/cuda-12.4/include" "$root/cuda-12.4/lib64" \
  "$root/cuda-12.4/magma" "$root/cuda-12.1/lib64"
echo "CUDA Version 11.8.89" > "$root/cuda-11.8/version.txt"
echo '{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}' > "$root/cuda-12.4/version.json"
printf '#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n' \
  > "$root/cuda-12.4/include/cudnn_version.h"
touch "$root/cuda-12.4/lib64/libnccl.so.2.21.5" "$root/cuda-12.1/lib64/libcudart.so.12.1.105"

expect_status 2 "no subcommand" "$PKGTOOL" cuda
expect_status 2 "unknown subcommand" "$PKGTOOL" cuda frobnicate
grep_err "frobnicate" "unknown subcommand message"

expect_status 0 "list" "$PKGTOOL" cuda list --root "$root"
[[ $(wc -l < "$tmp/last.out") == 3 ]] || fail "list: expected 3 lines: $(cat "$tmp/last.out")"
grep -q "12.4.1 .*cuda-12.4  (from version.json)  cudnn 9.1.0  nccl 2.21.5" "$tmp/last.out" ||
  fail "list line for 12.4: $(cat "$tmp/last.out")"

expect_status 0 "list --json" "$PKGTOOL" cuda list --root "$root" --json
[[ $(json '" ".join(t["version"] + "/" + t["version_source"] for t in d["toolkits"])') == \
   "11.8.89/version.txt 12.1.105/libcudart.so.X.Y.Z 12.4.1/version.json" ]] ||
  fail "list --json versions: $(cat "$tmp/last.out")"
[[ $(json 'd["toolkits"][2]["cudnn"], d["toolkits"][0]["cudnn"], d["toolkits"][2]["current"]') == \
   "9.1.0 None False" ]] || fail "list --json cudnn/current: $(cat "$tmp/last.out")"

expect_status 2 "env without a cuda link" "$PKGTOOL" cuda env --root "$root"
grep_err "cuda: does not exist" "env without link message"

expect_status 0 "switch cu124 --json" "$PKGTOOL" cuda switch cu124 --root "$root" --json
[[ $(json 'd["old_target"], d["new_target"], d["magma"], d["magma_new_target"]') == \
   "None cuda-12.4 switched cuda-12.4/magma" ]] || fail "switch --json: $(cat "$tmp/last.out")"
[[ $(readlink "$root/cuda") == cuda-12.4 ]] || fail "cuda link: $(readlink "$root/cuda")"
[[ $(readlink "$root/magma") == cuda-12.4/magma ]] || fail "magma link: $(readlink "$root/magma")"

expect_status 0 "switch 11.8" "$PKGTOOL" cuda switch 11.8 --root "$root"
grep -q "cuda -> cuda-11.8 (was cuda-12.4)" "$tmp/last.out" || fail "switch text: $(cat "$tmp/last.out")"
grep -q "no magma for cuda-11.8, left alone (still -> cuda-12.4/magma)" "$tmp/last.out" ||
  fail "switch magma text: $(cat "$tmp/last.out")"

expect_status 0 "list after switch" "$PKGTOOL" cuda list --root "$root" --json
[[ $(json '[t["version"] for t in d["toolkits"] if t["current"]]') == "['11.8.89']" ]] ||
  fail "current after switch: $(cat "$tmp/last.out")"

expect_status 2 "switch to a missing version" "$PKGTOOL" cuda switch 12.8 --root "$root"
grep_err "cuda-12\.8" "missing version names the value"
grep_err "installed: 11\.8, 12\.1, 12\.4" "missing version names what exists"
[[ $(readlink "$root/cuda") == cuda-11.8 ]] || fail "link changed by a failed switch"

expect_status 2 "switch to a bad spelling" "$PKGTOOL" cuda switch cu12x --root "$root"
grep_err "cu12x" "bad spelling named"
expect_status 2 "switch to cpu" "$PKGTOOL" cuda switch cpu --root "$root"
grep_err "'cpu' is not a CUDA version" "cpu refused"
expect_status 2 "switch without a version" "$PKGTOOL" cuda switch --root "$root"
expect_status 2 "env of a missing version" "$PKGTOOL" cuda env 10.2 --root "$root"
grep_err "installed: 11\.8, 12\.1, 12\.4" "env missing version names what exists"

expect_status 0 "env (current)" "$PKGTOOL" cuda env --root "$root"
got=$(env -i PATH=/usr/bin:/bin bash -c "$(cat "$tmp/last.out")"'
  printf "%s|%s|%s|%s|%s\n" "$CUDA_HOME" "$PATH" "$LD_LIBRARY_PATH" "$CUDA_VERSION" "${CUDNN_VERSION-unset}"')
want="$root/cuda-11.8|$root/cuda-11.8/bin:/usr/bin:/bin|$root/cuda-11.8/lib64|11.8|unset"
[[ $got == "$want" ]] || fail "env (current): got '$got', want '$want'"

expect_status 0 "env 12.4" "$PKGTOOL" cuda env 12.4 --root "$root"
got=$(env -i PATH=/bin LD_LIBRARY_PATH=/opt/x bash -c "$(cat "$tmp/last.out")"'
  printf "%s|%s|%s\n" "$LD_LIBRARY_PATH" "$CUDA_VERSION" "$CUDNN_VERSION"')
want="$root/cuda-12.4/lib64:/opt/x|12.4|9.1.0"
[[ $got == "$want" ]] || fail "env 12.4: got '$got', want '$want'"

# A real directory at root/cuda is never replaced.
real=$tmp/realroot
mkdir -p "$real/cuda/bin" "$real/cuda-12.4"
echo '{"cuda": {"version": "12.2.0"}}' > "$real/cuda/version.json"
expect_status 2 "switch over a real cuda directory" "$PKGTOOL" cuda switch 12.4 --root "$real"
grep_err "real directory" "real directory message"
[[ -d $real/cuda/bin && ! -L $real/cuda ]] || fail "real cuda directory touched"

expect_status 2 "list of a missing root" "$PKGTOOL" cuda list --root "$tmp/nope"

if [[ -e /usr/local/cuda ]]; then
  expect_status 0 "list of the machine's /usr/local" "$PKGTOOL" cuda list
  sed 's/^/  /' "$tmp/last.out"
else
  echo "note: /usr/local/cuda does not exist, machine toolkit not listed"
fi

finish
