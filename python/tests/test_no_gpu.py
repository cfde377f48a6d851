"""Tests of the Python binding that need no GPU and no torch (CI runs them everywhere).

Run with pytest, or as a plain script (python3 test_no_gpu.py) where pytest is missing. The
built package must be importable: ctest sets PYTHONPATH=<build>/python.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import mqajit
from mqajit import _arguments, _mqajit

from helpers import expect_error, main, skip

SOURCE_DIR = Path(__file__).resolve().parents[2]


# Views of a GLM-5-like problem at made-up (but aligned) addresses: the library checks every
# argument before it touches the device, so bad ones fail here without a GPU.
S, H, D, N = 4, 32, 128, 96


def good_views():
    return {
        "q": (0x100000, "float8_e4m3", (S, H, D), (H * D, D, 1)),
        "kv": (0x200000, "float8_e4m3", (N, D), (D, 1)),
        "kv_scales": (0x300000, "float32", (N,), (1,)),
        "weights": (0x400000, "float32", (S, H), (H, 1)),
        "cu_starts": (0x500000, "int32", (S,), (1,)),
        "cu_ends": (0x600000, "int32", (S,), (1,)),
        "logits": (0x700000, "float32", (S, N), (128, 1)),
    }


def call_with(**changes):
    views = good_views()
    views.update(changes)
    return lambda: _mqajit.mqa_logits(**views)


def test_version_is_the_cmake_projects():
    cmake = (SOURCE_DIR / "CMakeLists.txt").read_text()
    assert mqajit.__version__ == re.search(r"project\(mqajit\s+VERSION\s+([0-9.]+)", cmake).group(1)


def test_wrong_dtype_is_a_value_error_that_names_the_tensor():
    error = expect_error(ValueError, call_with(q=(0x100000, "float32", (S, H, D), (H * D, D, 1))),
                         "q has dtype float32", "float8_e4m3")
    assert error.kind == "invalid argument"
    expect_error(ValueError, call_with(cu_ends=(0x600000, "float32", (S,), (1,))), "cu_ends", "int32")


def test_dtype_mqajit_lacks_is_a_value_error_saying_what_it_takes():
    expect_error(ValueError, call_with(kv=(0x200000, "float16", (N, D), (D, 1))),
                 "kv has dtype float16", "torch.float8_e4m3fn")
    expect_error(ValueError, call_with(kv=(0x200000, "bfloat16", (N, D), (D, 1))),
                 "kv has dtype bfloat16; it must be float8_e4m3")


def test_a_dtype_mqajit_lacks_gets_what_that_tensor_must_be():
    expect_error(ValueError, call_with(cu_starts=(0x500000, "int64", (S,), (1,))), "cu_starts has dtype int64; it must be int32")
    expect_error(ValueError, lambda: _mqajit.paged_mqa_logits(
        q=(0x100000, "float8_e4m3", (1, 1, H, D), (H * D, H * D, D, 1)),
        kv_cache=(0x200000, "int8", (1, 64, 1, D + 4), (64 * (D + 4), D + 4, D + 4, 1)),
        weights=(0x300000, "float32", (1, H), (H, 1)), context_lens=(0x400000, "int64", (1,), (1,)),
        block_table=(0x500000, "int32", (1, 1), (1, 1)), logits=(0x600000, "float32", (1, 64), (64, 1))),
        "kv_cache has dtype int8; it must be uint8")


def test_bf16_logits_and_compressed_rows_pass_the_checks_and_bad_ones_do_not():
    if mqajit.runtime_status().gpu_available:
        skip("a GPU is present: made-up addresses must not reach a kernel")
    # Accepted: each call gets past every argument check and stops only at the missing driver.
    expect_error(RuntimeError, call_with(logits=(0x700000, "bfloat16", (S, N), (128, 1))), "no CUDA device")
    compressed = (0x700000, "float32", (S, 16), (128, 1))
    views = {**good_views(), "logits": compressed}
    expect_error(RuntimeError, lambda: _mqajit.mqa_logits(**views, clean_logits=False, max_seqlen_k=16),
                 "no CUDA device")
    expect_error(RuntimeError, lambda: _mqajit.mqa_logits_reference(**views, clean_logits=False, max_seqlen_k=16),
                 "no CUDA device")
    # Refused: a compressed view without max_seqlen_k, or with clean_logits, or of the wrong width.
    expect_error(ValueError, call_with(logits=compressed), "N from kv")
    expect_error(ValueError, lambda: _mqajit.mqa_logits(**views, max_seqlen_k=16), "need clean_logits=False")
    expect_error(ValueError, lambda: _mqajit.mqa_logits(**views, clean_logits=False, max_seqlen_k=17),
                 "max_seqlen_k (compressed rows) = 17")


def test_num_sms_reaches_the_library_and_the_setting_is_checked():
    expect_error(ValueError, lambda: _mqajit.mqa_logits(**good_views(), num_sms=-1), "options.num_sms", "-1")
    expect_error(ValueError, lambda: mqajit.set_num_sms(-2), "num_sms is -2")
    expect_error(TypeError, lambda: mqajit.set_num_sms(1.5))
    try:
        if mqajit.runtime_status().gpu_available:
            cu_num = mqajit.device_info()["cu_num"]
            expect_error(ValueError, lambda: mqajit.set_num_sms(cu_num + 1), f"has {cu_num} SMs")
            mqajit.set_num_sms(0)
            assert mqajit.get_num_sms() == cu_num
        else:
            mqajit.set_num_sms(0)
            expect_error(RuntimeError, mqajit.get_num_sms, "no GPU here to count SMs on")
        mqajit.set_num_sms(7)
        assert mqajit.get_num_sms() == 7 and _mqajit.num_sms_setting() == 7
    finally:
        mqajit.set_num_sms(0)
    assert _mqajit.num_sms_setting() == 0


def test_pdl_is_a_switch_that_reaches_the_library():
    assert mqajit.get_pdl() is False and _mqajit.pdl_setting() is False
    expect_error(TypeError, lambda: mqajit.set_pdl(1), "True or False")
    try:
        mqajit.set_pdl(True)
        assert mqajit.get_pdl() is True and _mqajit.pdl_setting() is True
    finally:
        mqajit.set_pdl(False)
    assert mqajit.get_pdl() is False
    # The keyword reaches the bindings: the call gets as far as the device it lacks here.
    if not mqajit.runtime_status().gpu_available:
        expect_error(RuntimeError, lambda: _mqajit.mqa_logits(**good_views(), pdl=True), "no CUDA device")


def test_the_torch_op_is_registered_where_torch_has_custom_op_and_says_why_not_elsewhere():
    registered, reason = mqajit.torch_op_available()
    try:
        import torch
    except ImportError:
        assert not registered and "torch is not installed" in reason
        return
    if hasattr(torch.library, "custom_op"):
        assert registered and hasattr(torch.ops.mqajit, "mqa_logits"), reason
    else:
        assert not registered and "custom_op" in reason, reason


def test_mismatched_shapes_are_value_errors_that_name_both_sides():
    expect_error(ValueError, call_with(kv=(0x200000, "float8_e4m3", (N, 64), (64, 1))), "kv", "head_dim", "128")
    expect_error(ValueError, call_with(weights=(0x400000, "float32", (S, H + 1), (H + 1, 1))), "weights", "H from q")
    expect_error(ValueError, call_with(logits=(0x700000, "float32", (S, N - 1), (128, 1))), "logits", "N from kv")
    expect_error(ValueError, call_with(logits=(0x700000, "float32", (S, N), (N - 1, 1))), "row stride")
    expect_error(ValueError, call_with(q=(0x100000, "float8_e4m3", (S, H, D, 1), (H * D, D, 1, 1))),
                 "q has 4 dimensions")


def test_unsupported_heads_are_a_value_error_of_kind_unsupported():
    error = expect_error(ValueError, call_with(q=(0x100000, "float8_e4m3", (S, 48, D), (48 * D, D, 1)),
                                               weights=(0x400000, "float32", (S, 48), (48, 1))), "48 heads")
    assert error.kind == "unsupported"


def test_malformed_view_tuples_are_value_errors():
    expect_error(ValueError, call_with(kv_scales="a tensor"), "kv_scales must be a (data_ptr, dtype, shape, strides)")
    expect_error(ValueError, call_with(weights=(0x400000, "float32", ("S", H), (H, 1))), "weights is")
    expect_error(ValueError, call_with(cu_starts=(0x500000, "int32", (S,), (1, 1))), "1 sizes but 2 strides")
    expect_error(ValueError, call_with(q=(0, "float8_e4m3", (S, H, D), (H * D, D, 1))), "q is a null pointer")


def test_none_arguments_are_value_errors_saying_what_to_pass():
    placeholder = object()
    expect_error(ValueError, lambda: mqajit.mqa_logits(None, placeholder, placeholder, placeholder, placeholder,
                                                       placeholder), "q is None", "[S, H, D]")
    expect_error(ValueError, lambda: mqajit.mqa_logits(placeholder, placeholder, placeholder, None, placeholder,
                                                       placeholder), "weights is None", "float32")
    expect_error(ValueError, lambda: mqajit.mqa_logits(placeholder, (placeholder, None), placeholder, placeholder,
                                                       placeholder), "kv_scales is None")
    expect_error(ValueError, lambda: mqajit.mqa_logits(placeholder, (placeholder, placeholder), placeholder,
                                                       placeholder), "cu_ends is None", "int32")


def test_both_call_forms_bind_the_same_names():
    kv, scales, weights, starts, ends, out = "kv", "scales", "weights", "starts", "ends", "out"
    expected = (kv, scales, weights, starts, ends, False, out)
    assert _arguments.bind("f", kv, (scales, weights, starts, ends, False, out), {}) == expected
    assert _arguments.bind("f", (kv, scales), (weights, starts, ends, False), {"out": out}) == expected
    assert _arguments.bind("f", (kv, scales), (weights,), {"cu_starts": starts, "cu_ends": ends,
                                                          "clean_logits": False, "out": out}) == expected
    assert _arguments.bind("f", kv, (scales, weights, starts, ends), {})[5:] == (True, None)
    expect_error(TypeError, lambda: _arguments.bind("f", (kv, scales), (), {"kv_scales": scales}), "(kv, kv_scales)")
    expect_error(TypeError, lambda: _arguments.bind("f", kv, (scales,), {"kv_scales": scales}), "multiple values")
    expect_error(TypeError, lambda: _arguments.bind("f", (kv, scales), (1, 2, 3, 4, 5, 6), {}), "at most 7")
    expect_error(ValueError, lambda: _arguments.bind("f", (kv,), (), {}), "(kv, kv_scales)")


def test_tensors_must_be_torch_cuda_tensors():
    placeholder = object()
    arguments = [placeholder] * 6
    try:
        import torch
    except ImportError:
        expect_error(RuntimeError, lambda: mqajit.mqa_logits(*arguments), "PyTorch is not importable")
        return
    if not hasattr(torch, "float8_e4m3fn"):
        skip(f"torch {torch.__version__} has no float8_e4m3fn (torch 2.1 or newer has)")
    expect_error(ValueError, lambda: mqajit.mqa_logits(*arguments), "q is not a torch tensor (got object)")
    expect_error(ValueError, lambda: mqajit.mqa_topk(arguments[0], tuple(arguments[1:3]), *arguments[3:]),
                 "q is not a torch tensor (got object)")
    q = torch.zeros((S, H, D), dtype=torch.float8_e4m3fn)
    kv = torch.zeros((N, D), dtype=torch.float8_e4m3fn)
    expect_error(ValueError, lambda: mqajit.mqa_logits(q, (kv, torch.ones(N)), torch.ones(S, H),
                                                       torch.zeros(S, dtype=torch.int32),
                                                       torch.full((S,), N, dtype=torch.int32)),
                 "is on cpu", ".cuda()")


def test_runtime_status_agrees_with_device_info():
    status = mqajit.runtime_status()
    assert isinstance(status, mqajit.RuntimeStatus)
    assert status.message and str(status) == status.message
    if status.gpu_available:
        device = mqajit.device_info()
        assert device["cu_num"] > 0 and device["arch"] == _mqajit.canonical_arch(device["arch"])
        return
    expect_error(RuntimeError, mqajit.device_info, "no CUDA device")
    expect_error(RuntimeError, lambda: mqajit.lookup(heads=32, head_dim=128, seq_len=1024, seq_len_kv=8192),
                 "no GPU", "arch=", status.message)


def test_valid_views_pass_validation_and_reach_the_missing_driver():
    if mqajit.runtime_status().gpu_available:
        skip("a GPU is present: made-up addresses must not reach a kernel")
    error = expect_error(RuntimeError, call_with())
    assert error.kind != "invalid argument"


def cli_lookup(**shape):
    cli = os.environ.get("MQAJIT_MQAJIT_EXE")
    if not cli:
        skip("MQAJIT_MQAJIT_EXE is not set (ctest sets it to the built mqajit CLI)")
    arguments = [cli, "db", "lookup", "--json"]
    for name, value in shape.items():
        arguments += [f"--{name.replace('_', '-')}", str(value)]
    result = subprocess.run(arguments, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


LOOKUP_SHAPES = [
    dict(arch="sm_90a", cu_num=132, heads=32, head_dim=128, seq_len=4096, seq_len_kv=8192, clean_logits=1),
    dict(arch="sm_90a", cu_num=132, heads=32, head_dim=128, seq_len=4096, seq_len_kv=8192, clean_logits=0),
    dict(arch="sm_90a", cu_num=132, heads=64, head_dim=128, seq_len=700, seq_len_kv=30000, clean_logits=0),
    dict(arch="sm_90a", cu_num=132, heads=32, head_dim=128, seq_len=4096, seq_len_kv=8192, clean_logits=0,
         logits_dtype="bfloat16"),
    dict(arch="sm_90a", cu_num=114, heads=32, head_dim=128, seq_len=1024, seq_len_kv=8192, clean_logits=1),
    dict(arch="gfx950", cu_num=256, heads=32, head_dim=128, seq_len=2048, seq_len_kv=2048, clean_logits=1),
    dict(arch="sm_80", cu_num=7, heads=32, head_dim=64, seq_len=1, seq_len_kv=1, clean_logits=0),
]


def test_lookup_and_explain_give_the_cli_answer():
    num_tuned = 0
    for shape in LOOKUP_SHAPES:
        expected = cli_lookup(**shape)
        explanation = mqajit.explain(**shape)
        assert explanation.shape == expected["shape"]
        assert explanation.kernel == expected["kernel"]
        assert explanation.row == expected["row"]
        assert explanation.steps == expected["steps"] and explanation.steps
        assert explanation.fallbacks == expected["fallbacks"]
        assert (explanation.system_db or "") == expected["system_db"]
        assert explanation.user_db == expected["user_db"]
        assert mqajit.lookup(**shape) == explanation.row
        text = str(explanation)
        assert all(step in text for step in explanation.steps) and text.endswith(explanation.kernel)
        num_tuned += explanation.row is not None
    assert num_tuned > 0, "no shape found a tuned row: was the system database built?"


def test_explain_topk_says_which_path_serves_and_why():
    shape = dict(arch="sm_90a", cu_num=132, heads=32, head_dim=128, seq_len=4096)
    long = mqajit.explain_topk(**shape, seq_len_kv=1048576)
    assert long.path == "fused" and long.kernel.startswith("twgmma")
    # The fused kernel is the twin of the kernel mqa_logits(clean_logits=False) runs for the shape.
    logits = mqajit.explain(**shape, seq_len_kv=1048576, clean_logits=False)
    assert long.logits == logits
    if logits.kernel != "baseline":
        assert long.kernel == "t" + logits.kernel
    assert "candidate slots" in long.reason and long.kernel in str(long)
    short = mqajit.explain_topk(**shape, seq_len_kv=32768)
    assert short.path == "unfused" and "below 10 x" in short.reason
    assert short.kernel == mqajit.explain(**shape, seq_len_kv=32768, clean_logits=False).kernel
    assert mqajit.explain_topk(**shape, seq_len_kv=4096, path="fused").path == "fused"
    # A workspace without room for the fused path's candidates: unfused, or an error when asked for.
    small = mqajit.explain_topk(**shape, seq_len_kv=32768, workspace_bytes=32768 * 4)
    assert small.path == "unfused" and "workspace holds" in small.reason
    expect_error(ValueError, lambda: mqajit.explain_topk(**shape, seq_len_kv=32768, workspace_bytes=32768 * 4,
                                                         path="fused"), "fused path cannot serve", "workspace holds")
    # No fused kernel off sm_90a.
    other = mqajit.explain_topk(arch="sm_80", cu_num=108, heads=32, head_dim=128, seq_len=4096, seq_len_kv=32768)
    assert other.path == "unfused" and "no fused top-k kernel" in other.reason
    expect_error(ValueError, lambda: mqajit.explain_topk(**shape, seq_len_kv=32768, path="fast"), "path is 'fast'")


def test_the_mqa_topk_table_chooses_the_path_and_kernel():
    cli = os.environ.get("MQAJIT_MQAJIT_EXE")
    if not cli:
        skip("MQAJIT_MQAJIT_EXE is not set (ctest sets it to the built mqajit CLI)")
    # k=1000: a group of this test's own in the run's user database.
    fused, twin = "twgmma64x128x32_bkv64_r4_w2_lds4", "wgmma64x128x32_bkv64_r4_w2_lds4"
    with tempfile.TemporaryDirectory() as folder:
        csv = os.path.join(folder, "mqa_topk_tuned.csv")
        with open(csv, "w") as out:
            out.write("gfx,cu_num,heads,head_dim,k,seq_len,seq_len_kv,backend,variant,us\n"
                      f"sm_90a,132,32,128,1000,1024,8192,jit,{fused},50\n")
        subprocess.run([cli, "db", "import", csv], capture_output=True, text=True, check=True)
    shape = dict(arch="sm_90a", cu_num=132, heads=32, head_dim=128, seq_len=4096, seq_len_kv=8192)
    # N = 8192 is below the untuned rule's crossover; the row chose the fused kernel, so it serves.
    answer = mqajit.explain_topk(**shape, k=1000)
    assert answer.path == "fused" and answer.kernel == fused and answer.logits_kernel == twin
    assert "mqa_topk row" in answer.reason and answer.table.row["variant"] == fused
    assert answer.table.op == "mqa_topk" and answer.table.shape["k"] == 1000
    assert mqajit.lookup(op="mqa_topk", **shape, k=1000) == answer.table.row
    assert mqajit.explain(op="mqa_topk", **shape, k=1000).kernel == fused
    assert mqajit.explain_topk(**shape, k=1000, path="unfused").kernel == twin
    # Another k has no row: the mqa_logits table and the rule decide, as before.
    assert mqajit.lookup(op="mqa_topk", **shape, k=999) is None
    assert mqajit.explain_topk(**shape, k=999).path == "unfused"
    expect_error(TypeError, lambda: mqajit.lookup(op="mqa_topk", **shape, k=1000, clean_logits=False),
                 "no clean_logits column")


def test_lookup_takes_the_call_mode_defaulting_like_mqa_logits():
    shape = dict(arch="sm_90a", cu_num=132, heads=32, head_dim=128, seq_len=4096, seq_len_kv=8192)
    assert mqajit.explain(**shape).shape["clean_logits"] == 1
    assert mqajit.explain(**shape, clean_logits=False).shape["clean_logits"] == 0
    assert mqajit.lookup(**shape) == mqajit.lookup(**shape, clean_logits=True)
    # Another SM count of the same arch, heads and head_dim: the nearest tuned one answers, and says so.
    nearest = mqajit.explain(**{**shape, "cu_num": 114})
    assert nearest.row is not None and nearest.row["cu_num"] == 132
    assert any("nearest tuned cu_num, 132" in line for line in nearest.fallbacks)
    assert all(line in nearest.steps for line in nearest.fallbacks)


def test_lookup_takes_the_logits_dtype_for_mqa_logits_only():
    shape = dict(arch="sm_90a", cu_num=132, heads=32, head_dim=128, seq_len=4096, seq_len_kv=8192)
    assert mqajit.explain(**shape).shape["logits_dtype"] == "float32"
    assert mqajit.explain(**shape, logits_dtype="bfloat16").shape["logits_dtype"] == "bfloat16"
    expect_error(ValueError, lambda: mqajit.lookup(**shape, logits_dtype="float16"), "float32 or bfloat16")
    paged = dict(op="paged_mqa_logits", arch="sm_90a", cu_num=132, next_n=1, heads=64, head_dim=128, block_kv=64,
                 batch=8)
    expect_error(TypeError, lambda: mqajit.lookup(**paged, logits_dtype="bfloat16"),
                 "logits_dtype is not a key of the paged_mqa_logits table")


def test_lookup_spells_arch_canonically_and_rejects_bad_keys():
    shape = dict(cu_num=132, heads=32, head_dim=128, seq_len=4096, seq_len_kv=8192)
    assert mqajit.explain(arch="sm90a", **shape).shape["arch"] == "sm_90a"
    assert mqajit.lookup(arch="sm90a", **shape) == mqajit.lookup(arch="sm_90a", **shape)
    expect_error(ValueError, lambda: mqajit.lookup(arch="pentium", **shape), "pentium")
    expect_error(ValueError, lambda: mqajit.lookup(arch="sm_90a", **{**shape, "heads": 0}), "heads is 0")
    expect_error(TypeError, lambda: mqajit.lookup("sm_90a", 132, 32, 128, 4096, 8192))


PAGED_SHAPES = [
    dict(op="paged_mqa_logits", arch="sm_90a", cu_num=132, next_n=2, heads=64, head_dim=128, block_kv=64, batch=32,
         clean_logits=0),
    dict(op="paged_mqa_logits", arch="sm_90a", cu_num=114, next_n=1, heads=32, head_dim=128, block_kv=64, batch=1,
         clean_logits=1),
]


def test_paged_lookup_and_explain_give_the_cli_answer():
    for shape in PAGED_SHAPES:
        expected = cli_lookup(**shape)
        explanation = mqajit.explain(**shape)
        assert explanation.op == expected["op"] == "paged_mqa_logits"
        assert explanation.shape == expected["shape"]
        assert list(explanation.shape) == ["arch", "cu_num", "next_n", "heads", "head_dim", "block_kv",
                                           "clean_logits", "batch"]
        assert explanation.kernel == expected["kernel"]
        assert explanation.row == expected["row"]
        assert explanation.steps == expected["steps"] and explanation.steps
        assert explanation.fallbacks == expected["fallbacks"]
        assert mqajit.lookup(**shape) == explanation.row
        assert str(explanation).startswith("paged_mqa_logits: arch=sm_90a")


def test_paged_lookup_takes_its_own_keys_and_defaults_to_what_engines_call():
    shape = dict(op="paged_mqa_logits", arch="sm_90a", cu_num=132, next_n=1, heads=64, head_dim=128, block_kv=64,
                 batch=8)
    # paged_mqa_logits() defaults to clean_logits=False, mqa_logits() to True: each lookup defaults like its call.
    assert mqajit.explain(**shape).shape["clean_logits"] == 0
    assert mqajit.explain(**shape, clean_logits=True).shape["clean_logits"] == 1
    # No decode row is shipped tuned yet: the baseline, with the group named.
    explanation = mqajit.explain(**shape)
    if explanation.row is None:
        assert explanation.kernel == "baseline"
        assert explanation.steps[0].startswith("no tuned rows for group arch=sm_90a cu_num=132 next_n=1 heads=64")
    expect_error(TypeError, lambda: mqajit.lookup(**{**shape, "seq_len": 4}), "seq_len is not a key of the "
                 "paged_mqa_logits table")
    expect_error(TypeError, lambda: mqajit.lookup(**{k: v for k, v in shape.items() if k != "batch"}), "needs batch")
    expect_error(TypeError, lambda: mqajit.lookup(arch="sm_90a", cu_num=132, heads=64, head_dim=128, seq_len=1,
                                                  seq_len_kv=1, batch=2), "batch is not a key of the mqa_logits table")
    expect_error(ValueError, lambda: mqajit.lookup(**{**shape, "op": "decode"}), "op must be one of")
    expect_error(ValueError, lambda: mqajit.lookup(**{**shape, "next_n": 0}), "next_n is 0")


if __name__ == "__main__":
    main(globals())
