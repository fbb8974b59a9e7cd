"""The Python examples compile (they run on a GPU: examples/python/README.md)."""
from __future__ import annotations

import py_compile

import pytest

from conftest import SOURCE_DIR

EXAMPLES = sorted((SOURCE_DIR / "examples" / "python").glob("*.py"))


def test_there_are_examples():
    assert len(EXAMPLES) >= 2


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_example_compiles(example, tmp_path):
    py_compile.compile(str(example), cfile=str(tmp_path / "example.pyc"), doraise=True)
