"""Jinja rendering of shader templates.

A family keeps its template beside its code; shared macros
(``common.glsl.j2``: the header, the parameter buffer, typed storage
buffers, bit-pattern conversions) live here once. Templates render with
StrictUndefined, so a missing variable is an error, not an empty string.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

SHARED_DIR = Path(__file__).parent


@cache
def _environment(family_dir: str) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader([family_dir, str(SHARED_DIR)]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render(family_dir: Path, template: str, **context: object) -> str:
    """Render ``template`` from ``family_dir`` (shared macros importable by name)."""
    return _environment(str(family_dir)).get_template(template).render(**context)
