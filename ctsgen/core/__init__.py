"""The contract every other part speaks: a family (its cases, variants, compare rules and
coverage tables), a compiled shader and its dispatch, a verdict, a mutant, and argument types.
It imports only the spec's vocabulary (``ctsgen.model``), device profiles (``ctsgen.device``)
and the error base (``ctsgen.errors``); docs/architecture.md gives the layers above it."""
