# SPDX-License-Identifier: BSD-3-Clause
from os import PathLike
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .check import Report
from .config import BuildConfig, PythonVersion

_Path = str | PathLike[str]

class Artifact:
    @property
    def role(self) -> str: ...
    @property
    def path(self) -> Path: ...
    @property
    def size(self) -> int: ...
    @property
    def checked(self) -> bool: ...

class Summary:
    @property
    def driver(self) -> str: ...
    @property
    def config(self) -> BuildConfig: ...
    @property
    def dry_run(self) -> bool: ...
    @property
    def plan(self) -> list[str]: ...
    @property
    def artifacts(self) -> list[Artifact]: ...
    @property
    def checks(self) -> list[Report]: ...
    @property
    def notes(self) -> list[str]: ...
    @property
    def seconds(self) -> float: ...
    @property
    def passed(self) -> bool: ...
    def to_text(self, verbose: bool = False) -> str: ...
    def to_json(self, indent: int = 2) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __bool__(self) -> bool: ...

def wheel_python(wheel: _Path) -> PythonVersion | None: ...
def manywheel(
    wheel: _Path | None,
    config: BuildConfig,
    *,
    build_command: str | None = None,
    source_dir: _Path | None = None,
    dist_dir: _Path | None = None,
    build_timeout: int = 0,
    lib_dir: str | None = None,
    pypi_cuda: bool = False,
    force_rpath: bool = False,
    include: Sequence[str] = (),
    keep_names: Sequence[str] = (),
    exclude: Sequence[str] = (),
    enable: Sequence[str] = (),
    plat: str = "auto",
    ld_library_path: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    out_dir: _Path,
    dry_run: bool = False,
    threads: int = 0,
    zip_level: int = 6,
    timestamp: int | None = None,
    cuda_table: _Path | None = None,
    cuda_roots: Sequence[str] = (),
    run_checks: bool = True,
    allow_external: Sequence[str] = (),
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
    runtime: bool = True,
    python: str | None = None,
    import_modules: Sequence[str] = (),
    lib_paths: Sequence[str] = (),
    timeout: int = 600,
    abi_libraries: Sequence[str] | None = None,
    min_symbols: int | None = None,
    cxx: str | None = None,
    client: _Path | None = None,
    link_libraries: Sequence[str] = (),
    progress: Callable[[str], object] | None = None,
) -> Summary: ...
def wheel_macos(
    wheel: _Path | None,
    config: BuildConfig,
    *,
    build_command: str | None = None,
    source_dir: _Path | None = None,
    dist_dir: _Path | None = None,
    build_timeout: int = 0,
    deployment_target: str | None = None,
    dyld_library_path: Sequence[str] = (),
    exclude: Sequence[str] = (),
    out_dir: _Path,
    dry_run: bool = False,
    threads: int = 0,
    zip_level: int = 6,
    timestamp: int | None = None,
    cuda_table: _Path | None = None,
    cuda_roots: Sequence[str] = (),
    run_checks: bool = True,
    allow_external: Sequence[str] = (),
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
    runtime: bool = True,
    python: str | None = None,
    import_modules: Sequence[str] = (),
    lib_paths: Sequence[str] = (),
    timeout: int = 600,
    abi_libraries: Sequence[str] | None = None,
    min_symbols: int | None = None,
    cxx: str | None = None,
    client: _Path | None = None,
    link_libraries: Sequence[str] = (),
    progress: Callable[[str], object] | None = None,
) -> Summary: ...
def libtorch(
    tree: _Path | None = None,
    wheel: _Path | None = None,
    *,
    config: BuildConfig,
    build_hash: str | None = None,
    source: _Path | None = None,
    debug_split: bool = False,
    debug_libraries: Sequence[str] = ("libtorch_cpu.so",),
    include: Sequence[str] = (),
    skip_other_entries: bool = False,
    write_latest: bool = True,
    keep_names: bool = False,
    objcopy: str = "objcopy",
    git: str = "git",
    deployment_target: str | None = None,
    dyld_library_path: Sequence[str] = (),
    exclude: Sequence[str] = (),
    out_dir: _Path,
    dry_run: bool = False,
    threads: int = 0,
    zip_level: int = 6,
    timestamp: int | None = None,
    cuda_table: _Path | None = None,
    cuda_roots: Sequence[str] = (),
    run_checks: bool = True,
    allow_external: Sequence[str] = (),
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
    runtime: bool = True,
    python: str | None = None,
    import_modules: Sequence[str] = (),
    lib_paths: Sequence[str] = (),
    timeout: int = 600,
    abi_libraries: Sequence[str] | None = None,
    min_symbols: int | None = None,
    cxx: str | None = None,
    client: _Path | None = None,
    link_libraries: Sequence[str] = (),
    progress: Callable[[str], object] | None = None,
) -> Summary: ...
def conda(
    prefix: _Path,
    config: BuildConfig,
    *,
    metadata: Mapping[str, Any] | _Path | None = None,
    inject_depends: bool = True,
    formats: Sequence[str] = ("conda", "tar.bz2"),
    zstd_level: int = 19,
    placeholder: str | None = None,
    keep_outside_rpaths: bool = False,
    out_dir: _Path,
    dry_run: bool = False,
    threads: int = 0,
    zip_level: int = 6,
    timestamp: int | None = None,
    cuda_table: _Path | None = None,
    cuda_roots: Sequence[str] = (),
    run_checks: bool = True,
    allow_external: Sequence[str] = (),
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
    runtime: bool = True,
    python: str | None = None,
    import_modules: Sequence[str] = (),
    lib_paths: Sequence[str] = (),
    timeout: int = 600,
    abi_libraries: Sequence[str] | None = None,
    min_symbols: int | None = None,
    cxx: str | None = None,
    client: _Path | None = None,
    link_libraries: Sequence[str] = (),
    progress: Callable[[str], object] | None = None,
) -> Summary: ...
