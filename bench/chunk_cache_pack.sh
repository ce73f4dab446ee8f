#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool wheel pack` of an unpacked wheel TREE without the chunk cache,
# with a cold cache (emptied first), a warm one, and the warm one again with
# every hit inflated and compared instead of trusted by its tag ("inflated":
# the cache's tag key is opened to others for that run, so pkgtool refuses
# it, as it treats another user's entries), 3 rounds, pinned with taskset;
# the outputs must be byte-identical each round. One line per run on
# stderr: wall, CPU, peak RSS and the load average at its start.
#   bench/chunk_cache_pack.sh TREE JOBS CPUS [PKGTOOL]
set -u
TREE=$1 J=$2 CPUS=$3
P=${4:-$(dirname "$0")/../build/tools/pkgtool/pkgtool}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/chunk-cache-pack.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export SOURCE_DATE_EPOCH=1700000000
for i in 1 2 3; do
  for mode in nocache cold warm inflated; do
    rm -rf "$WORK/out-$mode" && mkdir "$WORK/out-$mode"
    case $mode in
      nocache) args=(--no-cache) ;;
      cold) rm -rf "$WORK/cache"; args=(--cache-dir "$WORK/cache") ;;
      warm | inflated) args=(--cache-dir "$WORK/cache") ;;
    esac
    key="$WORK/cache/.hit-key-$(id -u)"
    [ "$mode" = inflated ] && chmod 0644 "$key"
    l=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f "$mode run $i: %e s wall, %U+%S s CPU, %M KB, load $l" \
      taskset -c "$CPUS" "$P" wheel pack "$TREE" -d "$WORK/out-$mode" -j "$J" "${args[@]}" >/dev/null
    [ "$mode" = inflated ] && chmod 0600 "$key"
  done
  if cmp "$WORK"/out-nocache/*.whl "$WORK"/out-cold/*.whl &&
    cmp "$WORK"/out-nocache/*.whl "$WORK"/out-warm/*.whl &&
    cmp "$WORK"/out-nocache/*.whl "$WORK"/out-inflated/*.whl; then
    echo "run $i: identical" >&2
  else
    echo "run $i: OUTPUTS DIFFER" >&2
    exit 1
  fi
done
