# SPDX-License-Identifier: BSD-3-Clause
"""libpkg from Python: ELF editing, wheels, conda packages, wheel repair,
check_binary, build configurations and the manywheel / libtorch / conda
drivers, over the same library the command line tools use.

    import libpkg
    whl = libpkg.wheel.open("dist/torch-2.5.0+cu124-cp311-cp311-linux_x86_64.whl")
    whl.retag(platform="manylinux_2_28_x86_64", strip_local_version=True)

Every library error is a `libpkg.Error` (with .code, .file, .offset,
.message), raised as the subclass for its code, which also derives from the
matching built-in (`IoError` is an `OSError`, `MissingFileError` a
`FileNotFoundError`, `AccessError` a `PermissionError`, `FormatError`,
`UnsupportedError` and `UsageError` are `ValueError`s, `NotFoundError` a
`LookupError`); long calls release the GIL. See docs/python.md.
"""

import sys as _sys

from . import _libpkg
from ._libpkg import (AccessError, Error, FormatError, IoError, MissingFileError, NotFoundError,
                      UnsupportedError, UsageError, __version__, check, conda, config, cuda, deps,
                      driver, elf, inspect, macho, repair, wheel)
from ._libpkg.repair import show

# The areas are submodules of the extension; registering them makes
# `import libpkg.elf` and `from libpkg.wheel import open` work too.
for _name in ("elf", "wheel", "conda", "repair", "check", "config", "cuda", "driver", "deps", "macho"):
    _module = getattr(_libpkg, _name)
    _sys.modules[f"{__name__}.{_name}"] = _module
    _module.__name__ = f"{__name__}.{_name}"
    for _attr in vars(_module).values():
        # Public names in reprs and help(): libpkg.elf.ElfFile, not
        # libpkg._libpkg.elf.ElfFile.
        if isinstance(_attr, type):
            try:
                _attr.__module__ = f"{__name__}.{_name}"
            except (AttributeError, TypeError):
                pass
Error.__module__ = __name__
del _name, _module, _attr

__all__ = ["AccessError", "Error", "FormatError", "IoError", "MissingFileError", "NotFoundError",
           "UnsupportedError", "UsageError", "__version__", "check", "conda", "config", "cuda", "driver", "elf", "inspect", "macho", "repair", "show",
           "wheel"]
