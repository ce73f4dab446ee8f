#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Seeded randomized test of a patchelf-compatible editor against a model.

Runs against ${PATCHELF_UNDER_TEST:-$PATCHELF_OURS} (pkgtool's patchelf
entry point by default; Debian's /usr/bin/patchelf works too).

Each iteration compiles a small layout with random link options
  lib/libfoo.so    few or many exported symbols, optional version script
  lib/libbar.so    needs libm
  lib/libfoo-copy.so, lib/libfoo-<long>.so, lib/libbar-copy.so  copies
  alt/libbar.so    a copy in a second directory
  foreign/libfoo.so  a copy with another e_machine (ld.so and
                   --shrink-rpath must skip it)
  bin/app          links libfoo and libbar, prints "app ok 44"
(new/old dtags, -z separate-code/noseparate-code, relro/norelro, -z now,
-z max-page-size, hash style, PIE or not, SONAME or not, RPATH/RUNPATH
absent/short/long), for x86_64 and, when a cross compiler plus qemu-user
are installed, sometimes for aarch64/i686/s390x/armhf. Then it applies 1-6
random calls of the patchelf CLI to the executable or a library: set/add/
remove/shrink rpath (values up to a few hundred characters), --force-rpath,
replace/add/remove needed (names that exist on disk or not), set-soname,
set-interpreter (equivalent spellings of the real one), sometimes several
options in one call, sometimes with --output.

After every call:
  * the tool exits 0, and with --output leaves its input untouched;
  * readelf -d/-l/-V match the model (NEEDED list and order, SONAME,
    DT_RPATH vs DT_RUNPATH and value, interpreter, .gnu.version_r file
    names) and readelf prints no new warnings;
  * eu-elflint --gnu-ld reports nothing the pristine file did not;
  * pkgtool inspect --json and LIEF (tests/tools/lief_dump) agree with the
    model and with readelf (dynsym counts, version needs/defs unchanged);
  * --print-needed / --print-rpath / --print-soname of the tool agree;
  * with our tool, a call that changes nothing leaves the file
    byte-identical;
  * when the model says every library still resolves (ld.so search rules,
    symbol providers, version needs), the executable runs and prints its line.
At the end of an iteration `strip` must accept every edited file.

Model semantics are patchelf's (verified against Debian's patchelf 0.14.3
and upstream's source): --add-needed prepends the names of one call once
each, in byte order (patchelf keeps them in a std::set), not in command-line
order; one call applies set-soname,
set-interpreter, the rpath operation, remove-needed, replace-needed,
add-needed in that order; replace-needed renames .gnu.version_r file names
too and does not chain (A->B, B->C leaves B); an rpath operation converts
DT_RPATH to DT_RUNPATH unless --force-rpath (which converts the other way);
--shrink-rpath keeps relative entries and absolute directories holding a
still-unfound NEEDED library of the same e_machine. Where ours deliberately
differs (flavour "ours", detected from --version): --add-needed skips a
library already needed, and --add-rpath skips directories already present.

Debian's patchelf 0.14.3 loses or clobbers edits when one call combines
different kinds of edits (--set-soname X --add-needed Y leaves SONAME=Y;
--set-rpath R --remove-needed L keeps L when the new DT_RUNPATH grows
.dynamic; --replace-needed A B --add-needed A leaves A twice), so for a
non-libpkg tool each call carries one kind of edit (repeated, plus
--force-rpath) unless LIBPKG_PROPERTY_MULTI=full. Its output also draws eu-elflint complaints
(stale .symtab _DYNAMIC), so elflint/strip findings are failures only for
our tool and warnings otherwise (LIBPKG_PROPERTY_STRICT=1 makes them fail).

Environment: LIBPKG_PROPERTY_SEED (printed; reproduces a run),
LIBPKG_PROPERTY_ITERATIONS (default 120), LIBPKG_PROPERTY_BUDGET_S (default
80: no new iteration starts after this many seconds), LIBPKG_PROPERTY_ONLY=N (run
iteration N only), LIBPKG_PROPERTY_ARCHES (e.g. "x86_64,s390x"),
LIBPKG_KEEP_TMP=1, LIEF_DUMP, PKGTOOL, PATCHELF_UNDER_TEST, PATCHELF_OURS.
"""

import copy
import os
import random
import shlex
import shutil
import string
import struct
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import elfref  # noqa: E402

EXPECTED_OUTPUT = "app ok 44"

# ------------------------------------------------------------ architectures

ARCHES = {
    # name: (gcc prefix, qemu, sysroot, interpreter, e_machine, foreign e_machine)
    "x86_64": ("", None, None, "/lib64/ld-linux-x86-64.so.2", 62, 183),
    "aarch64": ("aarch64-linux-gnu-", "qemu-aarch64", "/usr/aarch64-linux-gnu",
                "/lib/ld-linux-aarch64.so.1", 183, 62),
    "i686": ("i686-linux-gnu-", "qemu-i386", "/usr/i686-linux-gnu",
             "/lib/ld-linux.so.2", 3, 62),
    "s390x": ("s390x-linux-gnu-", "qemu-s390x", "/usr/s390x-linux-gnu",
              "/lib/ld64.so.1", 22, 62),
    "armhf": ("arm-linux-gnueabihf-", "qemu-arm", "/usr/arm-linux-gnueabihf",
              "/lib/ld-linux-armhf.so.3", 40, 62),
}


def system_dirs(arch):
    if arch == "x86_64":
        return ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64"]
    root = ARCHES[arch][2]
    return [os.path.join(root, "lib"), os.path.join(root, "lib64")]


def usable_arches(tmp):
    """Arches whose toolchain links and whose programs run here."""
    wanted = os.environ.get("LIBPKG_PROPERTY_ARCHES")
    names = wanted.split(",") if wanted else list(ARCHES)
    ok, notes = [], []
    src = os.path.join(tmp, "probe.c")
    with open(src, "w") as f:
        f.write('#include <stdio.h>\nint main(void){puts("probe");return 0;}\n')
    for a in names:
        if a not in ARCHES:
            notes.append(f"note: unknown arch {a!r} in LIBPKG_PROPERTY_ARCHES")
            continue
        prefix, qemu, sysroot = ARCHES[a][:3]
        # scripts/setup.sh installs every toolchain and qemu: missing or
        # broken is a failure, never a silently smaller test.
        for tool in [prefix + "gcc", prefix + "strip"] + ([qemu] if qemu else []):
            if not shutil.which(tool):
                elfref.missing(f"{tool} not installed: no {a} layouts")
        exe = os.path.join(tmp, f"probe-{a}")
        try:
            elfref.run([prefix + "gcc", "-o", exe, src], timeout=120)
            cmd = ([qemu, "-L", sysroot] if qemu else []) + [exe]
            rc, out, err = elfref.run(cmd, check=False, timeout=60)
            if rc != 0 or "probe" not in out:
                raise RuntimeError(f"probe program failed: {err.strip()[:200]}")
            ok.append(a)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            elfref.missing(f"the {a} toolchain does not build or run a program: "
                           f"{str(e).strip().splitlines()[-1][:200]}")
    return ok, notes


# ------------------------------------------------------------------ layouts

APP_C = r"""
#include <stdio.h>
extern int foo_value(void);
extern int bar(int);
int main(void) { printf("app ok %d\n", foo_value() + bar(1)); return 0; }
"""
BAR_C = r"""
#include <math.h>
int bar(int x) { volatile double d = x; return (int)cos(d * 0.0) + x; }
"""
LONG_FOO = "libfoo-" + "long" * 16 + ".so"


def foo_source(nsyms):
    lines = [f"int foo_{i}(void) {{ return {i % 7}; }}" for i in range(nsyms)]
    lines.append("int foo_value(void) { return 42 + foo_0() * 0; }")
    return "\n".join(lines) + "\n"


def rand_name(rng, length=None):
    if length is None:
        length = rng.choice([1, 3, 8, 20, 60, 150])
    return "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(length))


class Layout:
    def __init__(self, rng, root, arch):
        self.rng, self.root, self.arch = rng, root, arch
        self.prefix, self.qemu, self.sysroot, self.interp, self.machine, self.foreign = ARCHES[arch]
        self.lib = os.path.join(root, "lib")
        self.alt = os.path.join(root, "alt")
        self.foreign_dir = os.path.join(root, "foreign")
        self.bin = os.path.join(root, "bin")
        for d in (self.lib, self.alt, self.foreign_dir, self.bin):
            os.makedirs(d)
        r = rng
        self.opts = {
            "arch": arch,
            "dtags": r.choice(["new", "old"]),
            "separate_code": r.choice([True, False]),
            "relro": r.choice([True, False]),
            "now": r.random() < 0.3,
            "max_page": r.choice([4096, 4096, 16384, 65536] + ([2097152] if r.random() < 0.1 else [])),
            "hash": r.choice(["gnu", "sysv", "both"]),
            "pie": r.random() < 0.7,
            "soname": r.random() < 0.75,
            "nsyms": r.choice([2, 2, 40, 1500]),
            "versioned": r.random() < 0.4,
            "exe_rpath": r.choices(["origin", "abs", "long", "none"], [4, 2, 2, 1])[0],
            "lib_rpath": r.choices([None, "short", "long"], [3, 1, 1])[0],
        }

    def ldflags(self):
        o = self.opts
        f = ["-Wl,--enable-new-dtags" if o["dtags"] == "new" else "-Wl,--disable-new-dtags",
             "-Wl,-z," + ("separate-code" if o["separate_code"] else "noseparate-code"),
             "-Wl,-z," + ("relro" if o["relro"] else "norelro"),
             f"-Wl,-z,max-page-size={o['max_page']}",
             f"-Wl,--hash-style={o['hash']}"]
        if o["max_page"] < 4096 * 4:
            f.append(f"-Wl,-z,common-page-size={o['max_page']}")
        if o["now"]:
            f.append("-Wl,-z,now")
        return f

    def build(self):
        o, cc = self.opts, self.prefix + "gcc"
        src = os.path.join(self.root, "src")
        os.makedirs(src)
        files = {"foo.c": foo_source(o["nsyms"]), "bar.c": BAR_C, "app.c": APP_C,
                 "foo.map": "FOO_1.0 { global: foo_*; local: *; };\n"}
        for n, t in files.items():
            with open(os.path.join(src, n), "w") as f:
                f.write(t)
        lf = self.ldflags()

        def lib_rpath():
            if o["lib_rpath"] == "short":
                return ["-Wl,-rpath,$ORIGIN"]
            if o["lib_rpath"] == "long":
                return ["-Wl,-rpath,$ORIGIN:/opt/" + rand_name(self.rng, 180)]
            return []

        foo = os.path.join(self.lib, "libfoo.so")
        cmd = [cc, "-shared", "-fPIC", "-O1", "-o", foo, os.path.join(src, "foo.c"), *lf, *lib_rpath()]
        if o["soname"]:
            cmd.append("-Wl,-soname,libfoo.so")
        if o["versioned"]:
            cmd.append(f"-Wl,--version-script={src}/foo.map")
        elfref.run(cmd, timeout=300)
        bar = os.path.join(self.lib, "libbar.so")
        cmd = [cc, "-shared", "-fPIC", "-O1", "-o", bar, os.path.join(src, "bar.c"), *lf,
               *lib_rpath(), "-lm"]
        if o["soname"]:
            cmd.append("-Wl,-soname,libbar.so")
        elfref.run(cmd, timeout=300)
        app = os.path.join(self.bin, "app")
        rp = {"origin": ["-Wl,-rpath,$ORIGIN/../lib"],
              "abs": [f"-Wl,-rpath,{self.lib}"],
              "long": [f"-Wl,-rpath,/opt/{rand_name(self.rng, 120)}:$ORIGIN/../lib:"
                       f"/nonexistent/{rand_name(self.rng, 90)}"],
              "none": []}[o["exe_rpath"]]
        cmd = [cc, "-O1", "-o", app, os.path.join(src, "app.c"), f"-L{self.lib}",
               "-lfoo", "-lbar", *lf, *rp]
        cmd += ["-fPIE", "-pie"] if o["pie"] else ["-fno-PIE", "-no-pie"]
        elfref.run(cmd, timeout=300)
        shutil.copy2(foo, os.path.join(self.lib, "libfoo-copy.so"))
        shutil.copy2(foo, os.path.join(self.lib, LONG_FOO))
        shutil.copy2(bar, os.path.join(self.lib, "libbar-copy.so"))
        shutil.copy2(bar, os.path.join(self.alt, "libbar.so"))
        fpath = os.path.join(self.foreign_dir, "libfoo.so")
        shutil.copy2(foo, fpath)
        with open(fpath, "r+b") as f:
            data = f.read(6)
            f.seek(18)
            f.write(struct.pack("<H" if data[5] == 1 else ">H", self.foreign))
        self.identity = {}
        for d, n, ident in ((self.lib, "libfoo.so", "foo"), (self.lib, "libfoo-copy.so", "foo"),
                            (self.lib, LONG_FOO, "foo"), (self.lib, "libbar.so", "bar"),
                            (self.lib, "libbar-copy.so", "bar"), (self.alt, "libbar.so", "bar")):
            self.identity[os.path.join(d, n)] = ident
        self.requires = {app: {"foo", "bar", "libc.so.6"}, foo: {"libc.so.6"},
                         bar: {"libc.so.6", "libm.so.6"}}
        self.app, self.foo, self.bar = app, foo, bar
        return self

    def run_app(self):
        cmd = ([self.qemu, "-L", self.sysroot] if self.qemu else []) + [self.app]
        env = {k: v for k, v in os.environ.items() if not k.startswith("LD_")}
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=60, env=env, cwd=self.root)
        except subprocess.TimeoutExpired:
            return False, "timed out"
        out = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
        return p.returncode == 0 and EXPECTED_OUTPUT in out, f"exit {p.returncode}: {out.strip()[:400]}"


# -------------------------------------------------------------------- model

def read_state(path):
    """The dynamic state as readelf shows it (also the pristine model)."""
    info = elfref.readelf_info(path)
    return {
        "needed": info["needed"], "soname": info["soname"], "rpath": info["rpath"],
        "runpath": info["runpath"], "interpreter": info["interpreter"],
        "verneed": [[f, False] for f, _ in verneed_files(path)],
    }, info


def verneed_files(path):
    """[(file, [versions])] in .gnu.version_r order, from readelf -V."""
    _, out, _ = elfref.run([elfref.READELF, "-V", "-W", path])
    needs, section, cur = [], None, None
    for line in out.splitlines():
        if line.startswith("Version needs section"):
            section = "need"
        elif line.startswith("Version ") and "section" in line:
            section = None
        elif section == "need":
            if "File:" in line and "Cnt:" in line:
                cur = (line.split("File:")[1].split()[0], [])
                needs.append(cur)
            elif "Name:" in line and cur is not None:
                cur[1].append(line.split("Name:")[1].split()[0])
    return needs


def version_defs(path):
    _, out, _ = elfref.run([elfref.READELF, "-V", "-W", path])
    defs, section = set(), None
    for line in out.splitlines():
        if line.startswith("Version definition section"):
            section = "def"
        elif line.startswith("Version ") and "section" in line:
            section = None
        elif section == "def" and "Name:" in line:
            defs.add(line.split("Name:")[1].split()[0])
        elif section == "def" and "Parent" in line:
            pass
    return defs


def elf_machine(path):
    try:
        with open(path, "rb") as f:
            h = f.read(20)
    except OSError:
        return None
    if len(h) < 20 or h[:4] != b"\x7fELF":
        return None
    return struct.unpack("<H" if h[5] == 1 else ">H", h[18:20])[0]


def shrink(old, needed, machine):
    """patchelf --shrink-rpath on `old` for a file needing `needed`."""
    found = [False] * len(needed)
    kept = []
    for d in old.split(":"):
        if not d:
            continue
        if not d.startswith("/"):
            kept.append(d)
            continue
        useful = False
        for i, n in enumerate(needed):
            if not found[i] and elf_machine(os.path.join(d, n)) == machine:
                found[i] = useful = True
        if useful:
            kept.append(d)
    return ":".join(kept)


def apply_model(state, ops, flavour, machine):
    st = copy.deepcopy(state)
    force = any(op[0] == "force_rpath" for op in ops)
    for op in ops:
        if op[0] == "set_soname":
            st["soname"] = op[1]
        elif op[0] == "set_interpreter":
            st["interpreter"] = op[1]
    rp = [op for op in ops if op[0] in ("set_rpath", "add_rpath", "remove_rpath", "shrink_rpath")]
    if rp:
        kind = rp[0][0]
        old = st["runpath"] if st["runpath"] is not None else st["rpath"]
        if kind == "remove_rpath":
            st["rpath"] = st["runpath"] = None
        elif not (kind == "shrink_rpath" and old is None):
            if kind == "set_rpath":
                value = rp[0][1]
            elif kind == "add_rpath":
                if flavour == "ours":
                    parts = old.split(":") if old else []
                    for p in rp[0][1].split(":"):
                        if p and p not in parts:
                            parts.append(p)
                    value = ":".join(parts)
                else:
                    value = (old + ":" if old else "") + rp[0][1]
            else:
                value = shrink(old, st["needed"], machine)
            st["rpath"] = st["runpath"] = None
            st["rpath" if force else "runpath"] = value
    removes = [op[1] for op in ops if op[0] == "remove_needed"]
    if removes:
        st["needed"] = [n for n in st["needed"] if n not in removes]
        if flavour == "ours":
            # Ours drops the version-needs record of a removed library
            # (ld.so aborts on a record whose library is not loaded).
            st["verneed"] = [v for v in st["verneed"] if v[0] not in removes]
        else:
            for v in st["verneed"]:
                if v[0] in removes:
                    v[1] = True   # patchelf keeps the record
    repl = {}
    for op in ops:
        if op[0] == "replace_needed":
            repl[op[1]] = op[2]   # patchelf keeps a map: the last one wins
    if repl:
        st["needed"] = [repl.get(n, n) for n in st["needed"]]
        for v in st["verneed"]:
            v[0] = repl.get(v[0], v[0])
    adds = [op[1] for op in ops if op[0] == "add_needed"]
    if adds:
        if flavour == "ours":
            # Ours prepends in command-line order (documented difference),
            # once per name, skipping names already needed.
            adds = [a for i, a in enumerate(adds)
                    if a not in adds[:i] and a not in st["needed"]]
        else:
            # patchelf keeps the names in a std::set: one entry per name, in
            # byte order, whatever the order on the command line.
            adds = sorted(set(adds), key=lambda n: n.encode())
        st["needed"] = adds + st["needed"]
    return st


def verneed_matches(actual, model):
    """actual (file names) must be model minus some optional entries."""
    i = 0
    for name, optional in model:
        if i < len(actual) and actual[i] == name:
            i += 1
        elif not optional:
            return False
    return i == len(actual)


def reconcile_verneed(actual, model):
    opt = {n for n, o in model if o}
    return [[n, n in opt] for n in actual]


# ------------------------------------------------------ run-time prediction

SYSTEM_STATES = {}


class Obj:
    """A loaded object as ld.so sees it. `names` is glibc's l_libname: the
    NEEDED strings it was loaded under, plus its SONAME once a lookup has
    matched that (version needs are checked against these names only)."""

    def __init__(self, path, state, loader, system=False, idents=()):
        self.path, self.state, self.loader, self.system = path, state, loader, system
        self.names = set()
        self.soname = state.get("soname") if state else None
        self.idents = set(idents)

    def matches(self, name):
        if name in self.names:
            return True
        if self.soname == name:
            self.names.add(name)
            return True
        return False


def predict_runnable(layout, states, verdefs):
    """Does bin/app load and run? (None, reason) when the model can't tell."""
    sysdirs = system_dirs(layout.arch)

    def expand(value, obj):
        origin = os.path.dirname(os.path.abspath(obj.path))
        return [d.replace("$ORIGIN", origin).replace("${ORIGIN}", origin)
                for d in value.split(":") if d]

    def search_dirs(obj):
        dirs = []
        if obj.state["runpath"] is None:
            lo = obj
            while lo is not None:
                if lo.state["runpath"] is None and lo.state["rpath"]:
                    dirs += expand(lo.state["rpath"], lo)
                lo = lo.loader
        if obj.state["runpath"]:
            dirs += expand(obj.state["runpath"], obj)
        return dirs

    def file_state(path):
        rp = os.path.realpath(path)
        for p, st in states.items():
            if os.path.realpath(p) == rp:
                return st
        st, _ = read_state(path)
        return st

    def in_sysdir(p):
        return any(os.path.dirname(os.path.realpath(p)) == os.path.realpath(d) for d in sysdirs)

    def system_obj(p, name, loader):
        key = os.path.realpath(p)
        if key not in SYSTEM_STATES:
            SYSTEM_STATES[key] = read_state(p)[0]
        o = Obj(p, SYSTEM_STATES[key], loader, system=True, idents={name})
        o.names.add(name)
        return o

    app = Obj(layout.app, states[layout.app], None, idents={"app"})
    interp = Obj(layout.interp, None, None, system=True, idents={"ld.so"})
    interp.names.add(layout.interp)
    interp.soname = os.path.basename(layout.interp)
    loaded = [app, interp]
    queue = [app]
    while queue:
        obj = queue.pop(0)
        for name in obj.state["needed"]:
            if "/" in name:
                return None, f"NEEDED with a slash: {name}"
            hit = next((o for o in loaded if o.matches(name)), None)
            if hit:
                continue
            found = None
            for d in search_dirs(obj) + sysdirs:
                p = os.path.join(d, name)
                if elf_machine(p) == layout.machine:
                    found = p
                    break
            if found is None:
                return False, f"{name} (needed by {obj.path}) not found"
            real = os.path.realpath(found)
            same = next((o for o in loaded if os.path.realpath(o.path) == real), None)
            if same:
                same.names.add(name)
                continue
            ident = layout.identity.get(real) or layout.identity.get(found)
            if ident is not None:
                new = Obj(found, file_state(found), obj, idents={ident})
                new.names.add(name)
            elif in_sysdir(found):
                new = system_obj(found, name, obj)
            else:
                return None, f"{found} is not a file the model knows"
            loaded.append(new)
            queue.append(new)
    idents = set().union(*(o.idents for o in loaded))
    for o in loaded:
        if o.system:
            continue
        base = layout.app if o is app else (layout.foo if "foo" in o.idents else layout.bar)
        missing = layout.requires[base] - idents
        if missing:
            return False, f"{o.path} needs symbols from {sorted(missing)}"
        # libbar calls cos, an IFUNC in libm: ld.so must relocate libm
        # first, which it only guarantees when libm is a dependency of
        # libbar. Loaded by someone else, libm may come later and ld.so
        # stops with "Relink ... for IFUNC symbol `cos'" — or not, depending
        # on the load order: unpredictable, so the model makes no claim.
        if base == layout.bar and "libm.so.6" not in o.state["needed"]:
            return None, f"{o.path} uses libm's IFUNC cos without NEEDED libm"
        for vfile, _ in o.state["verneed"]:
            prov = next((x for x in loaded if vfile in x.names), None)   # find_needed()
            if prov is None:
                return False, f"{o.path}: version need on {vfile}, which is not loaded"
            if not prov.system:
                needed_versions = dict(verneed_files(o.path)).get(vfile, [])
                have = verdefs.setdefault(prov.path, version_defs(prov.path))
                # A provider without version definitions satisfies any
                # version need (glibc only warns under LD_DEBUG).
                if have and not set(needed_versions) <= have:
                    return False, f"{o.path}: {vfile} lacks {set(needed_versions) - have}"
    return True, "all libraries resolve"


# --------------------------------------------------------------- generation

def rpath_pool(layout, target):
    sysdir = system_dirs(layout.arch)[0]
    pool = ["$ORIGIN/../lib", "$ORIGIN", layout.lib, layout.alt, layout.foreign_dir,
            sysdir, "$ORIGIN/../alt", "/nonexistent/" + rand_name(layout.rng)]
    if target == layout.app:
        pool += ["$ORIGIN/../lib"] * 3
    return pool


def gen_rpath(rng, layout, target, nmax):
    pool = rpath_pool(layout, target)
    parts = [rng.choice(pool) for _ in range(rng.randint(1, nmax))]
    if rng.random() < 0.3:
        parts.append("/opt/" + rand_name(rng, rng.choice([40, 120, 250])))
    return ":".join(parts)


def gen_name(rng, layout, state, purpose):
    r = rng.random()
    existing = ["libfoo.so", "libbar.so", "libfoo-copy.so", LONG_FOO, "libbar-copy.so"]
    if purpose == "replace_to":
        if r < 0.45:
            return None   # "a copy of the same library": decided by caller
        if r < 0.6:
            return rng.choice(existing)
        return "libmissing-" + rand_name(rng) + ".so"
    # add
    if r < 0.25 and state["needed"]:
        return rng.choice(state["needed"])        # already present
    if r < 0.45:
        return rng.choice(["libm.so.6", "libc.so.6", "libdl.so.2"])
    if r < 0.65:
        return rng.choice(existing)
    return "libmissing-" + rand_name(rng) + ".so"


COPY_OF = {"libfoo.so": ["libfoo-copy.so", LONG_FOO], "libbar.so": ["libbar-copy.so"],
           "libfoo-copy.so": ["libfoo.so", LONG_FOO], LONG_FOO: ["libfoo.so"],
           "libbar-copy.so": ["libbar.so"]}


def gen_call(rng, layout, target, state, flavour, multi_full):
    weights = {"set_rpath": 3, "add_rpath": 2, "remove_rpath": 1, "shrink_rpath": 1.5,
               "replace_needed": 2.5, "add_needed": 2, "remove_needed": 1.5,
               "set_soname": 1.5 if target != layout.app else 0,
               "set_interpreter": 0.6 if target == layout.app else 0}
    n = 1 if rng.random() < 0.55 else rng.randint(2, 4)
    kinds = []
    for _ in range(n * 3):
        if len(kinds) >= n:
            break
        k = rng.choices(list(weights), list(weights.values()))[0]
        if k.endswith("_rpath") and any(x.endswith("_rpath") for x in kinds):
            continue
        if k in ("set_soname", "set_interpreter") and k in kinds:
            continue
        if flavour != "ours" and not multi_full and kinds and k not in kinds:
            continue   # patchelf 0.14: one kind of edit per call (see the docstring)
        kinds.append(k)
    ops = []
    for k in kinds:
        if k == "set_rpath":
            ops.append((k, gen_rpath(rng, layout, target, 4)))
        elif k == "add_rpath":
            ops.append((k, gen_rpath(rng, layout, target, 2)))
        elif k in ("remove_rpath", "shrink_rpath"):
            ops.append((k,))
        elif k == "replace_needed":
            froms = []
            for _ in range(rng.choice([1, 1, 2])):
                choices = [x for x in state["needed"] if x not in froms or rng.random() < 0.1]
                frm = rng.choice(choices) if choices and rng.random() < 0.8 \
                    else "libnothere-" + rand_name(rng, 5) + ".so"
                froms.append(frm)
                to = gen_name(rng, layout, state, "replace_to")
                if to is None:
                    to = rng.choice(COPY_OF.get(frm, ["libmissing-" + rand_name(rng) + ".so"]))
                ops.append((k, frm, to))
            if rng.random() < 0.1 and ops[-1][0] == "replace_needed":
                # A chain in one call: patchelf does not chain (A->B, B->C).
                ops.append((k, ops[-1][2], "libchain-" + rand_name(rng, 6) + ".so"))
        elif k == "add_needed":
            for _ in range(rng.choice([1, 1, 2])):
                ops.append((k, gen_name(rng, layout, state, "add")))
        elif k == "remove_needed":
            frm = rng.choice(state["needed"]) if state["needed"] and rng.random() < 0.85 \
                else "libnothere-" + rand_name(rng, 5) + ".so"
            ops.append((k, frm))
        elif k == "set_soname":
            ops.append((k, "libsoname-" + rand_name(rng) + ".so"))
        elif k == "set_interpreter":
            d, b = os.path.split(layout.interp)
            ops.append((k, d + "/" + "./" * rng.choice([0, 1, 5, 30, 120]) + b))
    if any(op[0].endswith("_rpath") for op in ops) and rng.random() < 0.3:
        ops.append(("force_rpath",))
    elif rng.random() < 0.05:
        ops.append(("force_rpath",))
    return ops


def op_args(ops):
    flag = {"set_rpath": "--set-rpath", "add_rpath": "--add-rpath", "remove_rpath": "--remove-rpath",
            "shrink_rpath": "--shrink-rpath", "replace_needed": "--replace-needed",
            "add_needed": "--add-needed", "remove_needed": "--remove-needed",
            "set_soname": "--set-soname", "set_interpreter": "--set-interpreter",
            "force_rpath": "--force-rpath"}
    return [[flag[op[0]], *op[1:]] for op in ops]


# ------------------------------------------------------------------ checking

def elflint(path):
    _, out, err = elfref.run(["eu-elflint", "--gnu-ld", path], check=False, timeout=120)
    lines = set()
    for line in (out + err).splitlines():
        line = line.strip()
        if not line or line == "No errors":
            continue
        lines.add(line.replace(path, "FILE"))
    return lines


# Tags whose value may legitimately change when an editor moves tables.
MOVABLE_TAGS = {"STRTAB", "STRSZ", "HASH", "GNU_HASH"}
VERSION_TAGS = {"VERNEED", "VERNEEDNUM", "VERSYM"}
EDITED_TAGS = {"NEEDED", "RPATH", "RUNPATH", "SONAME", "NULL"}


def other_dynamic(path):
    """[(tag, value)] of the dynamic entries the edits must not touch."""
    return sorted((tag, value) for tag, value in elfref.readelf_dynamic_entries(path)
                  if tag not in EDITED_TAGS)


def readelf_warnings(path):
    lines = set()
    for opt in ("-d", "-l", "-V", "-S", "--dyn-syms"):
        _, _, err = elfref.run([elfref.READELF, "-W", opt, path], check=False)
        for line in err.splitlines():
            if line.strip():
                lines.add(line.strip().replace(path, "FILE"))
    return lines


# eu-elflint messages accepted after an edit (substrings). Empty: every new
# message fails for our tool. Candidates, if so decided: "references unknown
# dependency" (--remove-needed keeps the library's .gnu.version_r record, as
# patchelf does; ld.so asserts if nothing else loads that library).
ELFLINT_ACCEPTED = []

STATE_FIELDS = ("needed", "soname", "rpath", "runpath", "interpreter")


class Checker:
    def __init__(self, tool, flavour, pkgtool, lief_dump, strict):
        self.tool, self.flavour, self.pkgtool, self.lief_dump = tool, flavour, pkgtool, lief_dump
        self.strict = strict
        self.failures, self.warnings = [], []
        self.counts = {"calls": 0, "runs": 0, "run_skipped": 0, "identical": 0}

    def fail(self, ctx, msg):
        self.failures.append(f"{ctx}: {msg}")

    def soft(self, ctx, msg):
        (self.failures if self.strict else self.warnings).append(f"{ctx}: {msg}")

    def check_file(self, ctx, path, model, pristine):
        """Compare the edited file with the model and the readers."""
        ok = True
        st, info = read_state(path)
        for f in STATE_FIELDS:
            if st[f] != model[f]:
                self.fail(ctx, f"{f}: expected={model[f]!r} readelf={st[f]!r}")
                ok = False
        actual_vn = [v[0] for v in st["verneed"]]
        if not verneed_matches(actual_vn, model["verneed"]):
            self.fail(ctx, f"version_r files: expected={[v[0] for v in model['verneed']]!r} "
                           f"(optional: {[v[0] for v in model['verneed'] if v[1]]!r}) "
                           f"readelf={actual_vn!r}")
            ok = False
        model["verneed"] = reconcile_verneed(actual_vn, model["verneed"])
        for key in ("defined", "undefined", "version_defs"):
            if info.get(key) != pristine["info"].get(key):
                self.fail(ctx, f"{key} changed: pristine={pristine['info'].get(key)!r} "
                               f"readelf={info.get(key)!r}")
        before, after = pristine["dynamic"], other_dynamic(path)
        if self.flavour != "ours":   # patchelf moves more tables around
            before, after = [t for t, _ in before], [t for t, _ in after]
        else:
            # Ours drops the version-needs records of removed libraries, so
            # VERNEEDNUM (and, with none left, VERNEED/VERSYM) may change;
            # the records themselves are checked against the model above.
            before = [(t, "*" if t in MOVABLE_TAGS else v) for t, v in before
                      if t not in VERSION_TAGS]
            after = [(t, "*" if t in MOVABLE_TAGS else v) for t, v in after
                     if t not in VERSION_TAGS]
        if before != after:
            lost = [x for x in before if x not in after]
            extra = [x for x in after if x not in before]
            self.fail(ctx, f"other dynamic entries changed: lost {lost} gained {extra}")
        new_warn = readelf_warnings(path) - pristine["readelf_warnings"]
        if new_warn:
            self.fail(ctx, f"new readelf warnings: {sorted(new_warn)}")
        lint = elflint(path)
        if lint is not None:
            new = {m for m in lint - pristine["elflint"]
                   if not any(a in m for a in ELFLINT_ACCEPTED)}
            if new:
                self.soft(ctx, f"new eu-elflint --gnu-ld messages: {sorted(new)}")
        # The other readers must agree with readelf on the edited file (a
        # disagreement is a reader bug; model vs readelf above is an editor
        # bug, so it is not repeated for every reader).
        if self.pkgtool:
            ours = elfref.pkgtool_inspect(self.pkgtool, [path])[path]
            if "error" in ours:
                self.fail(ctx, f"pkgtool inspect failed: {ours['error']}")
            else:
                for m in elfref.compare("pkgtool inspect", ours, {"readelf": info},
                                        ["needed", "soname", "rpath", "runpath", "interpreter",
                                         "class", "endian", "machine", "type", "flags", "flags_1",
                                         "defined", "undefined", "version_needs", "version_defs",
                                         "max_versions"], label="pkgtool"):
                    self.fail(ctx, m)
        if self.lief_dump:
            li = elfref.lief_info(self.lief_dump, path)
            if "error" in li:
                self.fail(ctx, f"LIEF cannot read the edited file: {li['error']}")
            else:
                for m in elfref.compare("LIEF", li, {"readelf": info},
                                        ["needed", "soname", "rpath", "runpath", "interpreter",
                                         "defined", "undefined", "version_needs"],
                                        label="lief"):
                    self.fail(ctx, m)
        # The tool's own print options, against readelf.
        rc, out, err = elfref.run([self.tool, "--print-needed", path], check=False)
        if rc != 0 or out.splitlines() != st["needed"]:
            self.fail(ctx, f"--print-needed: readelf={st['needed']!r} got={out.splitlines()!r} "
                           f"(exit {rc}) {err.strip()[:200]}")
        rc, out, err = elfref.run([self.tool, "--print-rpath", path], check=False)
        want = st["runpath"] if st["runpath"] is not None else (st["rpath"] or "")
        if rc != 0 or out.rstrip("\n") != want:
            self.fail(ctx, f"--print-rpath: readelf={want!r} got={out.rstrip(chr(10))!r} "
                           f"(exit {rc}) {err.strip()[:200]}")
        if st["soname"] is not None:
            rc, out, err = elfref.run([self.tool, "--print-soname", path], check=False)
            if rc != 0 or out.rstrip("\n") != st["soname"]:
                self.fail(ctx, f"--print-soname: readelf={st['soname']!r} "
                               f"got={out.rstrip(chr(10))!r} (exit {rc})")
        return ok


def run_iteration(it, seed, tmp, arches, checker, multi_full, budget_end):
    rng = random.Random(f"{seed}:{it}")
    arch = "x86_64" if rng.random() < 0.65 or len(arches) == 1 else rng.choice(arches)
    if arch not in arches:
        arch = arches[0]
    root = os.path.join(tmp, f"it{it}")
    os.makedirs(root)
    layout = Layout(rng, root, arch)
    ctx0 = f"[seed {seed} iteration {it} {arch}]"
    try:
        layout.build()
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        checker.fail(ctx0, f"could not build the layout {layout.opts}: {e}")
        return
    targets = [layout.app, layout.foo, layout.bar]
    pristine, states = {}, {}
    for t in targets:
        st, info = read_state(t)
        states[t] = st
        pristine[t] = {"info": info, "elflint": elflint(t) or set(),
                       "readelf_warnings": readelf_warnings(t),
                       "dynamic": other_dynamic(t),
                       "bytes": open(t, "rb").read()}
    verdefs = {}
    log = [f"{ctx0} layout {layout.opts}"]

    def check_run(ctx):
        pred, why = predict_runnable(layout, states, verdefs)
        if pred:
            ok, out = layout.run_app()
            checker.counts["runs"] += 1
            if not ok:
                checker.fail(ctx, f"bin/app should run ({why}) but: {out}")
                return False
        else:
            checker.counts["run_skipped"] += 1
            if pred is False:
                # Check the prediction too: a model that always says "won't
                # load" would make this check vacuous.
                ok, out = layout.run_app()
                if ok:
                    checker.warnings.append(f"{ctx}: the model predicted bin/app would not "
                                            f"load ({why}) but it ran")
        return True

    if not check_run(f"{ctx0} pristine"):
        for line in log:
            print(line)
        return
    edited = set()
    nsteps = rng.randint(1, 6)
    for step in range(nsteps):
        target = rng.choices(targets, [0.55, 0.25, 0.2])[0]
        ops = gen_call(rng, layout, target, states[target], checker.flavour, multi_full)
        rng.shuffle(ops)   # option order must not matter except as patchelf defines
        args = op_args(ops)
        use_output = rng.random() < 0.2
        flat = [a for group in args for a in group]
        before = open(target, "rb").read()
        rel = os.path.relpath(target, root)
        if use_output:
            out_path = target + ".out"
            cmd = [checker.tool, *flat, "--output", out_path, target]
        else:
            out_path = target
            cmd = [checker.tool, *flat, target]
        ctx = f"{ctx0} step {step + 1}/{nsteps} `patchelf {shlex.join(flat)}{' --output …' if use_output else ''} {rel}`"
        log.append(ctx)
        model = apply_model(states[target], ops, checker.flavour, layout.machine)
        checker.counts["calls"] += 1
        rc, out, err = elfref.run(cmd, check=False, timeout=300)
        if rc != 0:
            checker.fail(ctx, f"exit {rc}: {(err or out).strip()[:400]}")
            break
        if use_output:
            if open(target, "rb").read() != before:
                checker.fail(ctx, "--output modified its input file")
            os.replace(out_path, target)
        edited.add(target)
        # Byte-identity is required when every option is a no-op on its own
        # (not for net no-ops such as --remove-needed X --add-needed X).
        force = [op for op in ops if op[0] == "force_rpath"]
        unchanged = all(
            all(m1[f] == states[target][f] for f in STATE_FIELDS)
            for m1 in (apply_model(states[target], [op] + force, checker.flavour, layout.machine)
                       for op in ops if op[0] != "force_rpath"))
        if unchanged and checker.flavour == "ours":
            if open(target, "rb").read() != before:
                checker.fail(ctx, "nothing to change, but the file's bytes changed")
            else:
                checker.counts["identical"] += 1
        nfail = len(checker.failures)
        try:
            checker.check_file(ctx, target, model, pristine[target])
        except Exception as e:  # noqa: BLE001 - a reader choking is a finding
            checker.fail(ctx, f"checking the edited file failed: {type(e).__name__}: "
                              f"{str(e).strip()[:400]}")
        states[target] = model
        if len(checker.failures) > nfail:
            if os.environ.get("LIBPKG_KEEP_TMP") == "1":
                saved = f"{target}.before-step{step + 1}"
                with open(saved, "wb") as f:
                    f.write(before)
                print(f"{ctx}: input kept as {saved}")
            # Continue from what the file really holds so later steps test
            # later behaviour instead of repeating this mismatch.
            try:
                st, _ = read_state(target)
                st["verneed"] = model["verneed"]
                states[target] = st
            except Exception:  # noqa: BLE001
                pass
            break
        if not check_run(ctx):
            break
    for t in sorted(edited):
        out = t + ".stripped"
        strip = layout.prefix + "strip"
        rc, so, se = elfref.run([strip, "-o", out, t], check=False)
        msg = (so + se).strip()
        if rc != 0 or msg:
            checker.soft(f"{ctx0} strip {os.path.relpath(t, root)}",
                         f"exit {rc}: {msg[:300]}")
    if checker.failures and checker.failures[-1].startswith(ctx0):
        print("\n".join(log))


def main():
    tool = os.environ.get("PATCHELF_UNDER_TEST") or os.environ.get("PATCHELF_OURS")
    if not tool:
        elfref.missing("neither PATCHELF_UNDER_TEST nor PATCHELF_OURS is set")
    if not os.access(tool, os.X_OK):
        elfref.missing(f"{tool} is not executable (not built?)")
    for prog in ("gcc", "readelf", "strip"):
        if not shutil.which(prog):
            elfref.missing(f"{prog} not found")
    seed = os.environ.get("LIBPKG_PROPERTY_SEED") or str(random.SystemRandom().randrange(1 << 32))
    iterations = int(os.environ.get("LIBPKG_PROPERTY_ITERATIONS", "120"))
    budget = float(os.environ.get("LIBPKG_PROPERTY_BUDGET_S", "80"))
    only = os.environ.get("LIBPKG_PROPERTY_ONLY")
    multi_full = os.environ.get("LIBPKG_PROPERTY_MULTI") == "full"
    strict_env = os.environ.get("LIBPKG_PROPERTY_STRICT")

    _, ver, _ = elfref.run([tool, "--version"], check=False)
    flavour = "ours" if "libpkg" in ver else "patchelf"
    strict = strict_env == "1" if strict_env is not None else flavour == "ours"
    pkgtool = os.environ.get("PKGTOOL")
    if not pkgtool or not os.access(pkgtool, os.X_OK):
        elfref.missing(f"PKGTOOL ({pkgtool or 'unset'}) is not an executable: run through ctest")
    lief_dump = elfref.lief_dump_from_env()
    if not shutil.which("eu-elflint"):
        elfref.missing("eu-elflint not installed (elfutils)")

    print(f"seed {seed} (reproduce: LIBPKG_PROPERTY_SEED={seed}); tool {tool}: "
          f"{ver.strip()} [{flavour} semantics]; {iterations} iterations, budget {budget:.0f}s",
          flush=True)
    if flavour != "ours":
        print("note: not libpkg's patchelf: "
              + ("" if multi_full else "one kind of edit per call; ")
              + ("elflint/strip findings fail" if strict else "elflint/strip findings are warnings"))

    tmp = tempfile.mkdtemp(prefix="property-edits-")
    try:
        # A plain edit must work before random ones are worth running.
        probe = os.path.join(tmp, "probe.so")
        probe_src = os.path.join(tmp, "probe-lib.c")
        with open(probe_src, "w") as f:
            f.write("int probe(void) { return 1; }\n")
        elfref.run(["gcc", "-shared", "-fPIC", "-o", probe, probe_src])
        rc, out, err = elfref.run([tool, "--set-rpath", "/probe", probe], check=False)
        if rc != 0:
            print(f"FAIL: `{tool} --set-rpath /probe` on a plain library: exit {rc}: {err.strip()}")
            return 1
        arches, notes = usable_arches(tmp)
        for n in notes:
            print(n)
        if "x86_64" not in arches:
            elfref.missing("the native toolchain cannot build and run a test program")
        print(f"arches: {', '.join(arches)}", flush=True)

        checker = Checker(tool, flavour, pkgtool, lief_dump, strict)
        t0 = time.time()
        its = [int(only)] if only else range(iterations)
        done = 0
        for it in its:
            if not only and time.time() - t0 > budget:
                print(f"time budget reached after {done} iterations")
                break
            run_iteration(it, seed, tmp, arches, checker, multi_full, t0 + budget)
            done += 1
            if os.environ.get("LIBPKG_KEEP_TMP") != "1":
                shutil.rmtree(os.path.join(tmp, f"it{it}"), ignore_errors=True)
        c = checker.counts
        print(f"{done} iterations, {c['calls']} calls, app run {c['runs']} times "
              f"({c['run_skipped']} times predicted not to load), "
              f"{c['identical']} no-op calls left the file byte-identical, "
              f"{time.time() - t0:.1f}s")
        for w in checker.warnings:
            print(f"warning: {w}")
        if checker.failures:
            print(f"\n{len(checker.failures)} failure(s) (seed {seed}):")
            for f in checker.failures:
                print(f"FAIL {f}")
            return 1
        print("all checks passed")
        return 0
    finally:
        if os.environ.get("LIBPKG_KEEP_TMP") == "1":
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
