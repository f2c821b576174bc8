"""capture.py on a tiny hand-made case: green → red → green, and the red run's output is stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from capture import capture, main
from fixcase import CaseError, load_case

# Fails (and says why) unless status.txt says "ok"; also writes a result file, like pytest's JUnit.
COMMAND = ["sh", "-c", "echo checking; cat status.txt > result.txt; grep -qx ok status.txt || "
                       "{ echo 'status is not ok' >&2; exit 3; }"]


def _diff(old: str, new: str) -> str:
    return f"--- a/status.txt\n+++ b/status.txt\n@@ -1 +1 @@\n-{old}\n+{new}\n"


def _case(root: Path, *, broken: str = "bad", fixed: str = "ok") -> Path:
    folder = root / "python-tiny"
    (folder / "before").mkdir(parents=True)
    (folder / "before" / "status.txt").write_text("ok\n")
    (folder / "break.diff").write_text(_diff("ok", broken))
    (folder / "fix.diff").write_text(_diff(broken, fixed))
    (folder / "case.json").write_text(json.dumps({
        "id": "python-tiny", "ecosystem": "python", "breakage": "wrong-default", "description": "d",
        "break_message": "m", "command": COMMAND,
        "outputs": {"build_log": ["build.log"], "junit": ["result.txt"]}}))
    return folder


def test_capture_stores_the_red_run(tmp_path: Path) -> None:
    folder = _case(tmp_path)
    assert capture(load_case(folder), timeout=60, write=True) == ["build.log", "result.txt"]
    assert (folder / "outputs" / "build.log").read_text() == "checking\nstatus is not ok\n"
    assert (folder / "outputs" / "result.txt").read_text() == "bad\n"
    assert (folder / "before" / "status.txt").read_text() == "ok\n", "before/ is never touched"


def test_a_break_that_does_not_fail_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    folder = _case(tmp_path, broken="ok")  # a break.diff that changes nothing the command sees
    with pytest.raises(CaseError, match=r"broken: .* should fail"):
        capture(load_case(folder), timeout=60, write=True)
    assert not (folder / "outputs").exists()


def test_a_fix_that_does_not_pass_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _case(tmp_path, fixed="nearly")
    assert main(["--check", str(folder)]) == 1
    assert "FAIL python-tiny: fixed: " in capsys.readouterr().err
