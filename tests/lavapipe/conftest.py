"""The Vulkan tier: ctsgen's Vulkan backend on lavapipe, Mesa's CPU driver (README, "lavapipe").

``CTSGEN_LAVAPIPE`` names the launcher ``.ci/lavapipe.sh PREFIX`` writes (``PREFIX/run``); ``.ci/run``
sets it. Programs that use Vulkan are started through it in subprocesses (it brings its own glibc,
Vulkan loader and driver), or, for the supervised backend, only the worker is
(``CTSGEN_WORKER_LAUNCHER``). Without it these tests fail where the env var CI is set, else skip.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from lavapipe_support import LAVAPIPE_ENV, REPO, Lavapipe


@pytest.fixture(scope="session")
def lavapipe(tmp_path_factory: pytest.TempPathFactory, spirv_cache_dir: Path) -> Lavapipe:
    launcher = os.environ.get(LAVAPIPE_ENV, "")
    if not (launcher and os.access(launcher, os.X_OK)):
        why = (f"{LAVAPIPE_ENV}={launcher!r} is not lavapipe's launcher -> bash .ci/lavapipe.sh PREFIX, then "
               f"export {LAVAPIPE_ENV}=PREFIX/run")
        if os.environ.get("CI"):
            pytest.fail(why)  # CI must run the Vulkan tier, never skip it
        pytest.skip(why)
    env = dict(os.environ, CTSGEN_CACHE_DIR=str(spirv_cache_dir),
               MESA_SHADER_CACHE_DIR=str(tmp_path_factory.mktemp("mesa-shader-cache")),
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    return Lavapipe(launcher, env)


@pytest.fixture(scope="session")
def c_compiler() -> str:
    """The C compiler (cc) that builds the standalone repros' runners (docs/repros/*/run.c): missing, a
    failure where the env var CI is set (CI runs those repros, never skips them), else a skip."""
    compiler = shutil.which("cc")
    if compiler is None:
        why = "no C compiler (cc) on PATH: the repros' runners need one -> install gcc (apt-get install gcc)"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    return compiler
