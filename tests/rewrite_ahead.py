"""pytest's rewritten test files, compiled once by the controller before its workers need them.

pytest rewrites each test file's asserts and caches the result (`__pycache__/*-pytest-*.pyc`).
In a fresh clone there is no cache, and every worker rewrites all ~110 files at once: 4.6 s of
CPU each. The controller does it once instead, while the warm server preloads on the other CPU
(the workers wait for that server anyway); the workers then read what it wrote. This uses
pytest's own rewriting functions (not public API): with another pytest, it does nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def rewrite_test_files(config: pytest.Config, folder: Path) -> int:
    """Rewrite and cache every test file and conftest under `folder` whose cache is missing or
    stale; how many were written."""
    try:
        from _pytest.assertion import assertstate_key
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _read_pyc,
            _rewrite_test,
            _write_pyc,
            get_cache_dir,
            try_makedirs,
        )

        state = config.stash[assertstate_key]
    except (ImportError, KeyError):  # another pytest, or asserts not rewritten (--assert=plain)
        return 0
    patterns = [*config.getini("python_files"), "conftest.py"]
    written = 0
    for path in sorted({path for pattern in patterns for path in folder.rglob(pattern)}):
        cache_dir = get_cache_dir(path)
        pyc = cache_dir / (path.name[:-3] + PYC_TAIL)
        if _read_pyc(path, pyc, state.trace) is not None or not try_makedirs(cache_dir):
            continue
        try:
            source_hash, code = _rewrite_test(path, config)
        except SyntaxError:  # the worker that imports it reports it, as pytest always does
            continue
        written += _write_pyc(state, code, source_hash, pyc)
    return written
