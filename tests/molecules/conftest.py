"""Fixtures of the molecules tests: the pre-migration reference implementation of UniGEM's loss and loops."""

import importlib.util
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def ref_unigem():
    """``_reference_unigem.py`` (the old own loss / ancestral / DDIM code), loaded by path (importlib mode)."""
    spec = importlib.util.spec_from_file_location("_reference_unigem", Path(__file__).with_name("_reference_unigem.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
