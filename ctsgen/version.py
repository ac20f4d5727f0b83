"""ctsgen's version, at the bottom of the house: packs, results files and captures record it, and
``ctsgen --version`` prints it. pyproject.toml reads it from here (the one place it is written)."""

__version__ = "0.1.0"
