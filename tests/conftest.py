"""Shared test fixtures: where the real tool output lives."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
# The team's shared corpus sits beside the checkout (CI lays a copy of shared/ there too).
SHARED = Path(os.environ.get("CI_AGENT_SHARED", REPO_ROOT.parent / "shared")).resolve()
SHARED_FIXTURES = SHARED / "fixtures"
LOCAL_FIXTURES = REPO_ROOT / "tests" / "fixtures"


def shared_fixture(relative: str) -> Path:
    path = SHARED_FIXTURES / relative
    if not path.exists():
        pytest.fail(f"missing shared fixture {path} (set CI_AGENT_SHARED to the shared/ folder)")
    return path


@pytest.fixture
def shared_fixtures() -> Path:
    if not SHARED_FIXTURES.is_dir():
        pytest.fail(f"shared fixtures not found at {SHARED_FIXTURES} (set CI_AGENT_SHARED)")
    return SHARED_FIXTURES


@pytest.fixture
def reachable_tmp(tmp_path: Path) -> Iterator[Path]:
    """A folder the sandboxed build/verify user can read and write (scripts a verify command runs,
    files it drops). As root, tmp_path sits in root's 0700 /tmp/pytest-of-root, which that user
    cannot enter; see tests/toolchain.py."""
    if os.geteuid() != 0:
        yield tmp_path
        return
    from tests.toolchain import reachable_dir

    folder = reachable_dir()
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


PEAK_RSS_SNIPPET = (
    "def peak_rss_kib():\n"
    "    # VmHWM belongs to this process's own memory map. ru_maxrss would not do: it keeps the\n"
    "    # high-water mark of the parent that forked us (pytest, already large): a floor, not ours.\n"
    "    with open('/proc/self/status') as fh:\n"
    "        return next(int(l.split()[1]) for l in fh if l.startswith('VmHWM:'))\n"
)
