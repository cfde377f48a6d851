"""Stand-ins for the few parts of torch the binding touches, so that the fast call, the checked
path and their messages are tested with no torch and no GPU. FakeTorch.install() hands them to
mqajit the way mqajit._torch_hooks.load() hands over the real ones."""

import contextlib
import types

from mqajit import _torch_hooks


class FakeDtype:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


FLOAT8 = FakeDtype("float8_e4m3fn")
FLOAT32 = FakeDtype("float32")
INT32 = FakeDtype("int32")
BFLOAT16 = FakeDtype("bfloat16")
FLOAT16 = FakeDtype("float16")
INT8 = FakeDtype("int8")
UINT8 = FakeDtype("uint8")


class FakeDevice:
    def __init__(self, kind, index=None):
        self.type, self.index = kind, index

    def __eq__(self, other):
        return isinstance(other, FakeDevice) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __repr__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


CUDA0, CUDA1, CPU = FakeDevice("cuda", 0), FakeDevice("cuda", 1), FakeDevice("cpu")

_next_address = [0x10000000]


def _fresh_address():
    _next_address[0] += 0x100000  # 1 MiB apart: aligned for everything the library checks
    return _next_address[0]


class FakeTensor:
    """What mqajit reads of a torch tensor: is_cuda, get_device(), dtype, shape, stride(), data_ptr(), device."""

    def __init__(self, dtype, shape, strides=None, device=CUDA0, address=None):
        self.dtype, self.shape, self.device = dtype, tuple(shape), device
        if strides is None:
            strides, step = [], 1
            for size in reversed(self.shape):
                strides.insert(0, step)
                step *= size
        self._strides = tuple(strides)
        self._address = _fresh_address() if address is None else address

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def get_device(self):
        return self.device.index if self.is_cuda else -1

    def stride(self):
        return self._strides

    def data_ptr(self):
        return self._address

    def __repr__(self):
        return f"FakeTensor({self.dtype}, {self.shape}, {self._strides}, {self.device})"


class FakeTorch:
    """The hooks, with a record of what the binding asked of them."""

    def __init__(self, current_device=0, have_float8=True):
        self.current = current_device
        self.allocations = []  # (sizes, strides, dtype, device) of each empty_strided call
        self.guards = []       # devices the checked path switched to
        self.streams = []      # ordinals whose current stream was asked for
        self.hooks = types.SimpleNamespace(
            float8_e4m3fn=FLOAT8 if have_float8 else None, float32=FLOAT32, int32=INT32, bfloat16=BFLOAT16, uint8=UINT8,
            empty_strided=self._empty_strided, current_device=lambda: self.current,
            current_raw_stream=self._current_raw_stream, device=lambda index: FakeDevice("cuda", index),
            device_guard=self._device_guard, reader=None)

    def _empty_strided(self, sizes, strides, *, dtype, device):
        self.allocations.append((tuple(sizes), tuple(strides), dtype, device))
        return FakeTensor(dtype, sizes, strides, device)

    def _current_raw_stream(self, index):
        self.streams.append(index)
        return 0

    @contextlib.contextmanager
    def _device_guard(self, device):
        self.guards.append(device)
        yield

    def install(self):
        _torch_hooks.install(self.hooks)
        return self


S, H, D, N = 4, 32, 128, 100


def problem(**changes):
    """Valid fake arguments of a GLM-5-like call, in mqa_logits' separate form; `changes` replace some."""
    tensors = dict(q=FakeTensor(FLOAT8, (S, H, D)), kv=FakeTensor(FLOAT8, (N, D)), kv_scales=FakeTensor(FLOAT32, (N,)),
                   weights=FakeTensor(FLOAT32, (S, H)), cu_starts=FakeTensor(INT32, (S,)),
                   cu_ends=FakeTensor(INT32, (S,)))
    tensors.update(changes)
    return tensors
