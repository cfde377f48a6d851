"""A stand-in for an old torch, as Debian 12's python3-torch (1.13) is: importable, with tensors
and torch.library, but without float8_e4m3fn (torch 2.1) or torch.library.custom_op (2.4).
check_old_torch_skips.py puts it first on the path to see that the tests needing a newer torch
report themselves skipped rather than failing."""

from . import library

__version__ = "1.13.1"


class Tensor:
    pass


class cuda:
    @staticmethod
    def is_available():
        return False

    @staticmethod
    def is_initialized():
        return False
