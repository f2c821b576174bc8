"""Every committed fixbench case is well-formed (cheap: no toolchain runs, only `git apply`).

The format is bench/fixbench/README.md; capture.py is what really runs each case's command.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fixcase import CASES_DIR, CaseError, apply_diff, committed_cases, copy_tree, load_case, parse_case

CASES = committed_cases()
SIZE_LIMIT = 50_000  # bytes of before/: "a realistic project ... well under 50 KB"


def test_the_corpus_is_not_empty() -> None:
    assert CASES, f"no case under {CASES_DIR}"


@pytest.mark.parametrize("folder", CASES, ids=[path.name for path in CASES])
def test_case_is_well_formed(folder: Path, tmp_path: Path) -> None:
    case = load_case(folder)
    size = sum(path.stat().st_size for path in case.before.rglob("*") if path.is_file())
    assert size < SIZE_LIMIT, f"before/ is {size} bytes"
    for kind in case.outputs:
        for produced in case.output_files(kind):
            assert produced.is_file() and produced.stat().st_size > 0, f"{produced} was not captured"
    work = tmp_path / "tree"
    copy_tree(case.before, work)
    apply_diff(case.break_diff, work, check_only=True)
    apply_diff(case.break_diff, work)
    apply_diff(case.fix_diff, work, check_only=True)
    # fix.diff is not break.diff reversed by accident of an empty file: it changes something
    assert "\n@@ " in "\n" + case.fix_diff.read_text(encoding="utf-8")


def _minimal(root: Path) -> dict[str, object]:
    return {"id": root.name, "ecosystem": "python", "breakage": "off-by-one", "description": "d",
            "break_message": "m", "command": ["true"], "outputs": {"build_log": ["build.log"]}}


@pytest.mark.parametrize(("field", "value", "message"), [
    ("id", "python-other", "folder name"),
    ("ecosystem", "cobol", "ecosystem"),
    ("breakage", "typo", "breakage"),
    ("command", "make test", "command"),
    ("outputs", {"sarif": ["x.sarif"]}, "sarif"),
    ("outputs", {"junit": ["../escape.xml"]}, "relative path"),
    ("outputs", {"build_log": ["a.log", "b.log"]}, "one file"),
])
def test_malformed_case_json_is_named(field: str, value: object, message: str) -> None:
    root = Path("/nowhere/python-sample")
    data = _minimal(root)
    data[field] = value
    with pytest.raises(CaseError, match=message):
        parse_case(root, data)


def test_a_folder_of_another_ecosystem_is_refused() -> None:
    root = Path("/nowhere/c-sample")
    with pytest.raises(CaseError, match="does not start with its ecosystem"):
        parse_case(root, {**_minimal(root), "ecosystem": "python"})


def test_a_diff_that_does_not_apply_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n", encoding="utf-8")
    diff = tmp_path / "bad.diff"
    diff.write_text("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-two\n+three\n", encoding="utf-8")
    with pytest.raises(CaseError, match=r"bad\.diff does not apply"):
        apply_diff(diff, tmp_path, check_only=True)
