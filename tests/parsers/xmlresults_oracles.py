"""Readers for the peer oracles of the JUnit/NUnit/xUnit fixtures (see shared PROVENANCE.md).

- EnricoMi `.results`: Python-call syntax, loaded with `ast` (the PROVENANCE recipe).
- dorny `__snapshots__/*.snap`: Jest pretty-format; we only need each test's name and result.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ci_agent.report import Outcome, ParseResult
from tests.conftest import SHARED_FIXTURES

ENRICOMI = SHARED_FIXTURES / "enricomi"
DORNY = SHARED_FIXTURES / "dorny"


def _convert(node: ast.AST) -> Any:
    if isinstance(node, ast.Call):
        fields = {kw.arg: _convert(kw.value) for kw in node.keywords}
        fields["__type__"] = ast.unparse(node.func).rsplit(".", 1)[-1]
        return fields
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_convert(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {
            _convert(k): _convert(v) for k, v in zip(node.keys, node.values, strict=True) if k is not None
        }
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)  # e.g. an exception object in `errors`


def enricomi_results(xml_path: Path) -> dict[str, Any]:
    """The `.results` sibling of an input, as nested dicts (cases under 'cases')."""
    text = xml_path.with_suffix(".results").read_text(encoding="utf-8")
    parsed: dict[str, Any] = _convert(ast.parse(text, mode="eval").body)
    return parsed


def enricomi_inputs(folder: str) -> list[Path]:
    """Every `.xml` input under enricomi/<folder> that EnricoMi parsed (has `.results`)."""
    return sorted(p for p in (ENRICOMI / folder).rglob("*.xml") if p.with_suffix(".results").exists())


@dataclass(frozen=True)
class SnapCase:
    name: str
    result: str  # success | failed | skipped


_SNAP_BLOCK_RE = re.compile(r"^exports\[`(?P<key>.*?)`\] = `\n(?P<body>.*?)^`;$", re.M | re.S)
_SNAP_PATH_RE = re.compile(r'^  "path": "(?P<path>[^"]+)",$', re.M)
# pretty-format does not escape quotes, and names may span lines: a name ends at `",<newline>`.
_SNAP_CASE_RE = re.compile(r'"name": "(?P<name>(?:(?!",\n).)*)",\n\s*"result": "(?P<result>\w+)"', re.S)


def _unescape_js(text: str) -> str:
    """Undo the template-literal escaping of the snapshot file (backslash, backtick, `${`)."""
    return re.sub(r"\\([\\`$])", r"\1", text)


@cache
def dorny_snapshots() -> dict[str, list[SnapCase]]:
    """fixture path relative to dorny/ (e.g. 'fixtures/jest-junit.xml') -> its test cases."""
    found: dict[str, list[SnapCase]] = {}
    for snap in sorted((DORNY / "__snapshots__").glob("*.snap")):
        for block in _SNAP_BLOCK_RE.finditer(snap.read_text(encoding="utf-8")):
            path = _SNAP_PATH_RE.search(block["body"])
            if path is None:
                continue
            found[path["path"]] = [
                SnapCase(_unescape_js(m["name"]), m["result"]) for m in _SNAP_CASE_RE.finditer(block["body"])
            ]
    return found


def assert_counts_match_cases(result: ParseResult, *, inconclusive: bool = False) -> None:
    """What every result reader's counts promise, read with keep_cases: one case per count, the
    failures as counted, each case in one bucket (inconclusive only where the format has it)."""
    assert result.counts is not None and result.cases is not None
    counts = result.counts
    assert counts.total == len(result.cases)
    assert counts.failed == len(result.failures) == sum(c.outcome.is_failure for c in result.cases)
    unsure = sum(c.outcome is Outcome.INCONCLUSIVE for c in result.cases)
    assert inconclusive or not unsure
    assert counts.passed + counts.failed + counts.skipped + unsure == counts.total
