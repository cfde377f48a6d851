"""The tuning table's answer for a shape: lookup() and explain(), arch and cu_num defaulting to
the live device."""

import dataclasses
import operator
import sys

from . import _mqajit


@dataclasses.dataclass(frozen=True)
class RuntimeStatus:
    gpu_available: bool
    message: str

    def __str__(self):
        return self.message


def runtime_status():
    """Whether mqajit found a GPU driver here, with a one-line message. Never raises."""
    return RuntimeStatus(**_mqajit.runtime_status())


def _live_ordinal():
    # NOTES: a torch caller's current device is torch's; without torch (or before torch touched
    # CUDA), the library's own rule applies: the thread's current context, else device 0.
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return torch.cuda.current_device()
    return None


_OPS = ("mqa_logits", "paged_mqa_logits", "mqa_topk")
# Each operator's key columns besides arch, cu_num, heads, head_dim and clean_logits, and the
# clean_logits its call defaults to (mqa_logits(): True; paged_mqa_logits(): False, what engines
# pass; mqa_topk has no mode).
_LENGTHS = {"mqa_logits": ("seq_len", "seq_len_kv"), "paged_mqa_logits": ("next_n", "block_kv", "batch"),
            "mqa_topk": ("seq_len", "seq_len_kv")}
_DEFAULT_CLEAN_LOGITS = {"mqa_logits": True, "paged_mqa_logits": False}
# Keys a table has that a lookup may leave out (the logits dtype: float32 when not given; k: 2048).
_OPTIONAL_KEYS = {"mqa_logits": ("logits_dtype",), "paged_mqa_logits": (), "mqa_topk": ("k",)}
_BINDINGS = {"mqa_logits": ("lookup", "explain"), "paged_mqa_logits": ("paged_lookup", "paged_explain"),
             "mqa_topk": ("topk_lookup", "topk_table_explain")}


def _device(function_name, arch, cu_num):
    if arch is None or cu_num is None:
        status = _mqajit.runtime_status()
        if not status["gpu_available"]:
            raise RuntimeError(f"mqajit.{function_name}: no GPU here to take arch and cu_num from; pass both, "
                               f"e.g. arch='sm_90a', cu_num=132 (runtime: {status['message']})")
        device = _mqajit.device_info(_live_ordinal())
        if arch is not None and cu_num is None and _mqajit.canonical_arch(arch) != device["arch"]:
            raise ValueError(f"mqajit.{function_name}: arch {arch} is not the live device's ({device['arch']}), "
                             "so its cu_num cannot be taken from it; pass cu_num")
        arch = device["arch"] if arch is None else arch
        cu_num = device["cu_num"] if cu_num is None else cu_num
    return arch, cu_num


def _logits_dtype_name(function_name, logits_dtype):
    """"float32" or "bfloat16" from those names or a torch dtype (torch.float32, torch.bfloat16)."""
    name = str(logits_dtype).removeprefix("torch.")
    if name not in ("float32", "bfloat16"):
        raise ValueError(f"mqajit.{function_name}: logits_dtype must be float32 or bfloat16 (a name or a torch "
                         f"dtype); got {logits_dtype!r}")
    return name


