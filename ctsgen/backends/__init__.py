"""Backends: the adapter interface (:mod:`.base`), the built-in backends, and opening one by name
(:mod:`.registry`, the ``ctsgen.backends`` entry-point group)."""
