"""Component values: test data patterns, sentinels, and clampValue bit patterns.

Data movement (loads and stores) is checked bit for bit, so the values
here are chosen to make a wrong address visible and never to depend on
arithmetic: finite, normal floats (no NaN a device may quieten, no
denormal it may flush) and integers over the whole range.
"""

from __future__ import annotations

import numpy as np

from ctsgen.model.types import ComponentType

#: Exclusive bounds of "iota" values per type: every value in [1, bound) is
#: exact in the type, so a loaded iota value names the element it came from.
_IOTA_BOUND = {
    ComponentType.float16: 2048, ComponentType.bfloat16: 256, ComponentType.float32: 2**24,
    ComponentType.uint8: 255, ComponentType.sint8: 127, ComponentType.uint32: 2**32 - 1,
    ComponentType.sint32: 2**31 - 1,
}

#: Sentinel bits per type: a value no iota pattern produces (the most negative
#: finite float, the largest unsigned, the smallest signed integer).
_SENTINEL_BITS = {
    ComponentType.float16: 0xFBFF, ComponentType.bfloat16: 0xFF7F, ComponentType.float32: 0xFF7FFFFF,
    ComponentType.uint8: 0xFF, ComponentType.sint8: 0x80, ComponentType.uint32: 0xFFFFFFFF,
    ComponentType.sint32: 0x80000000,
}


def from_bits(bits: np.ndarray | int, component: ComponentType) -> np.ndarray:
    """Reinterpret unsigned bit patterns (truncated to the type's width) as ``component``."""
    mask = (1 << (8 * component.size)) - 1
    return (np.asarray(bits, dtype=np.uint64) & mask).astype(component.bits_dtype).view(component.dtype)


def to_bits(values: np.ndarray, component: ComponentType) -> np.ndarray:
    """The bit patterns of ``values`` (of ``component``) as unsigned integers."""
    return np.asarray(values, dtype=component.dtype).view(component.bits_dtype)


def sentinel_bits(component: ComponentType) -> int:
    """Bits of the poison value that unwritten elements keep."""
    return _SENTINEL_BITS[component]


def clamp_value_bits(clampValue: int, component: ComponentType) -> int:
    """The element a Constant-clamped load returns, as bits of ``component``.

    Decision "clamp-value-bits" (docs/spec-decisions.md): clampValue is a
    bit pattern, and a component narrower than 32 bits takes its low bits.
    """
    return clampValue & ((1 << (8 * component.size)) - 1)


def iota_values(component: ComponentType, n: int) -> np.ndarray:
    """1, 2, 3, ... (wrapping below the type's exact bound): element i holds i+1."""
    return (np.arange(n, dtype=np.int64) % (_IOTA_BOUND[component] - 1) + 1).astype(component.dtype)


def random_values(component: ComponentType, n: int, seed: int) -> np.ndarray:
    """``n`` values from a seeded generator: any integer, or any finite normal float."""
    rng = np.random.Generator(np.random.PCG64(seed))
    width = 8 * component.size
    bits = rng.integers(0, 1 << width, size=n, dtype=np.uint64)
    if component.is_float:
        mant = {16: 10 if component is ComponentType.float16 else 7, 32: 23}[width]
        exp_bits = width - 1 - mant
        exp_max = (1 << exp_bits) - 1
        exponent = (bits >> np.uint64(mant)) & np.uint64(exp_max)
        fixed = rng.integers(1, exp_max, size=n, dtype=np.uint64)  # normal exponents only
        exponent = np.where((exponent == 0) | (exponent == exp_max), fixed, exponent)
        bits = (bits & ~np.uint64(exp_max << mant)) | (exponent << np.uint64(mant))
    return from_bits(bits, component)


def pattern_values(pattern: str, component: ComponentType, n: int, seed: int) -> np.ndarray:
    """Values of a named data pattern: ``iota`` (readable, shrinks to it) or ``random``.

    Neither ever holds the sentinel, so a poisoned element that should have
    been written cannot pass by chance.
    """
    if pattern == "iota":
        return iota_values(component, n)
    if pattern == "random":
        values = random_values(component, n, seed)
        bits = to_bits(values, component)
        poison = sentinel_bits(component)
        return from_bits(np.where(bits == poison, poison ^ 1, bits), component)
    raise ValueError(f"unknown data pattern {pattern!r}; use 'iota' or 'random'")
