"""The two call forms of mqa_logits, bound to one set of names.

    mqa_logits(q, kv, kv_scales, weights, cu_starts, cu_ends, clean_logits=True, out=None)
    mqa_logits(q, (kv, kv_scales), weights, cu_starts, cu_ends, clean_logits=True, out=None)

NOTES: a plain signature with defaults cannot serve both: in the paired form every positional
argument after kv moves one slot left, and shifting them would break keyword calls. So the names
are bound here, positionally first, as Python would.
"""

_SEPARATE = ("kv_scales", "weights", "cu_starts", "cu_ends", "clean_logits", "out")
_PAIRED = ("weights", "cu_starts", "cu_ends", "clean_logits", "out")
_DEFAULTS = {"clean_logits": True, "out": None}


def bind(function_name, kv, args, kwargs):
    """(kv, kv_scales, weights, cu_starts, cu_ends, clean_logits, out) from either call form."""
    paired = isinstance(kv, tuple)
    names = _PAIRED if paired else _SEPARATE
    if len(args) > len(names):
        raise TypeError(f"{function_name}() takes at most {len(names) + 2} positional arguments "
                        f"({len(args) + 2} given)")
    bound = dict(zip(names, args))
    for name, value in kwargs.items():
        if name not in names:
            hint = " (kv_scales is inside the (kv, kv_scales) tuple)" if paired and name == "kv_scales" else ""
            raise TypeError(f"{function_name}() got an unexpected keyword argument '{name}'{hint}")
        if name in bound:
            raise TypeError(f"{function_name}() got multiple values for argument '{name}'")
        bound[name] = value
    if paired:
        if len(kv) != 2:
            raise ValueError(f"kv is a tuple of {len(kv)} items; the paired form is (kv, kv_scales)")
        kv, bound["kv_scales"] = kv
    for name, default in _DEFAULTS.items():
        bound.setdefault(name, default)
    return (kv, bound.get("kv_scales"), bound.get("weights"), bound.get("cu_starts"), bound.get("cu_ends"),
            bound["clean_logits"], bound["out"])
