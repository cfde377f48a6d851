"""Programmatic dependent launch for every later call, as DeepGEMM's set_pdl()/get_pdl(): on sm_90
and later the kernels may start while the kernel before them on the stream finishes (they wait for
it before touching memory) and let the next kernel start early. It pays only beside kernels launched
the same way; other devices ignore it (docs/python.md)."""

from . import _mqajit


def set_pdl(enabled):
    """Turns programmatic dependent launch on or off for every later call (off at import)."""
    if not isinstance(enabled, bool):
        raise TypeError(f"set_pdl takes True or False, not {type(enabled).__name__}")
    _mqajit.set_pdl_setting(enabled)


def get_pdl():
    """Whether calls launch with programmatic dependent launch."""
    return _mqajit.pdl_setting()
