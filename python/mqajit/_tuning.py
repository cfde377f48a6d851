"""The tuning table's answer for a shape: lookup() and explain(), arch and cu_num defaulting to
the live device."""

import dataclasses
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


def _shape(function_name, arch, cu_num, heads, head_dim, seq_len, seq_len_kv, clean_logits):
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
    return dict(arch=arch, cu_num=cu_num, heads=heads, head_dim=head_dim, seq_len=seq_len, seq_len_kv=seq_len_kv,
                clean_logits=bool(clean_logits))


def lookup(arch=None, cu_num=None, *, heads, head_dim, seq_len, seq_len_kv, clean_logits=True):
    """The tuned row that serves a shape, as a dict of the table's columns (plus 'origin'), or None
    when the baseline kernel serves it. arch ("sm_90a", "gfx950") and cu_num (SMs or CUs) default
    to the live device; with no GPU they must be given (else RuntimeError). clean_logits is the
    call's mode, defaulting like mqa_logits()'s: the row that mqa_logits(..., clean_logits=X) runs."""
    return _mqajit.lookup(**_shape("lookup", arch, cu_num, heads, head_dim, seq_len, seq_len_kv, clean_logits))


@dataclasses.dataclass(frozen=True)
class Explanation:
    shape: dict          # the key looked up, arch in canonical spelling
    kernel: str          # "baseline" or a variant name
    row: dict | None     # the row lookup() returns
    steps: list          # each step of the lookup rule, in words
    fallbacks: list      # how the answering rows' group differs from the call's (mode, SM count); [] if not
    system_db: str | None
    user_db: str

    def __str__(self):
        shape = " ".join(f"{column}={value}" for column, value in self.shape.items())
        lines = [f"shape: {shape}", f"databases: system {self.system_db or '(none)'}, user {self.user_db}"]
        lines += [f"  {number}. {step}" for number, step in enumerate(self.steps, 1)]
        lines.append(self.kernel)
        return "\n".join(lines)


def explain(arch=None, cu_num=None, *, heads, head_dim, seq_len, seq_len_kv, clean_logits=True):
    """lookup() with its reasoning, as `mqajit db lookup` prints it (str() of the result)."""
    return Explanation(**_mqajit.explain(**_shape("explain", arch, cu_num, heads, head_dim, seq_len, seq_len_kv,
                                                  clean_logits)))
