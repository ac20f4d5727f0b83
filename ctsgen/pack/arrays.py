"""Arrays in packs: ``.npy`` files, with bfloat16 kept as its uint16 bits.

numpy has no bfloat16, so a third party could not read ml_dtypes' arrays
portably; the manifest's buffer dtype says how to view the stored bits.
"""

from __future__ import annotations

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


def _check_magic(path: Path) -> None:
    """numpy calls any file without the .npy magic "pickled data"; say what it is instead."""
    with open(path, "rb") as fh:
        head = fh.read(len(_MAGIC))
    if head != _MAGIC:
        raise ValueError(f"{path}: not a .npy array file (it does not start with the .npy magic bytes)")


def array_shape(path: Path) -> tuple[int, ...]:
    """The shape of a stored array, read from its header only."""
    _check_magic(path)
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False).shape
    except (ValueError, EOFError) as exc:
        raise ValueError(f"{path}: not a readable .npy array ({exc})") from None


def load_array(path: Path, dtype: np.dtype) -> np.ndarray:
    """Load an array saved by :func:`save_array` and view it as ``dtype``.

    Raises ValueError naming the file if it is not a .npy file or its stored dtype
    is not the one expected.
    """
    _check_magic(path)
    try:
        arr = np.load(path, allow_pickle=False)
    except (ValueError, EOFError) as exc:
        raise ValueError(f"{path}: not a readable .npy array ({exc})") from None
    want = storage_dtype(np.dtype(dtype))
    if arr.dtype != want:
        raise ValueError(f"{path}: stored dtype {arr.dtype}, expected {want} for {np.dtype(dtype).name}")
    return arr.view(np.dtype(dtype))
