#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A short nightly over the bundled example (README "Nightly"; scripts/demo.sh
# ends with it): the wheel that scripts/demo.sh built goes through the
# manywheel driver as one job, a second configuration is made to fail on
# purpose (the same wheel for another Python), a third job is a smoke
# command; then the states, the failing log's tail and the published channel
# are shown, the job documents go into the stats store and the report is
# rendered (its path is the last line).
#
# Environment: LIBPKG_DEMO_OUT (default <repo>/out/example; scripts/demo.sh is
# run first when its built wheel is missing), PKGTOOL, MANYWHEEL (default: the
# build tree's), LIBPKG_BUILD_DIR (default <repo>/build).
# Output: <out>/nightly/root/<date>/ (logs, states, job documents, artifacts),
# <out>/nightly/channel/current/ (simple/, conda/, libtorch/),
# <out>/nightly/root/stats.db and <out>/nightly/report.html.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${LIBPKG_DEMO_OUT:-$repo/out/example}
build=${LIBPKG_BUILD_DIR:-$repo/build}
PKGTOOL=${PKGTOOL:-$build/tools/pkgtool/pkgtool}
MANYWHEEL=${MANYWHEEL:-$build/drivers/manywheel/manywheel}
if ! compgen -G "$out/dist/built/torchlike-*.whl" >/dev/null; then
  "$repo/scripts/demo.sh"
fi
wheel=$(echo "$out"/dist/built/torchlike-*.whl)
# The accelerator the example was built for (the demo's manywheel summary),
# and the demo's one-library CUDA table when it is a CUDA build.
accel=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["config"]["accelerator"])' \
  "$out/manywheel.json")
table=""
[[ $accel != cpu && -f $out/cuda-table.json ]] && table="--cuda-table $out/cuda-table.json"
py=$(/usr/bin/python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
other=3.12
[[ $py == 3.12 ]] && other=3.13
nightly=$out/nightly
rm -rf "$nightly"
mkdir -p "$nightly"
# One job per configuration; {python}, {artifact_dir} and {summary} are
# filled by the runner, the driver's --json summary lands in the job document.
# --no-runtime: demo.sh's manywheel step just imported this wheel in a venv
# (most of the 34 s the nightly took with it, on a loaded machine); the
# nightly shows the rest in under 2 s.
cat >"$nightly/jobs.json" <<JSON
{"template": ["sh", "-c",
  "echo ::step manywheel; $MANYWHEEL --wheel $wheel --cuda $accel $table --python {python} --no-runtime -o {artifact_dir} --json > {summary}"],
 "jobs": [
  {"name": "manywheel-py${py/./_}-$accel",
   "config": {"package_type": "manywheel", "python": "$py", "accelerator": "$accel"}},
  {"name": "manywheel-py${other/./_}-$accel",
   "config": {"package_type": "manywheel", "python": "$other", "accelerator": "$accel"}},
  {"name": "smoke", "argv": ["sh", "-c", "echo ::step smoke; $PKGTOOL --version"]}]}
JSON
set +e
"$PKGTOOL" nightly run --jobs "$nightly/jobs.json" --root "$nightly/root" -j 2 \
  --channel "$nightly/channel" --keep 5
rc=$?
set -e
[[ $rc == 1 ]] || { echo "demo_nightly: expected exactly the planted failure (exit 1), got $rc" >&2; exit 1; }
"$PKGTOOL" nightly status --root "$nightly/root"
echo "--- the failing job's log (pkgtool nightly logs manywheel-py${other/./_}-$accel --tail 3):"
"$PKGTOOL" nightly logs "manywheel-py${other/./_}-$accel" --root "$nightly/root" --tail 3
echo "--- published: $nightly/channel/current/simple/torchlike/index.html"
cat "$nightly/channel/current/simple/torchlike/index.html"
date=$(cd "$nightly/root" && echo 2*)
echo "--- stats and report:"
"$PKGTOOL" stats ingest --db "$nightly/root/stats.db" "$nightly/root/$date/jobs"
"$PKGTOOL" stats query --db "$nightly/root/stats.db" \
  "SELECT job, status, failure, log FROM documents ORDER BY job"
"$PKGTOOL" nightly report --db "$nightly/root/stats.db" --html "$nightly/report.html" \
  --nightly-root "$nightly/root"
echo "report: $nightly/report.html"
