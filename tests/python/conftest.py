"""Shared fixtures: a private disk cache per test session, and a seeded generator."""

import os
import tempfile

import numpy as np
import pytest

# Set before metile runs anything, so tests never read or write the user's cache.
os.environ.setdefault("METILE_CACHE_DIR", tempfile.mkdtemp(prefix="metile-pytest-cache-"))


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
