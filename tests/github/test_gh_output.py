"""gh_output: masks, $GITHUB_OUTPUT heredocs, the 1 MiB job summary, untrusted log lines."""

from __future__ import annotations

import base64
import re
from pathlib import Path

from ci_agent.logguard import log_line
from ci_agent.platforms.github.output import (
    MAX_SUMMARY_BYTES,
    fit_summary,
    mask_lines,
    output_block,
    write_outputs,
    write_summary,
)


def parse_output_file(text: str) -> dict[str, str]:
    """Read $GITHUB_OUTPUT the way the runner does (name<<DELIM ... DELIM)."""
    out: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if not lines[i]:
            i += 1
            continue
        name, _, delim = lines[i].partition("<<")
        end = lines.index(delim, i + 1)
        out[name] = "\n".join(lines[i + 1:end])
        i = end + 1
    return out


def test_mask_covers_value_and_encoded_forms() -> None:
    lines = mask_lines(["sk-ant-secret-1", "ab", "line1-secret\nline2-secret"])
    assert "::add-mask::sk-ant-secret-1" in lines
    assert f"::add-mask::{base64.b64encode(b'sk-ant-secret-1').decode()}" in lines
    assert "::add-mask::line1-secret" in lines and "::add-mask::line2-secret" in lines
    assert not any(line.endswith("::ab") for line in lines)  # too short to mask safely
    assert all(line.count("\n") == 0 for line in lines)


def test_outputs_use_heredoc_and_a_value_cannot_inject_another_output(tmp_path: Path) -> None:
    path = tmp_path / "out"
    hostile = "x\nghadelimiter_0\ntokens<<EOF\n999\nEOF"
    assert write_outputs(str(path), {"outcome": "fixed", "branch": hostile, "tokens": "12"})
    parsed = parse_output_file(path.read_text(encoding="utf-8"))
    assert parsed == {"outcome": "fixed", "branch": hostile, "tokens": "12"}
    delimiters = re.findall(r"^\w+<<(ghadelimiter_[0-9a-f]{32})$", path.read_text(encoding="utf-8"), re.M)
    assert len(set(delimiters)) == 3  # random, one per value


def test_no_output_file_outside_actions() -> None:
    assert write_outputs("", {"outcome": "fixed"}) is False
    assert output_block({}) == ""


def test_summary_is_cut_within_one_mib_at_a_line() -> None:
    big = "```\n" + ("é" * 100 + "\n") * 20000
    cut = fit_summary(big)
    assert len(cut.encode("utf-8")) <= MAX_SUMMARY_BYTES
    assert cut.endswith("per step)_\n") and cut.count("```") % 2 == 0
    assert fit_summary("small") == "small"


def test_summary_appends_and_counts_what_is_already_there(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    path.write_bytes(b"x" * (MAX_SUMMARY_BYTES - 100))
    write_summary(str(path), "line\n" * 1000)
    assert path.stat().st_size <= MAX_SUMMARY_BYTES


def test_untrusted_text_is_never_a_workflow_command() -> None:
    text = "ok\n::set-output name=x::1\n  ::add-mask::y\r::stop-commands::z"
    safe = log_line(text)
    assert not any(line.strip().startswith("::") for line in safe.split("\n"))
    assert "\r" not in safe and "set-output" in safe
