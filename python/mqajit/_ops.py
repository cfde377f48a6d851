"""mqa_logits on torch tensors: one crossing into C++ (python/src/bind_fast_call.cpp), which reads
the tensors, allocates the logits and runs the library; calls it does not take as they are go to
the checked path in _checked.py, which says what is wrong."""

from . import _checked, _mqajit, _torch_hooks  # noqa: F401  (they install the checked path and the torch hooks)

# Rows of a float32 logits tensor mqajit allocates start on 128-byte boundaries (32 floats);
# the returned view's stride(0) shows the padding.
ROW_ALIGN_ELEMENTS = _mqajit.logits_row_stride(1, 4)

mqa_logits = _mqajit.tensor_mqa_logits
mqa_logits_reference = _mqajit.tensor_mqa_logits_reference
