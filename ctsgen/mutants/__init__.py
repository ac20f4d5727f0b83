"""Injected driver bugs: the catalogue every family contributes to (``FamilySpec.mutants``), the
mutant backend that runs the reference semantics with one applied, expected deviations (a mutant
applied to the expectation side) and mutation scores."""
