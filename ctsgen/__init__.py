"""ctsgen: property-based conformance tests for NVIDIA's cooperative matrix extensions."""

__version__ = "0.1.0"


def __getattr__(name: str):  # lazy: `import ctsgen` stays cheap (no Hypothesis, no families)
    if name in ("given_cases", "check_case"):
        from ctsgen import testing
        return getattr(testing, name)
    raise AttributeError(f"module 'ctsgen' has no attribute {name!r}")
