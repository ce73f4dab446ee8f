
from . import check as check
from . import conda as conda
from . import config as config
from . import cuda as cuda
from . import driver as driver
from . import elf as elf
from . import repair as repair
from . import wheel as wheel
from .repair import show as show

__version__: str

class Error(Exception):
    """A libpkg error; `code` is 'io', 'format', 'unsupported', 'usage' or 'not_found'."""

    code: str
    file: str
    offset: int | None
    message: str

__all__: list[str]
