"""Arrays in packs: ``.npy`` files, with bfloat16 kept as its uint16 bits.

numpy has no bfloat16, so a third party could not read ml_dtypes' arrays
portably; the manifest's buffer dtype says how to view the stored bits.
"""

from __future__ import annotations

import io
import math
import re
from pathlib import Path

import ml_dtypes
import numpy as np

_BITS_ONLY = {np.dtype(ml_dtypes.bfloat16): np.dtype(np.uint16)}


def storage_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype an array of ``dtype`` is stored as."""
    return _BITS_ONLY.get(np.dtype(dtype), np.dtype(dtype))


def save_array(path: Path, values: np.ndarray) -> None:
    np.save(path, np.ascontiguousarray(values).view(storage_dtype(values.dtype)), allow_pickle=False)


_MAGIC = b"\x93NUMPY"

#: The header np.save writes (format version 1.0): C order, a plain dtype and a shape.
_SAVED_HEADER = re.compile(rb"\{'descr': '([<>|][a-zA-Z]\d+)', 'fortran_order': False, 'shape': \(([\d, ]*)\), \} *\n")


def _check_magic(path: Path | str, head: bytes | bytearray) -> None:
    """numpy calls any file without the .npy magic "pickled data"; say what it is instead."""
    if not head.startswith(_MAGIC):
        raise ValueError(f"{path}: not a .npy array file (it does not start with the .npy magic bytes)")


def _parse(path: Path | str, data: bytearray) -> np.ndarray:
    """The array in ``data`` (a whole .npy file), read once: the header np.save writes is
    matched directly and the values are a view of the bytes (a pack run reads tens of
    thousands of small files, where numpy's general header parser was half the cost); any
    other valid header goes through np.load."""
    _check_magic(path, data)
    if data[6:8] == b"\x01\x00":
        end = 10 + int.from_bytes(data[8:10], "little")
        m = _SAVED_HEADER.fullmatch(data[10:end])
        if m:
            shape = tuple(int(d) for d in m.group(2).split(b",") if d.strip())
            dtype = np.dtype(m.group(1).decode())
            if len(data) - end == dtype.itemsize * math.prod(shape):
                return np.frombuffer(data, dtype, offset=end).reshape(shape)
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, EOFError) as exc:
        raise ValueError(f"{path}: not a readable .npy array ({exc})") from None


def array_shape(path: Path) -> tuple[int, ...]:
    """The shape of a stored array, read from its header only."""
    with open(path, "rb") as fh:
        _check_magic(path, fh.read(len(_MAGIC)))
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False).shape
    except (ValueError, EOFError) as exc:
        raise ValueError(f"{path}: not a readable .npy array ({exc})") from None


def load_array(path: Path | str, dtype: np.dtype) -> np.ndarray:
    """Load an array saved by :func:`save_array` and view it as ``dtype``.

    Raises ValueError naming the file if it is not a .npy file or its stored dtype
    is not the one expected.
    """
    with open(path, "rb") as fh:
        arr = _parse(path, bytearray(fh.read()))  # writable, as np.load's arrays are
    want = storage_dtype(np.dtype(dtype))
    if arr.dtype != want:
        raise ValueError(f"{path}: stored dtype {arr.dtype}, expected {want} for {np.dtype(dtype).name}")
    return arr.view(np.dtype(dtype))
