# SPDX-License-Identifier: BSD-3-Clause
"""Dependency closure of an ELF file, resolved the way ld.so would, from
`pkgtool inspect --json` facts (NEEDED, RPATH, RUNPATH of every file reached).

usage: closure.py PKGTOOL FILE  ->  JSON on stdout:
  {"closure": {"libfoo.so.1": "/abs/path" or null, ...},
   "edges": ["FILE or soname -> needed soname", ...]}

Search order per needed name (ld.so(8)): DT_RPATH of the object and of the
objects that loaded it (only when the object has no DT_RUNPATH), then the
object's DT_RUNPATH, then /etc/ld.so.cache (`ldconfig -p`), then the default
directories. LD_LIBRARY_PATH is ignored on purpose: the test checks what the
files say, not what the environment patches in. A soname already loaded is
not searched again.

pkgtool has no closure of its own yet (inspect reports one file at a time);
when the deps layer lands, the test should use that and keep this as a
cross-check.
"""

import json
import os
import subprocess
import sys

DEFAULT_DIRS = ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
                "/lib", "/usr/lib"]


def inspect(pkgtool, path):
    out = subprocess.run([pkgtool, "inspect", "--json", path], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)[0]


def ld_cache():
    cache = {}
    try:
        text = subprocess.run(["ldconfig", "-p"], check=True, capture_output=True,
                              text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        try:
            text = subprocess.run(["/sbin/ldconfig", "-p"], check=True, capture_output=True,
                                  text=True).stdout
        except (OSError, subprocess.CalledProcessError):
            return cache
    for line in text.splitlines()[1:]:
        # "\tlibgomp.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libgomp.so.1"
        if "=>" not in line:
            continue
        left, path = line.split("=>", 1)
        name = left.strip().split(" ", 1)[0]
        if "x86-64" in left and name not in cache:
            cache[name] = path.strip()
    return cache


def expand(paths, origin):
    out = []
    for p in (paths or "").split(":"):
        if p:
            out.append(p.replace("$ORIGIN", origin).replace("${ORIGIN}", origin))
    return out


def main():
    pkgtool, root = sys.argv[1], os.path.abspath(sys.argv[2])
    cache = ld_cache()
    closure = {}
    edges = []
    # queue of (path, label, inherited RPATH dirs)
    queue = [(root, root, [])]
    seen_paths = set()
    while queue:
        path, label, inherited = queue.pop(0)
        if path in seen_paths:
            continue
        seen_paths.add(path)
        info = inspect(pkgtool, path)
        origin = os.path.dirname(os.path.realpath(path))
        own_rpath = expand(info.get("rpath"), origin)
        runpath = expand(info.get("runpath"), origin)
        if runpath:
            dirs, chain = runpath, []
        else:
            dirs, chain = own_rpath + inherited, own_rpath + inherited
        for name in info["needed"]:
            edges.append(label + " -> " + name)
            if name in closure:
                continue
            found = None
            for d in dirs:
                if os.path.isfile(os.path.join(d, name)):
                    found = os.path.join(d, name)
                    break
            if found is None and name in cache:
                found = cache[name]
            if found is None:
                for d in DEFAULT_DIRS:
                    if os.path.isfile(os.path.join(d, name)):
                        found = os.path.join(d, name)
                        break
            closure[name] = os.path.normpath(found) if found else None
            if found:
                queue.append((found, name, chain))
    json.dump({"closure": closure, "edges": edges}, sys.stdout, indent=2, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
