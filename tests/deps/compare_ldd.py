# SPDX-License-Identifier: BSD-3-Clause
"""Compares `pkgtool ldd --json` with the real loader's answer.

usage: compare_ldd.py PKGTOOL_JSON LOADER_TRACE [--root ROOT]

LOADER_TRACE is the output of `LD_TRACE_LOADED_OBJECTS=1 prog` (or
`ld.so --list prog`, or `ldd prog`): lines "soname => path (0x...)",
"soname => not found", "/path/to/ld.so (0x...)" and the vdso. Every soname
the loader lists must be resolved by pkgtool to the same realpath (or be
missing in both); pkgtool must not list sonames the loader did not load.
The interpreter line is matched against pkgtool's entry for the soname
whose realpath is the interpreter's (libc's NEEDED ld-linux-*.so.*).
Prints the differences and exits 1 when there are any.
"""
import json
import os
import re
import sys


def loader_map(text):
    libs, interp = {}, None
    for line in text.splitlines():
        line = line.strip()
        m = re.match(r"^(\S+) => not found$", line)
        if m:
            libs[m.group(1)] = None
            continue
        m = re.match(r"^(\S+) => (\S+) \(0x[0-9a-f]+\)$", line)
        if m:
            libs[m.group(1)] = os.path.realpath(m.group(2))
            continue
        m = re.match(r"^(/\S+) \(0x[0-9a-f]+\)$", line)
        if m:
            interp = os.path.realpath(m.group(1))
    return libs, interp


def main():
    tree = json.load(open(sys.argv[1]))
    libs, interp = loader_map(open(sys.argv[2]).read())
    ours = {name: info["realpath"] for name, info in tree["libs"].items()}
    problems = []
    for name, real in libs.items():
        if name not in ours:
            problems.append(f"{name}: loader {real}, pkgtool did not list it")
        elif ours[name] != real:
            problems.append(f"{name}: loader {real}, pkgtool {ours[name]}")
    for name, real in ours.items():
        if name in libs:
            continue
        # The loader prints the already-loaded interpreter without a name.
        if interp is not None and real == interp:
            continue
        problems.append(f"{name}: pkgtool {real}, not listed by the loader")
    for p in problems:
        print("  " + p)
    print(f"compared {len(libs)} loader entries with {len(ours)} pkgtool entries")
    sys.exit(1 if problems else 0)


main()
