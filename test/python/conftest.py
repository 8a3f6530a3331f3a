"""Shared fixtures of the Python package's suite (test/python/).

Run by ctest (test/python.cmake) as
    PYTHONPATH=build/python /usr/bin/python3 -m pytest -q test/python
with DECOMPOSED_CLI naming build/bin/decomposed. The files under test are
built by hand from the spec by test/unpack_interop.py's generator (protobuf
wire bytes written by hand, no writer of this project), so the package is
checked against unpack, not against itself.
"""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TEST_DIR = os.path.dirname(HERE)
SOURCE_DIR = os.path.dirname(TEST_DIR)
sys.path.insert(0, TEST_DIR)


def _cli():
    cli = os.environ.get("DECOMPOSED_CLI")
    if not cli:
        cli = os.path.join(SOURCE_DIR, "build", "bin", "decomposed")
    return cli


@pytest.fixture(scope="session")
def cli():
    path = _cli()
    if not os.access(path, os.X_OK):
        pytest.fail(f"the decomposed CLI is not built: {path} "
                    f"(set DECOMPOSED_CLI)")
    return path


@pytest.fixture(scope="session")
def source_dir():
    return SOURCE_DIR
