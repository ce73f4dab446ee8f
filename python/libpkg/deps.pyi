# SPDX-License-Identifier: BSD-3-Clause
from collections.abc import Iterable
from os import PathLike
from typing import Any

_Path = str | PathLike[str]

def ldd(
    path: _Path,
    *,
    lib_paths: Iterable[str] = (),
    ldpaths: str | None = None,
    ld_library_path: Iterable[str] | None = None,
    root: _Path | None = None,
    libc: str | None = None,
) -> dict[str, Any]: ...
