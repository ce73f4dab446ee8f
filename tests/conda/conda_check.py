# SPDX-License-Identifier: BSD-3-Clause
"""Independent checks of conda packages for the conda_*.sh scripts.

Everything here uses only Python's standard library (zipfile, tarfile,
hashlib) plus the zstandard module cph depends on, so it shares no code with
libpkg. Subcommands print what is wrong and exit 1.

  tree-equal A B [--ignore-info]    same paths, types, modes, contents, links
  check-paths DIR                    info/paths.json + info/files vs the tree
  has-prefix DIR PREFIX EXPECT...    info/has_prefix == PREFIX scan == EXPECT
                                     (EXPECT items are MODE:PATH)
  zip-layout PKG.conda               member order, STORED, metadata.json
  retar DIR OUT.tar.bz2              rebuild a .tar.bz2 from a tree (info first)
  hostile OUTDIR OUTSIDE             write hostile packages into OUTDIR
"""
import hashlib
import io
import json
import os
import stat
import sys
import tarfile
import zipfile
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from testlib import abort  # noqa: E402


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tree(root, ignore_info=False):
    """path -> (type, mode, content-hash or link target) for every entry;
    directories only when empty (tar members do not carry the others)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        names = dirnames + filenames
        for name in names:
            full = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if ignore_info and (rel == "info" or rel.startswith("info/")):
                continue
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("symlink", None, os.readlink(full))
            elif stat.S_ISDIR(st.st_mode):
                if not os.listdir(full):
                    out[rel] = ("dir", None, None)
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("file", stat.S_IMODE(st.st_mode), sha256_file(full))
            else:
                out[rel] = ("special", None, None)
    return out


def tree_equal(a, b, ignore_info):
    ta, tb = tree(a, ignore_info), tree(b, ignore_info)
    bad = []
    for p in sorted(set(ta) | set(tb)):
        if ta.get(p) != tb.get(p):
            bad.append(f"{p}: {ta.get(p)} != {tb.get(p)}")
    if bad:
        abort(f"trees {a} and {b} differ:\n  " + "\n  ".join(bad[:20]))
    print(f"trees equal ({len(ta)} entries)")


def check_paths(root):
    with open(os.path.join(root, "info/paths.json")) as f:
        doc = json.load(f)
    if doc.get("paths_version") != 1:
        abort("paths_version is not 1")
    rows = doc["paths"]
    names = [r["_path"] for r in rows]
    if names != sorted(names):
        abort("paths.json is not sorted by path")
    actual = tree(root, ignore_info=True)
    if set(names) != set(actual):
        abort(f"paths.json lists {sorted(set(names) ^ set(actual))} differently")
    for r in rows:
        kind, _, value = actual[r["_path"]]
        full = os.path.join(root, r["_path"])
        want = {"hardlink": "file", "softlink": "symlink", "directory": "dir"}
        if want[r["path_type"]] != kind:
            abort(f"{r['_path']}: path_type {r['path_type']} but it is a {kind}")
        if kind == "file":
            if r["sha256"] != value or r["size_in_bytes"] != os.path.getsize(full):
                abort(f"{r['_path']}: sha256/size differ from the content")
        if kind == "symlink":
            # conda-build: the target file's hash when it is a file.
            target = os.path.join(os.path.dirname(full), value)
            if os.path.isfile(target):
                if r["sha256"] != sha256_file(target):
                    abort(f"{r['_path']}: softlink sha256 is not its target's")
    with open(os.path.join(root, "info/files")) as f:
        files = f.read().splitlines()
    if files != names:
        abort("info/files differs from paths.json")
    index = json.load(open(os.path.join(root, "info/index.json")))
    for key in ("name", "version", "build", "build_number", "subdir",
                "timestamp", "depends"):
        if key not in index:
            abort(f"index.json lacks {key}")
    print(f"paths.json matches {len(rows)} entries")


def has_prefix(root, prefix, expect):
    found = {}
    needle = prefix.encode()
    for rel, (kind, _, _) in tree(root, ignore_info=True).items():
        if kind != "file":
            continue
        data = open(os.path.join(root, rel), "rb").read()
        if needle in data:
            try:
                text = b"\0" not in data and data.decode("utf-8") is not None
            except UnicodeDecodeError:
                text = False
            found[rel] = "text" if text else "binary"
    listed = {}
    path = os.path.join(root, "info/has_prefix")
    if os.path.exists(path):
        for line in open(path).read().splitlines():
            pfx, mode, rel = line.split(" ", 2)
            if pfx != prefix:
                abort(f"has_prefix placeholder {pfx!r} != {prefix!r}")
            listed[rel] = mode
    want = dict(item.split(":", 1)[::-1] for item in expect)
    if not (found == listed == want):
        abort(f"has_prefix {listed} / scan {found} / expected {want}")
    rows = json.load(open(os.path.join(root, "info/paths.json")))["paths"]
    in_json = {r["_path"]: r["file_mode"] for r in rows
               if r.get("prefix_placeholder") == prefix}
    if in_json != want:
        abort(f"paths.json placeholders {in_json} != {want}")
    print(f"has_prefix: {sorted(want.items())}")


def zip_layout(pkg):
    stem = os.path.basename(pkg)[: -len(".conda")]
    with zipfile.ZipFile(pkg) as z:
        infos = z.infolist()
        names = [i.filename for i in infos]
        want = ["metadata.json", f"pkg-{stem}.tar.zst", f"info-{stem}.tar.zst"]
        if names != want:
            abort(f"members {names} != {want}")
        for i in infos:
            if i.compress_type != zipfile.ZIP_STORED:
                abort(f"{i.filename} is not STORED")
        if z.testzip() is not None:
            abort("zip CRC error")
        if json.loads(z.read("metadata.json")) != {"conda_pkg_format_version": 2}:
            abort("metadata.json content")
        import zstandard
        for name in want[1:]:
            data = z.read(name)
            params = zstandard.get_frame_parameters(data)
            plain = zstandard.ZstdDecompressor().decompress(data)
            if params.content_size != len(plain):
                abort(f"{name}: frame content size {params.content_size} "
                     f"!= {len(plain)}")
            with tarfile.open(fileobj=io.BytesIO(plain)) as t:
                for m in t.getmembers():
                    is_info = m.name == "info" or m.name.startswith("info/")
                    if is_info != name.startswith("info-"):
                        abort(f"{m.name} in the wrong component {name}")
                    if m.uid or m.gid or m.uname or m.gname:
                        abort(f"{m.name}: owner not anonymised")
    print(f"zip layout ok: {names}")


def retar(root, out):
    members = sorted(tree(root).keys())
    info = [m for m in members if m.startswith("info/")]
    rest = [m for m in members if not m.startswith("info/")]
    with tarfile.open(out, "w:bz2") as t:
        for m in info + rest:
            t.add(os.path.join(root, m), arcname=m, recursive=False)


def hostile(outdir, outside):
    """Each package is otherwise valid-looking; one member is hostile."""
    def tar_bytes(members, compression):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:" + compression) as t:
            for m, data in members:
                t.addfile(m, io.BytesIO(data) if data is not None else None)
        return buf.getvalue()

    def reg(name, data=b"x"):
        ti = tarfile.TarInfo(name)
        ti.size = len(data)
        return ti, data

    def link(name, target, kind=tarfile.SYMTYPE):
        ti = tarfile.TarInfo(name)
        ti.type = kind
        ti.linkname = target
        return ti, None

    def dev(name):
        ti = tarfile.TarInfo(name)
        ti.type = tarfile.CHRTYPE
        ti.devmajor, ti.devminor = 1, 3
        return ti, None

    index = reg("info/index.json", b'{"name":"evil","version":"1","build":"0"}')
    cases = {
        "dotdot": [index, reg("../escaped")],
        "dotdot-deep": [index, reg("lib/../../escaped")],
        "absolute": [index, reg(os.path.join(outside, "abs"))],
        "symlink-abs-then-file": [index, link("esc", outside),
                                  reg("esc/through")],
        "symlink-up-then-file": [index, link("up", ".."),
                                 reg("up/escaped")],
        "symlink-chain": [index, link("a/l1", ".."), link("l2", "a/l1/.."),
                          reg("l2/escaped")],
        "hardlink-outside": [index, link("h", os.path.join(outside, "victim"),
                                         tarfile.LNKTYPE)],
        "hardlink-dotdot": [index, link("h", "../victim", tarfile.LNKTYPE)],
        "device": [index, dev("dev/null")],
    }
    for name, members in cases.items():
        with open(os.path.join(outdir, f"evil-{name}-0.tar.bz2"), "wb") as f:
            f.write(tar_bytes(members, "bz2"))
    # The same attack inside a .conda's pkg component.
    import zstandard
    pkg = zstandard.ZstdCompressor().compress(tar_bytes([reg("../escaped")], ""))
    info = zstandard.ZstdCompressor().compress(tar_bytes([index], ""))
    with zipfile.ZipFile(os.path.join(outdir, "evil-conda-0.conda"), "w") as z:
        z.writestr("metadata.json", '{"conda_pkg_format_version": 2}')
        z.writestr("pkg-evil-conda-0.tar.zst", pkg)
        z.writestr("info-evil-conda-0.tar.zst", info)
    print(f"{len(cases) + 1} hostile packages")


def main(argv):
    cmd = argv[1]
    if cmd == "tree-equal":
        tree_equal(argv[2], argv[3], "--ignore-info" in argv[4:])
    elif cmd == "check-paths":
        check_paths(argv[2])
    elif cmd == "has-prefix":
        has_prefix(argv[2], argv[3], argv[4:])
    elif cmd == "zip-layout":
        zip_layout(argv[2])
    elif cmd == "retar":
        retar(argv[2], argv[3])
    elif cmd == "hostile":
        hostile(argv[2], argv[3])
    else:
        abort("unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
