# SPDX-License-Identifier: BSD-3-Clause
"""torchlike: a torch-shaped package that libpkg's demo builds and packages.

The work happens in the extension ``torchlike._C``, which links libtorchlike
(found through its RUNPATH ``$ORIGIN/lib``) and libgomp.
"""

from . import _C
from .version import __version__

ops = _C.ops
call_op = _C.call_op
parallel_sum = _C.parallel_sum
describe = _C.describe


def compiled_with_cxx11_abi():
    """Whether the C++ code was built with _GLIBCXX_USE_CXX11_ABI=1 (as torch's)."""
    return bool(_C._GLIBCXX_USE_CXX11_ABI)


class cuda:
    """CUDA queries; kernels exist only when the build found nvcc."""

    @staticmethod
    def is_compiled():
        return _C._cuda_compiled

    @staticmethod
    def device_count():
        return _C._cuda_device_count() if _C._cuda_compiled else 0

    @staticmethod
    def arch_list():
        return _C._cuda_arch_list() if _C._cuda_compiled else []


__all__ = ["call_op", "compiled_with_cxx11_abi", "cuda", "describe", "ops", "parallel_sum"]
