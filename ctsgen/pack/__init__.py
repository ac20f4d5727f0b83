"""Test packs on disk: generating, writing (atomically) and reading (validated).

The format is specified for third parties in docs/pack-format.md.
"""

FORMAT = "ctsgen-pack"
FORMAT_VERSION = 1
