"""bench/fixbench/run.py end to end on a few cases: offline (the first request's metrics) and the
live path (`--live`) against the loopback Anthropic fake answering with the case's true fix."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import run as fixbench_run
from fixcase import CASES_DIR, case_digest, load_case

from tests.fakes.anthropic_fake import AnthropicFake
from tests.scenarios import model_scripts as model
from tests.toolchain import PYTHON

# Two Python and two C cases: a rename, an insertion (a missing import: recall by the anchor line),
# a changed signature, a missing switch case.
SUBSET = ["python-inventory-rename", "python-ledger-missing-import", "c-strbuf-signature",
          "c-lexer-missing-case"]
LIVE_CASE = "python-inventory-rename"


def _files_of(diff: str) -> list[str]:
    """The files a diff touches, read the way git writes them (independently of fixmetrics)."""
    return [match for match in re.findall(r"^diff --git a/(\S+) b/", diff, flags=re.MULTILINE)]


def _run(args: list[str], out: Path) -> dict[str, Any]:
    code = fixbench_run.main([*args, "--out", str(out), "--label", "test", "--markdown", str(out / "t.md")])
    result: dict[str, Any] = json.loads((out / "test.json").read_text(encoding="utf-8"))
    result["exit_code"] = code
    return result


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run of `python bench/fixbench/run.py SUBSET` as the README says (a subprocess: its own
    sys.path), shared by the offline tests: each dry run costs seconds on a busy machine."""
    out = tmp_path_factory.mktemp("fixbench")
    done = subprocess.run([sys.executable, str(CASES_DIR.parent / "run.py"), *SUBSET, "--out", str(out),
                           "--label", "subset", "--python", sys.executable, "--jobs", "2"], cwd=out,
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads((out / "subset.json").read_text(encoding="utf-8"))
    result["stdout"] = done.stdout
    return result


def test_offline_metrics_on_a_subset(offline: dict[str, Any]) -> None:
    assert [row["id"] for row in offline["cases"]] == SUBSET
    assert offline["report_only"] == [], "naming cases leaves the report-only logs out"
    for row in offline["cases"]:
        case = load_case(CASES_DIR / row["id"])
        assert row["request_bytes"] > 1000 and row["tokens_est"] == -(-row["request_bytes"] // 4)
        assert row["fix_files"] == _files_of(case.fix_diff.read_text(encoding="utf-8"))
        assert row["targets"] > 0 and 0 <= row["shown"] <= row["targets"]
        assert row["recall"] == round(row["shown"] / row["targets"], 4)
    total = offline["totals"]["total"]
    assert total["targets"] == sum(row["targets"] for row in offline["cases"])
    assert total["shown"] == sum(row["shown"] for row in offline["cases"])
    assert all(f"| {case} |" in offline["stdout"] for case in SUBSET) and "| **total** |" in offline["stdout"]


def test_the_rename_case_is_fully_shown(offline: dict[str, Any]) -> None:
    """Both calls the rename missed are in the traceback and the excerpt of reports.py."""
    row = next(row for row in offline["cases"] if row["id"] == "python-inventory-rename")
    assert (row["targets"], row["shown"], row["fix_files_excerpted"]) == (2, 2, True)


def test_live_refuses_without_a_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert fixbench_run.main(["--live", LIVE_CASE, "--out", str(tmp_path)]) == 2
    assert not (tmp_path / "current.json").exists()


def test_live_path_end_to_end_against_the_fake(anthropic_fake: AnthropicFake, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    case = load_case(CASES_DIR / LIVE_CASE)
    anthropic_fake.reply(model.submit_patch(case.fix_diff.read_text(encoding="utf-8"),
                                            summary="Finish the rename in reports.py.",
                                            root_cause="reports.py still calls get_stock."))
    # the case's command runs `python3`; as root ci-agent runs --verify as an unprivileged user,
    # who needs a python3 with pytest it can read (tests/toolchain.py)
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "python3").symlink_to(PYTHON)
    monkeypatch.setenv("PATH", os.pathsep.join([str(tools), os.environ["PATH"]]))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake")
    monkeypatch.setenv("CI_AGENT_ANTHROPIC_BASE_URL", anthropic_fake.base_url)

    result = _run([LIVE_CASE, "--live", "--python", sys.executable, "--price", "3,15"], tmp_path)

    (row,) = result["cases"]
    live = row["live"]
    assert live["fixed"] is True, live
    assert (live["status"], live["exit_code"], live["attempts"]) == ("fixed", 0, 1)
    usage = model.USAGE
    assert (live["input_tokens"], live["output_tokens"]) == (usage["input_tokens"], usage["output_tokens"])
    expected = (usage["input_tokens"] * 3 + usage["cache_creation_input_tokens"] * 3.75
                + usage["output_tokens"] * 15) / 1e6
    assert live["cost_usd"] == pytest.approx(expected)
    assert result["totals"]["total"]["live"]["fix_rate"] == 1.0
    assert len(anthropic_fake.message_requests) == 1


def test_update_benchmarks_rewrites_only_between_the_markers(tmp_path: Path) -> None:
    page = tmp_path / "BENCHMARKS.md"
    page.write_text(f"prose before\n{fixbench_run.BEGIN}\nold table\n{fixbench_run.END}\nprose after\n")
    fixbench_run.update_benchmarks(page, "| new | table |\n")
    assert page.read_text() == (f"prose before\n{fixbench_run.BEGIN}\n| new | table |\n{fixbench_run.END}"
                                "\nprose after\n")
    page.write_text("no markers\n")
    with pytest.raises(SystemExit, match="lacks the markers"):
        fixbench_run.update_benchmarks(page, "x")


def test_reuse_takes_the_earlier_row_only_for_the_same_input(tmp_path: Path) -> None:
    case = load_case(CASES_DIR / LIVE_CASE)
    earlier = {"id": case.id, "digest": case_digest(case), "recall": 0.5}
    # an interpreter that cannot run: a row that is not reused would fail to measure
    args = fixbench_run.parse_args([LIVE_CASE, "--python", str(tmp_path / "no-python")])
    args.reused = {"cases": [earlier]}
    assert fixbench_run.run_case(case, args) == {**earlier, "reused": True}
    args.reused = {"cases": [{**earlier, "digest": "0" * 16}]}  # the case changed since
    with pytest.raises(FileNotFoundError):
        fixbench_run.run_case(case, args)
