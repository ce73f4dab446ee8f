# SPDX-License-Identifier: BSD-3-Clause
"""docs/python.md names only what the module has.

Checked against the imported module: every dotted `libpkg.x.y` in the page
resolves; in the "Areas" table each area is a module (or, when the row says
"a function", a callable that is not a module), each entry point listed in
a row is an attribute of its area, each class named after `→` is one of the
area's classes, and the attributes listed after a class (`Class: a, b` or
`Class (a, b)`) are attributes of that class.
"""

import inspect
import os
import re
import types
from pathlib import Path

import libpkg

SOURCE = Path(os.environ.get("LIBPKG_SOURCE_DIR", Path(__file__).resolve().parents[2]))
DOC = (SOURCE / "docs/python.md").read_text()
IDENT = re.compile(r"^[A-Za-z_][\w.]*")


def resolve(dotted: str):
    obj = libpkg
    for part in dotted.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def area_rows():
    section = DOC.split("## Areas", 1)[1].split("\n\n", 2)[1]
    for line in section.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        yield cells[0], cells[1]


def names_in_cell(area, cell):
    """(owner, name) pairs the cell promises: owner is a module or class."""
    out = []
    owner = area  # entry points before `→` belong to the area
    depth_owner = []  # owners to restore at each `)`
    after_arrow = False
    expect_list = None  # a class just named: its list follows ( or :
    for m in re.finditer(r"`([^`]*)`|→|;|\(|\)|:", cell):
        tok = m.group(0)
        if tok == ";":
            owner, after_arrow, expect_list, depth_owner = area, False, None, []
        elif tok == "→":
            after_arrow, owner, expect_list = True, None, None
        elif tok == "(":
            depth_owner.append((owner, expect_list is not None))
            if expect_list is not None:
                owner = expect_list
            expect_list = None
        elif tok == ")":
            owner, class_list = depth_owner.pop() if depth_owner else (area, False)
            if class_list and not depth_owner:
                owner = area  # after `Class (a, b)`, the area's functions again
        elif tok == ":":
            if expect_list is not None:
                owner = expect_list
            elif after_arrow:
                owner = None  # a dict's keys, not attributes
            expect_list = None
        else:
            text = m.group(1)
            name = IDENT.match(text)
            if not name or " " in text.split("(")[0]:
                continue
            name = name.group(0)
            if name.startswith("libpkg."):
                out.append((None, name))
                continue
            if name[0].isupper() and after_arrow:
                out.append((area, name))
                expect_list = getattr(area, name, None)
                continue
            if owner is not None and "/" not in text and "=" not in text.split("(")[0]:
                out.append((owner, name))
    return out


def test_every_dotted_name_resolves():
    for dotted in sorted(set(re.findall(r"`(libpkg\.[A-Za-z_][\w.]*)", DOC))):
        resolve(dotted.rstrip("."))


def test_area_table_matches_the_module():
    rows = list(area_rows())
    assert len(rows) >= 10
    missing = []
    for first, cell in rows:
        area_name = re.match(r"`(libpkg\.\w+)`", first).group(1)
        area = resolve(area_name)
        if "a function" in first:
            assert callable(area) and not isinstance(area, types.ModuleType), area_name
            continue
        assert isinstance(area, types.ModuleType), f"{area_name} is documented as a module"
        for owner, name in names_in_cell(area, cell):
            if owner is None:
                try:
                    resolve(name)
                except AttributeError:
                    missing.append(f"{area_name}: {name}")
                continue
            obj = owner
            for part in name.split("."):
                if part == owner.__name__.rsplit(".", 1)[-1] and isinstance(obj, types.ModuleType):
                    continue  # `elf.edit` in the elf row
                if not hasattr(obj, part):
                    where = owner.__name__ if inspect.ismodule(owner) else owner.__qualname__
                    missing.append(f"{area_name}: {name} (not in {where})")
                    break
                obj = getattr(obj, part)
    assert not missing, "docs/python.md names what the module lacks:\n" + "\n".join(missing)


def test_show_is_a_function_not_a_module():
    assert callable(libpkg.show) and not isinstance(libpkg.show, types.ModuleType)
    assert libpkg.show is libpkg.repair.show
