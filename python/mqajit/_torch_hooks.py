"""What the fast call takes from torch, handed to the extension so that it neither links nor
imports torch: the dtype objects, torch.empty_strided, getters of the current device and of a
device's current stream, and, where mqajit._mqajit_torch was built for the torch imported, its
reader (tensors read and logits allocated through torch's C++ types). Tests install fakes with
install(). MQAJIT_TORCH_READER=0 keeps the reader out (the fast call then reads Python attributes)."""

import os
import sys
import types

from . import _mqajit

_hooks = None
_reader_status = "not loaded yet"


def _import_torch(function_name):
    torch = sys.modules.get("torch")
    if torch is not None:
        return torch
    try:
        import torch as torch_module
    except ImportError as error:
        raise RuntimeError(f"mqajit.{function_name} takes torch tensors, but PyTorch is not importable "
                           f"here ({error}); install torch, or call mqajit._mqajit.{function_name} "
                           "with (data_ptr, dtype, shape, strides) tuples") from None
    return torch_module


def _torch_reader(torch):
    """(capsule or None, what reads the tensors, in words)."""
    if os.environ.get("MQAJIT_TORCH_READER", "1") == "0":
        return None, "Python attributes (MQAJIT_TORCH_READER=0)"
    try:
        from . import _mqajit_torch
    except ImportError as error:
        return None, f"Python attributes (no torch reader: {error})"
    running = torch.__version__.split("+")[0]
    # NOTES: torch's own version.h may lag the package's patch number; a minor release changes the ABI.
    if _mqajit_torch.torch_version.split(".")[:2] != running.split(".")[:2]:
        return None, (f"Python attributes (the torch reader was built for torch {_mqajit_torch.torch_version}, "
                      f"this is {running}: rebuild mqajit to use it)")
    return _mqajit_torch.reader, f"torch's C++ types (mqajit._mqajit_torch, torch {running})"


def reader_status():
    """What the fast call reads tensors with, in words."""
    return _reader_status


def load(function_name="mqa_logits"):
    """The hooks from the real torch; RuntimeError when torch is not importable."""
    global _reader_status
    torch = _import_torch(function_name)
    reader, _reader_status = _torch_reader(torch)
    # NOTES: torch._C's getters skip torch.cuda's Python wrappers (a Stream object per call); where
    # a torch build lacks them, the public functions do the same, slower.
    current_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
    current_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if current_raw_stream is None:
        def current_raw_stream(index):
            return torch.cuda.current_stream(index).cuda_stream
    return types.SimpleNamespace(
        float8_e4m3fn=getattr(torch, "float8_e4m3fn", None),  # absent before torch 2.1
        float32=torch.float32, int32=torch.int32, bfloat16=torch.bfloat16, uint8=torch.uint8,
        empty_strided=torch.empty_strided, current_device=current_device, current_raw_stream=current_raw_stream,
        device=lambda index: torch.device("cuda", index), device_guard=torch.cuda.device, reader=reader)


def get(function_name):
    """The hooks in use, loaded on first use."""
    global _hooks
    if _hooks is None:
        _hooks = load(function_name)
    return _hooks


def install(hooks):
    """Uses `hooks` (attributes as load() makes them) from now on, in Python and in the extension;
    None goes back to loading the real torch's on the next call."""
    global _hooks, _reader_status
    _hooks = hooks
    _reader_status = "not loaded yet" if hooks is None else ("installed hooks' reader" if getattr(
        hooks, "reader", None) is not None else "Python attributes (installed hooks)")
    _mqajit._install_torch_hooks(hooks)


_mqajit._set_torch_hooks_loader(lambda: get("mqa_logits"))
