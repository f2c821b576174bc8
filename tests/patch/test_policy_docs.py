"""The patch-policy sections of README.md and SECURITY.md name the tests that prove them: every
`path::test` (and `::test`, relative to the file named before it) must be a test that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SECTIONS = [("README.md", "### The patch policy", "## `ci-agent fix --local`"),
            ("SECURITY.md", "## The patch policy: denied, gated, flagged", "## Secrets"),
            ("SECURITY.md", "## Untrusted input", "## Supply chain"),
            ("SECURITY.md", "### The relay: one project, bounded connections", "## Residual risks")]
_REF = re.compile(r"`(?:(tests/[\w/]+\.py))?::(test_\w+)`")


def _references(doc: str, start: str, end: str) -> list[tuple[str, str]]:
    text = (ROOT / doc).read_text(encoding="utf-8")
    body = text[text.index(start):text.index(end, text.index(start))]
    out: list[tuple[str, str]] = []
    current = ""
    for match in _REF.finditer(body):
        current = match[1] or current
        out.append((current, match[2]))
    return out


@pytest.mark.parametrize(("doc", "start", "end"), SECTIONS, ids=[f"{s[0]}:{s[1]}" for s in SECTIONS])
def test_every_test_the_policy_docs_name_exists(doc: str, start: str, end: str) -> None:
    references = _references(doc, start, end)
    assert len(references) >= 4
    for path, name in references:
        assert path, f"{doc}: ::{name} follows no file"
        source = (ROOT / path).read_text(encoding="utf-8")
        assert re.search(rf"^def {name}\(", source, re.M), f"{doc} names {path}::{name}, which does not exist"
