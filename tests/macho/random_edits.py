#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Random install_name_tool edit sequences, ours vs llvm-install-name-tool-14.

Each step draws 1-4 operations from what the file holds now (its rpaths and
dependency names) plus fresh names, applies them with `pkgtool macho edit`
to one copy and with llvm-install-name-tool-14 to another, and requires:
the same exit status (0, or both refusing, e.g. a duplicate rpath or a
missing one), the same llvm-objdump view, the same `llvm-otool-14 -l` except
offsets into __LINKEDIT, macholib reading what `pkgtool inspect` reports,
and no duplicate LC_RPATH. On a thin arm64, a thin x86_64 and a universal2
dylib, 30 steps each, fixed seeds (LIBPKG_MACHO_SEED overrides).
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import oracles  # noqa: E402

PKGTOOL = os.environ["PKGTOOL"]
STEPS = 30


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def build(d):
    src = os.path.join(d, "a.c")
    with open(src, "w") as f:
        f.write("extern int b(void); int a(void) { return b(); }\n")
    out = {}
    for target in ("arm64-apple-macos11", "x86_64-apple-macos10.15"):
        arch = target.split("-")[0]
        lib = os.path.join(d, f"lib.{arch}.dylib")
        subprocess.check_call(
            ["clang-14", "-target", target, "-fuse-ld=lld", "-nostdlib",
             "-Wl,-undefined,dynamic_lookup", "-dynamiclib", "-o", lib, src,
             "-install_name", "@rpath/liba.dylib", "-Wl,-headerpad_max_install_names",
             "-Wl,-rpath,/build/lib", "-Wl,-rpath,@loader_path"])
        out[arch] = lib
    fat = os.path.join(d, "lib.fat.dylib")
    subprocess.check_call(["llvm-lipo-14", "-create", out["x86_64"], out["arm64"],
                           "-output", fat])
    out["fat"] = fat
    return out


def state(path):
    v = oracles.ours(path)
    first = next(iter(v.values()))
    return first["rpaths"], [d[0] for d in first["dylibs"]]


def fresh(rng):
    depth = rng.randint(1, 4)
    parts = [rng.choice(["@loader_path", "@executable_path", "/opt", "/usr/local"])]
    parts += ["".join(rng.choice("abcdefgh") for _ in range(rng.randint(1, 9)))
              for _ in range(depth)]
    return "/".join(parts)


def draw(rng, rpaths, dylibs):
    ops = []
    for _ in range(rng.randint(1, 4)):
        k = rng.choice(["id", "change", "add", "prepend", "delete", "rename", "delete_all"])
        if k == "id":
            ops += ["-id", "@rpath/" + fresh(rng).split("/")[-1] + ".dylib"]
        elif k == "change" and dylibs:
            ops += ["-change", rng.choice(dylibs), "@rpath/" + fresh(rng) + ".dylib"]
        elif k == "add":
            # Sometimes an rpath the file already has: both tools must refuse.
            p = rng.choice(rpaths) if rpaths and rng.random() < 0.2 else fresh(rng)
            if p not in ops:
                ops += ["-add_rpath", p]
        elif k == "prepend":
            p = fresh(rng)
            if p not in ops:
                ops += ["-prepend_rpath", p]
        elif k == "delete":
            p = rng.choice(rpaths) if rpaths and rng.random() < 0.8 else fresh(rng)
            if p not in ops:
                ops += ["-delete_rpath", p]
        elif k == "rename" and rpaths:
            old = rng.choice(rpaths)
            if old not in ops:
                ops += ["-rpath", old, fresh(rng)]
        elif k == "delete_all" and rng.random() < 0.15:
            ops += ["-delete_all_rpaths"]
    return ops or ["-add_rpath", fresh(rng)]


def main():
    seed = int(os.environ.get("LIBPKG_MACHO_SEED", "17"))
    failures = 0
    checks = 0
    with tempfile.TemporaryDirectory() as d:
        fixtures = build(d)
        for name, lib in fixtures.items():
            rng = random.Random(f"{seed}-{name}")
            ours, theirs = os.path.join(d, f"{name}.ours"), os.path.join(d, f"{name}.llvm")
            shutil.copy(lib, ours)
            shutil.copy(lib, theirs)
            for step in range(STEPS):
                rpaths, dylibs = state(ours)
                ops = draw(rng, rpaths, dylibs)
                a = run([PKGTOOL, "macho", "edit", *ops, ours])
                b = run(["llvm-install-name-tool-14", *ops, theirs])
                where = f"{name} step {step} {ops}"
                checks += 1
                if (a.returncode == 0) != (b.returncode == 0) or a.returncode not in (0, 2):
                    print(f"FAIL {where}: exit {a.returncode} vs llvm {b.returncode}\n"
                          f"  ours: {a.stderr.strip()}\n  llvm: {b.stderr.strip()}")
                    failures += 1
                    break
                view_a = oracles.otool_normalized(ours)
                view_b = oracles.otool_normalized(theirs)
                checks += 1
                if view_a != view_b:
                    print(f"FAIL {where}: otool -l differs beyond __LINKEDIT offsets")
                    failures += 1
                    break
                mine, lib_view = oracles.ours(ours), oracles.macholib_view(ours)
                checks += 1
                if mine != lib_view:
                    print(f"FAIL {where}: macholib {lib_view} vs inspect {mine}")
                    failures += 1
                    break
                checks += 1
                for arch, v in mine.items():
                    if len(set(v["rpaths"])) != len(v["rpaths"]):
                        print(f"FAIL {where}: {arch} has duplicate rpaths {v['rpaths']}")
                        failures += 1
    print(f"{checks} checks, {failures} failures (seed {seed})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
