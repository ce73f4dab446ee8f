# SPDX-License-Identifier: BSD-3-Clause
from os import PathLike
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

_Path = str | PathLike[str]

class Finding:
    @property
    def where(self) -> str: ...
    @property
    def message(self) -> str: ...

def pack(
    prefix: _Path,
    metadata: Mapping[str, Any] | _Path,
    out_dir: _Path = ".",
    *,
    formats: Sequence[str] = ["conda"],
    zstd_level: int = 19,
    bzip2_level: int = 9,
    threads: int = 0,
    timestamp_ms: int = 0,
    placeholder: str = "",
    progress: Callable[[int, int], object] | None = None,
) -> list[Path]: ...
def extract(package: _Path, dest: _Path) -> Path: ...
def verify(package: _Path) -> list[Finding]: ...
def transmute(package: _Path, out_dir: _Path, to: str, *, threads: int = 0) -> Path: ...
def stem(package: _Path) -> str: ...
