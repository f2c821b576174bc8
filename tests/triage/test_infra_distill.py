"""`ci-agent distill` says an infrastructure verdict: the `verdict` key of the JSON report (valid
against report-v1.json, absent without a verdict so other reports keep their keys), one line in
the llm and markdown renderings."""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema
import pytest

from ci_agent.cli.main import main
from ci_agent.triage import Verdict
from tests.conftest import REPO_ROOT, shared_fixture
from tests.triage.test_infra import INFRA

SCHEMA = json.loads((REPO_ROOT / "ci_agent" / "schemas" / "report-v1.json").read_text())
Cap = pytest.CaptureFixture[str]


def distill(capsys: Cap, *argv: str) -> str:
    assert main(["distill", *argv]) == 0
    return capsys.readouterr().out


def test_json_report_carries_the_verdict(capsys: Cap) -> None:
    data = json.loads(distill(capsys, "--output", "json", str(INFRA / "cargo-dns.log")))
    jsonschema.validate(data, SCHEMA)
    verdict = data["verdict"]
    assert verdict["kind"] == "infrastructure" and verdict["tests"] == []
    assert verdict["reason"] == "Not a code failure: the network failed (name resolution or connection)."
    assert any("Could not resolve host: no-such-host.invalid" in line for line in verdict["evidence"])


def test_a_report_without_a_verdict_has_no_verdict_key(capsys: Cap) -> None:
    log = shared_fixture("dotnet-logs/cs-errors-multi-win.log")
    data = json.loads(distill(capsys, "--output", "json", str(log)))
    assert "verdict" not in data


def test_the_schema_accepts_every_verdict_kind_and_null_and_refuses_others(capsys: Cap) -> None:
    data = json.loads(distill(capsys, "--output", "json", str(INFRA / "sigkill.log")))
    for kind in ("flaky", "pre_existing", "infrastructure"):
        jsonschema.validate({**data, "verdict": Verdict(kind, "r", ("e",), ("t",)).to_json()}, SCHEMA)
    jsonschema.validate({**data, "verdict": None}, SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**data, "verdict": {**data["verdict"], "kind": "broken"}}, SCHEMA)


def test_llm_and_markdown_say_it_in_one_line_after_the_title(capsys: Cap) -> None:
    log = str(INFRA / "enospc-dd.log")
    llm = distill(capsys, "--output", "llm", log).splitlines()
    assert llm[1] == "verdict: infrastructure: Not a code failure: the machine ran out of disk space."
    markdown = distill(capsys, "--output", "markdown", log).splitlines()
    assert markdown[0].startswith("## ci-agent: ")
    assert markdown[2].startswith("**Verdict: infrastructure.** Not a code failure: the machine ran out")
    assert "First evidence: `enospc-dd.log: dd: error writing '/dev/full': No space left on device`" \
        in markdown[2]
    code_failure = shared_fixture("dotnet-logs/cs-errors-multi-win.log")
    plain = distill(capsys, "--output", "markdown", str(code_failure))
    assert "Verdict" not in plain


def test_hostile_evidence_stays_inside_a_code_span(capsys: Cap, tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_bytes(b"curl: (6) Could not resolve host: x` <img src=x onerror=alert(1)> @admin [a](http://e)\n")
    markdown = distill(capsys, "--output", "markdown", str(log)).splitlines()[2]
    evidence = markdown.split("First evidence: ", 1)[1]
    assert evidence.startswith("``") and evidence.endswith("``"), "a backtick in the text: a longer fence"
    assert "<img" not in markdown.split("First evidence: ", 1)[0]


def test_the_verdict_line_keeps_the_markdown_within_its_budget(capsys: Cap) -> None:
    out = distill(capsys, "--output", "markdown", "--max-bytes", "600", str(INFRA / "node-heap-oom.log"))
    assert len(out.encode()) <= 600
    assert "**Verdict: infrastructure.**" in out


def test_a_log_read_from_stdin_is_judged_by_the_lines_the_report_kept(
        capsys: Cap, monkeypatch: pytest.MonkeyPatch) -> None:
    """stdin is read once: what pip printed last is in the report's log tail, and that is enough."""
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO((INFRA / "pip-dns.log").read_bytes())))
    llm = distill(capsys, "--output", "llm", "-").splitlines()
    assert llm[1] == ("verdict: infrastructure: Not a code failure: the network failed "
                      "(name resolution or connection).")
