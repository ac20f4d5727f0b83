"""Hypothesis settings for the tensor-layout family tests (see also tests/conftest.py)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ctsgen", max_examples=100, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ctsgen-thorough", parent=settings.get_profile("ctsgen"), max_examples=2000)
settings.load_profile(os.environ.get("CTSGEN_HYPOTHESIS_PROFILE", "ctsgen"))
