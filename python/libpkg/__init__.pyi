# SPDX-License-Identifier: BSD-3-Clause

from . import check as check
from . import conda as conda
from . import config as config
from . import cuda as cuda
from . import deps as deps
from . import driver as driver
from . import elf as elf
from . import macho as macho
from . import repair as repair
from . import wheel as wheel
from os import PathLike
from typing import Any

from .repair import show as show

__version__: str

def inspect(path: str | PathLike[str]) -> dict[str, Any]:
    """The dict `pkgtool inspect --json` prints for one ELF or Mach-O file."""

class Error(Exception):
    """A libpkg error; `code` is 'io', 'format', 'unsupported', 'usage' or 'not_found'."""

    code: str
    file: str
    offset: int | None
    message: str

class IoError(Error, OSError):
    """Reading or writing a file failed (code 'io'); errno/strerror/filename set when known."""

class MissingFileError(IoError, FileNotFoundError):
    """A file or directory does not exist (code 'io', errno ENOENT)."""

class AccessError(IoError, PermissionError):
    """The operating system refused access (code 'io', errno EACCES, EPERM or EROFS)."""

class FormatError(Error, ValueError):
    """Truncated or corrupt input (code 'format')."""

class UnsupportedError(Error, ValueError):
    """Well-formed input outside what libpkg handles (code 'unsupported')."""

class UsageError(Error, ValueError):
    """An impossible or inconsistent request (code 'usage')."""

class NotFoundError(Error, LookupError):
    """A requested thing does not exist (code 'not_found')."""

__all__: list[str]
