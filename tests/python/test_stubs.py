# SPDX-License-Identifier: BSD-3-Clause
"""The .pyi stubs describe the real module: every public name, every
class member and every parameter name."""

import ast
import inspect
import re
from pathlib import Path

import pytest

import libpkg

AREAS = ["elf", "wheel", "conda", "repair", "check", "config", "cuda", "driver", "deps", "macho"]
PKG = Path(libpkg.__file__).parent


def stub(name: str) -> ast.Module:
    path = PKG / f"{name}.pyi"
    assert path.exists(), f"{path} missing"
    return ast.parse(path.read_text())


def stub_defs(tree: ast.Module) -> dict:
    """Top-level name → node (classes, functions, annotated variables)."""
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            out[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
        elif isinstance(node, ast.ImportFrom) and node.module in AREAS + ["repair"] and node.level == 1:
            for a in node.names:
                out[a.asname or a.name] = node
        elif isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is None:
            for a in node.names:
                out[a.asname or a.name] = node
    return out


def public(names):
    return {n for n in names if not n.startswith("_")}


def is_private_alias(name):
    return name.startswith("_")


def runtime_params(fn) -> list[list[str]]:
    """Parameter names of each overload, from pybind11's signature line(s)."""
    doc = fn.__doc__ or ""
    sigs = []
    for line in doc.splitlines():
        m = re.match(rf"^(?:\d+\. )?{re.escape(fn.__name__)}\((.*)\) -> ", line)
        if m:
            params = []
            depth = 0
            cur = ""
            for ch in m.group(1):
                if ch in "[(":
                    depth += 1
                elif ch in "])":
                    depth -= 1
                if ch == "," and depth == 0:
                    params.append(cur)
                    cur = ""
                else:
                    cur += ch
            if cur.strip():
                params.append(cur)
            names = []
            for p in params:
                p = p.strip()
                if p == "*":
                    names.append("*")
                    continue
                names.append(p.split(":")[0].strip())
            sigs.append(names)
    return sigs


def stub_params(node: ast.FunctionDef) -> list[str]:
    a = node.args
    names = [x.arg for x in a.posonlyargs + a.args]
    if a.kwonlyargs:
        names.append("*")
        names += [x.arg for x in a.kwonlyargs]
    return names


def check_function(fn, node, where):
    sigs = runtime_params(fn)
    assert sigs, f"{where}: no signature in docstring"
    want = stub_params(node)
    assert want in sigs, f"{where}: stub params {want} != runtime {sigs}"


def test_top_level_stub_lists_every_export():
    defs = stub_defs(stub("__init__"))
    assert public(dir(libpkg)) - {"annotations"} <= public(defs) | {"_libpkg"}
    assert public(defs) <= set(dir(libpkg))
    assert set(libpkg.__all__) <= set(defs)
    assert set(public(libpkg.__all__)) == public(set(libpkg.__all__))


@pytest.mark.parametrize("area", AREAS)
def test_area_stub_matches_module(area):
    module = getattr(libpkg, area)
    defs = stub_defs(stub(area))
    runtime = public(vars(module))
    stubbed = {n for n in public(defs) if isinstance(defs[n], (ast.ClassDef, ast.FunctionDef))}
    assert runtime == stubbed, f"only at runtime: {runtime - stubbed}; only in stub: {stubbed - runtime}"
    for name in sorted(runtime):
        obj = getattr(module, name)
        node = defs[name]
        if isinstance(obj, type):
            assert isinstance(node, ast.ClassDef), name
            members = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}
            rt_members = {n for n in vars(obj) if not n.startswith("_")}
            dunders = {n for n in vars(obj) if n in ("__enter__", "__exit__", "__iter__", "__next__", "__bool__")}
            assert rt_members | dunders == set(members) - {"__init__"}, (
                f"{area}.{name}: runtime {sorted(rt_members | dunders)} vs stub {sorted(members)}")
            for m in rt_members:
                attr = inspect.getattr_static(obj, m)
                is_prop = isinstance(attr, property)
                decorated = any(isinstance(d, ast.Name) and d.id == "property"
                                for d in members[m].decorator_list)
                assert is_prop == decorated, f"{area}.{name}.{m}: property mismatch"
                if not is_prop:
                    check_function(getattr(obj, m), members[m], f"{area}.{name}.{m}")
        else:
            assert isinstance(node, ast.FunctionDef), name
            check_function(obj, node, f"{area}.{name}")


def test_py_typed_marker():
    assert (PKG / "py.typed").exists()
