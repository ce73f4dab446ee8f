# SPDX-License-Identifier: BSD-3-Clause
from os import PathLike
from pathlib import Path
from typing import Any, Callable, Sequence

_Path = str | PathLike[str]

class Problem:
    @property
    def file(self) -> str: ...
    @property
    def message(self) -> str: ...

class CheckResult:
    @property
    def id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def summary(self) -> str: ...
    @property
    def problems(self) -> list[Problem]: ...
    @property
    def notes(self) -> list[str]: ...

class Report:
    @property
    def artifact(self) -> Path: ...
    @property
    def kind(self) -> str: ...
    @property
    def checks(self) -> list[CheckResult]: ...
    @property
    def passed(self) -> bool: ...
    def count(self, status: str) -> int: ...
    def find(self, id: str) -> CheckResult | None: ...
    def to_text(self, verbose: bool = False) -> str: ...
    def to_json(self, indent: int = 2) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __bool__(self) -> bool: ...

def ids() -> list[str]: ...
def run(
    artifact: _Path,
    *,
    package_type: str | None = None,
    accelerator: str | None = None,
    cxx_abi: str | None = None,
    platform: str | None = None,
    libraries: Sequence[str] = (),
    table_libraries: bool = False,
    allow_external: Sequence[str] = (),
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
    runtime: bool = True,
    python: str | None = None,
    import_modules: Sequence[str] = (),
    lib_paths: Sequence[str] = (),
    timeout: int = 600,
    threads: int = 0,
    abi_libraries: Sequence[str] | None = None,
    min_symbols: int | None = None,
    cxx: str | None = None,
    client: _Path | None = None,
    link_libraries: Sequence[str] = (),
    progress: Callable[[str], object] | None = None,
) -> Report: ...
