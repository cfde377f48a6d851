"""A stand-in for mqajit._mqajit_torch built with ctypes: the same capsule of C function pointers
(python/src/torch_reader_api.hpp), whose functions read FakeTensors and allocate them, so the
fast call's use of a torch reader is tested without torch."""

import ctypes

from fake_torch import BFLOAT16, FLOAT8, FLOAT32, INT32, FakeDevice, FakeTensor

CAPSULE_NAME = b"mqajit._mqajit_torch.reader"
DTYPE_CODES = {FLOAT8: 0, FLOAT32: 1, INT32: 2, BFLOAT16: 3}  # mqajit::DType's values
CODE_DTYPES = {code: dtype for dtype, code in DTYPE_CODES.items()}

READ = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p),
                        ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int64),
                        ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_long))
EMPTY = ctypes.CFUNCTYPE(ctypes.py_object, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int, ctypes.c_long,
                         ctypes.POINTER(ctypes.c_void_p))


class ReaderTable(ctypes.Structure):
    _fields_ = [("version", ctypes.c_int), ("read", READ), ("empty", EMPTY)]


class FakeReader:
    """Reads FakeTensors (not other objects: those go the Python-attribute way) and counts calls."""

    def __init__(self, version=1):
        self.reads, self.declined, self.allocations = 0, 0, []
        self._read, self._empty = READ(self._read_tensor), EMPTY(self._allocate)
        self.table = ReaderTable(version, self._read, self._empty)
        new_capsule = ctypes.pythonapi.PyCapsule_New
        new_capsule.restype = ctypes.py_object
        new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        self.capsule = new_capsule(ctypes.addressof(self.table), CAPSULE_NAME, None)

    def _read_tensor(self, tensor, max_rank, data, dtype, rank, shape, strides, device):
        if type(tensor) is not FakeTensor or not tensor.is_cuda or tensor.dtype not in DTYPE_CODES or \
                len(tensor.shape) > max_rank:
            self.declined += 1
            return 0
        self.reads += 1
        data[0] = tensor.data_ptr()
        dtype[0] = DTYPE_CODES[tensor.dtype]
        rank[0] = len(tensor.shape)
        for dim, (size, step) in enumerate(zip(tensor.shape, tensor.stride())):
            shape[dim], strides[dim] = size, step
        device[0] = tensor.device.index
        return 1

    def _allocate(self, rows, columns, row_stride, dtype, device, data):
        self.allocations.append(((rows, columns), (row_stride, 1), CODE_DTYPES[dtype], device))
        tensor = FakeTensor(CODE_DTYPES[dtype], (rows, columns), (row_stride, 1), FakeDevice("cuda", device))
        data[0] = tensor.data_ptr()
        return tensor
