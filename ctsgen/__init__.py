"""ctsgen: property-based conformance tests for NVIDIA's cooperative matrix extensions.

The package's public face, above every module in it: ``ctsgen.check_case`` and
``ctsgen.given_cases`` (:mod:`ctsgen.testing`, for users' own tests) and ``ctsgen.__version__``.
Every import of a ctsgen module runs this file first, so it imports only the bottom layer
eagerly and loads the rest when asked. No ctsgen module imports it: each imports what it uses
from where it is defined (tests/test_structure.py).
"""

from ctsgen.version import __version__

__all__ = ["__version__", "check_case", "given_cases"]


def __getattr__(name: str):  # lazy: `import ctsgen` stays cheap (no Hypothesis, no families)
    if name in ("given_cases", "check_case"):
        from ctsgen import testing  # local: startup
        return getattr(testing, name)
    raise AttributeError(f"module 'ctsgen' has no attribute {name!r}")
