"""The fixbench modules live in bench/fixbench/ (scripts, not a package): put that folder on sys.path."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.fakes.fixtures import anthropic_fake

FIXBENCH = Path(__file__).resolve().parents[2] / "bench" / "fixbench"
if str(FIXBENCH) not in sys.path:
    sys.path.insert(0, str(FIXBENCH))

__all__ = ["anthropic_fake"]
