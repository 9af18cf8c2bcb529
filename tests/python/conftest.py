"""Shared fixtures: a seeded generator. The tests run against this checkout: python/metile
and the extension that scripts/build.sh links in build/, never an installed copy. They run
on metile.device(): the cuda device where a GPU is, else host; METILE_DEVICE=host|cuda
chooses. The host emulator checks threadgroup memory for races in tests
(METILE_HOST_RACECHECK=1, opt-in for users)."""

import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("METILE_HOST_RACECHECK", "1")

import metile  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def pytest_configure(config):
    package, core = Path(metile.__file__).resolve(), Path(metile._core.__file__).resolve()
    if not (package.is_relative_to(REPO / "python") and core.is_relative_to(REPO / "build")):
        raise pytest.UsageError(
            f"tests/python test this checkout (python/metile and build/'s _core), but this "
            f"Python imports {package} and {core}: run scripts/build.sh")


def pytest_report_header(config):
    return f"metile device: {metile.device()}"


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