def _query(function_name, op, arch, cu_num, heads, head_dim, clean_logits, keys):
    """The binding to call and its keyword arguments for `op`'s table."""
    if op not in _OPS:
        raise ValueError(f"mqajit.{function_name}: op must be one of {', '.join(_OPS)}; got {op!r}")
    wanted = _LENGTHS[op]
    optional = _OPTIONAL_KEYS[op]
    stray = [name for name, value in keys.items() if value is not None and name not in wanted + optional]
    if stray:
        raise TypeError(f"mqajit.{function_name}: {', '.join(stray)} is not a key of the {op} table "
                        f"(it takes {', '.join(wanted)})")
    missing = [name for name in wanted if keys[name] is None]
    if missing:
        raise TypeError(f"mqajit.{function_name}: op={op!r} needs {', '.join(missing)}")
    if op == "mqa_topk" and clean_logits is not None:
        raise TypeError(f"mqajit.{function_name}: the mqa_topk table has no clean_logits column (its logits are "
                        "never cleaned); leave it out")
    arch, cu_num = _device(function_name, arch, cu_num)
    arguments = dict(arch=arch, cu_num=cu_num, heads=heads, head_dim=head_dim, **{name: keys[name] for name in wanted})
    if op == "mqa_topk":
        arguments["k"] = 2048 if keys.get("k") is None else operator.index(keys["k"])
    else:
        arguments["clean_logits"] = bool(_DEFAULT_CLEAN_LOGITS[op] if clean_logits is None else clean_logits)
    if keys.get("logits_dtype") is not None:
        arguments["logits_dtype"] = _logits_dtype_name(function_name, keys["logits_dtype"])
    return _BINDINGS[op], arguments


def lookup(arch=None, cu_num=None, *, heads, head_dim, op="mqa_logits", seq_len=None, seq_len_kv=None,
           next_n=None, block_kv=None, batch=None, clean_logits=None, logits_dtype=None, k=None):
    """The tuned row that serves a shape, as a dict of the table's columns (plus 'origin'), or None
    when the baseline kernel serves it. op picks the table: "mqa_logits" (prefill; seq_len and
    seq_len_kv), "paged_mqa_logits" (decode; next_n, block_kv and batch) or "mqa_topk" (seq_len,
    seq_len_kv and k, 2048 when not given; no clean_logits; None: no row, see explain_topk()). arch ("sm_90a",
    "gfx950") and cu_num (SMs or CUs) default to the live device; with no GPU they must be given
    (else RuntimeError). clean_logits is the call's mode, defaulting like the op's call does
    (mqa_logits(): True, paged_mqa_logits(): False): the row that call runs. logits_dtype (mqa_logits
    only): the logits' element type, "float32" (default) or "bfloat16", or a torch dtype."""
    bindings, arguments = _query("lookup", op, arch, cu_num, heads, head_dim, clean_logits,
                                 dict(seq_len=seq_len, seq_len_kv=seq_len_kv, next_n=next_n, block_kv=block_kv,
                                      batch=batch, logits_dtype=logits_dtype, k=k))
    return getattr(_mqajit, bindings[0])(**arguments)


@dataclasses.dataclass(frozen=True)
class Explanation:
    op: str              # the table: "mqa_logits", "paged_mqa_logits" or "mqa_topk"
    shape: dict          # the key looked up, arch in canonical spelling
    kernel: str          # "baseline" or a variant name
    row: dict | None     # the row lookup() returns
    steps: list          # each step of the lookup rule, in words
    fallbacks: list      # how the answering rows' group differs from the call's (mode, SM count); [] if not
    system_db: str | None
    user_db: str

    def __str__(self):
        shape = " ".join(f"{column}={value}" for column, value in self.shape.items())
        lines = [f"{self.op}: {shape}", f"databases: system {self.system_db or '(none)'}, user {self.user_db}"]
        lines += [f"  {number}. {step}" for number, step in enumerate(self.steps, 1)]
        lines.append(self.kernel)
        return "\n".join(lines)


def explain(arch=None, cu_num=None, *, heads, head_dim, op="mqa_logits", seq_len=None, seq_len_kv=None,
            next_n=None, block_kv=None, batch=None, clean_logits=None, logits_dtype=None, k=None):
    """lookup() with its reasoning, as `mqajit db lookup` prints it (str() of the result)."""
    bindings, arguments = _query("explain", op, arch, cu_num, heads, head_dim, clean_logits,
                                 dict(seq_len=seq_len, seq_len_kv=seq_len_kv, next_n=next_n, block_kv=block_kv,
                                      batch=batch, logits_dtype=logits_dtype, k=k))
    return Explanation(**getattr(_mqajit, bindings[1])(**arguments))
