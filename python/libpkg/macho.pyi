# SPDX-License-Identifier: BSD-3-Clause
from collections.abc import Iterable
from os import PathLike
from typing import Any

_Path = str | PathLike[str]

def inspect(path: _Path) -> dict[str, Any]: ...
def edit(
    path: _Path,
    *,
    id: str | None = None,
    change: Iterable[tuple[str, str]] | None = None,
    rpath: Iterable[tuple[str, str]] | None = None,
    add_rpath: Iterable[str] | None = None,
    prepend_rpath: Iterable[str] | None = None,
    delete_rpath: Iterable[str] | None = None,
    delete_all_rpaths: bool = False,
    arch: Iterable[str] | None = None,
    sign: bool = True,
    output: _Path | None = None,
) -> dict[str, Any]: ...
def verify(path: _Path) -> list[dict[str, Any]]: ...
def sign(path: _Path) -> dict[str, Any]: ...
def lipo_create(inputs: Iterable[_Path], output: _Path) -> None: ...
def lipo_thin(path: _Path, arch: str, output: _Path) -> None: ...
def symbols(
    path: _Path,
    arch: str | None = None,
    *,
    defined_only: bool = False,
    undefined_only: bool = False,
) -> list[dict[str, Any]]: ...
