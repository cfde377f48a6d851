"""Torch tensors as the (data_ptr, dtype, shape, strides) tuples mqajit._mqajit takes.

Duck-typed on purpose: nothing here imports torch, so ``import mqajit`` works without it.
"""

# What each argument must be, for the messages about missing ones; the library checks the rest.
EXPECTED = {
    "q": "a float8_e4m3fn CUDA tensor [S, H, D]",
    "kv": "a float8_e4m3fn CUDA tensor [N, D]",
    "kv_scales": "a float32 CUDA tensor [N]",
    "weights": "a float32 CUDA tensor [S, H]",
    "cu_starts": "an int32 CUDA tensor [S]",
    "cu_ends": "an int32 CUDA tensor [S]",
    "out": "a float32 CUDA tensor [S, N] (or None to allocate one)",
    "kv_cache": "a uint8 CUDA tensor [num_blocks, block_kv, 1, D + 4] (keys, then their fp32 scales, per block)",
    "context_lens": "an int32 CUDA tensor [B] or [B, next_n]",
    "block_table": "an int32 CUDA tensor [B, max_blocks]",
    "paged_out": "a float32 CUDA tensor [B * next_n, max_context_len] (or None to allocate one)",
    "indices": "an int32 CUDA tensor [S, k] (or None to allocate one)",
    "logits": "a float32 CUDA tensor [S, k] (or None to allocate one)",
    "workspace": "a uint8 CUDA tensor [bytes]",
}

# torch's dtype names -> the library's (mqajit::to_string(DType)); others pass through by name
# and the binding says which dtypes it takes.
_DTYPE_NAMES = {"torch.float8_e4m3fn": "float8_e4m3", "torch.float32": "float32", "torch.int32": "int32",
                "torch.bfloat16": "bfloat16"}
_dtype_name_cache = {}


def unsupported(message):
    """A ValueError of the library's kind 'unsupported', for refusals made in Python."""
    error = ValueError(message)
    error.kind = "unsupported"
    return error


def logits_dtype(hooks, dtype):
    """The dtype logits are allocated in: float32 (None) or bfloat16."""
    if dtype is None or dtype is hooks.float32:
        return hooks.float32
    if dtype is hooks.bfloat16:
        return dtype
    raise ValueError(f"logits_dtype is {dtype}; mqajit writes torch.float32 or torch.bfloat16 logits")


def require_present(name, tensor):
    if tensor is None:
        raise ValueError(f"{name} is None; pass {EXPECTED[name]}")


def _dtype_name(dtype):
    name = _dtype_name_cache.get(dtype)
    if name is None:
        text = str(dtype)
        name = _DTYPE_NAMES.get(text, text.removeprefix("torch."))
        _dtype_name_cache[dtype] = name
    return name


def device_of_q(q, expected=None):
    """The device a call runs on: q's. ValueError when q is not a torch tensor, saying what to pass
    (`expected`, or mqa_logits' q)."""
    try:
        return q.device
    except AttributeError:
        raise ValueError(f"q is not a torch tensor (got {type(q).__name__}); pass {expected or EXPECTED['q']}") from None


def view_of(name, tensor, device):
    """The tuple for `tensor`, after checking it is a CUDA tensor on `device`."""
    try:
        on_cuda = tensor.is_cuda
        tensor_device = tensor.device
    except AttributeError:
        raise ValueError(f"{name} is not a torch tensor (got {type(tensor).__name__}); pass {EXPECTED[name]}") from None
    if not on_cuda:
        raise ValueError(f"{name} is on {tensor_device}; mqajit runs on CUDA tensors (move it with .cuda())")
    if tensor_device != device:
        raise ValueError(f"{name} is on {tensor_device} but q is on {device}; put every tensor on one device")
    return (tensor.data_ptr(), _dtype_name(tensor.dtype), tuple(tensor.shape), tensor.stride())


def run_on(hooks, device, run, report):
    """Calls `run` with `device` current (the library runs in the calling thread's current CUDA
    context) and fills `report`, a dict or None, with what `run` says served the call."""
    if device.index is None or device.index == hooks.current_device():
        served = run()
    else:
        with hooks.device_guard(device):
            served = run()
    if report is not None:
        report.update(served)
