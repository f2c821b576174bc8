"""Nothing ci-agent prints on a GitHub runner becomes a workflow command (issue 12).

The real `python -m ci_agent` is run as the runner runs it (GITHUB_ACTIONS=true, stdout and stderr
pipes) on hostile logs, file names, patches and arguments, and every line it prints is read with
the runner's own command grammar (`tests/runner_grammar.py`, both forms). The GitHub fix mode
with hostile logs and model prose is in tests/github_scenarios/test_github_hostile_output.py.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ci_agent
from ci_agent.logguard import CommandGuard, emit_commands, neutralise
from ci_agent.platforms.github.output import mask_secrets
from tests.runner_grammar import CANARY, HOSTILE_LINES, commands, hostile_commands

HOSTILE_TEXT = "\n".join(HOSTILE_LINES) + "\n"


def _cli(tmp_path: Path, *argv: str, github: bool = True, stdin: str | None = None) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "CI_AGENT_"))}
    env.pop("ANTHROPIC_API_KEY", None)
    if github:
        env["GITHUB_ACTIONS"] = "true"
    source = str(Path(ci_agent.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (source, env.get("PYTHONPATH", "")) if p)
    done = subprocess.run([sys.executable, "-m", "ci_agent", *argv], cwd=tmp_path, env=env, input=stdin,
                          capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


def _hostile_log(tmp_path: Path) -> Path:
    log = tmp_path / "build.log"
    log.write_text(
        "src/App/Program.cs(12,5): error CS1061: 'x' has no member ::set-output name=PWNED::1 "
        f"##[add-path]/tmp/{CANARY} [/r/App.csproj]\n"
        + HOSTILE_TEXT
        + "FAILED tests/test_a.py::test_x - AssertionError: ##[set-env name=PWNED]x\n"
        + "tests/test_a.py:3: in test_x\n    assert False, '::warning title=PWNED::w'\n")
    return log


def test_the_grammar_finds_every_hostile_line_when_printed_raw() -> None:
    found = hostile_commands(HOSTILE_TEXT)
    assert len(found) == len(HOSTILE_LINES)  # one each (after the bare CR for "ok\\r::...")


@pytest.mark.parametrize("output", ["llm", "markdown", "json", "github", "junit", "codequality"])
def test_distill_prints_no_command_from_a_hostile_log(tmp_path: Path, output: str) -> None:
    code, out, err = _cli(tmp_path, "distill", str(_hostile_log(tmp_path)), "--output", output)
    assert code == 0, err
    assert hostile_commands(out + "\n" + err) == []
    if output == "github":  # our own annotations still reach the runner
        assert [c.name for c in commands(out)][:1] == ["error"]
        assert all(c.form == "v2" and c.name in ("error", "warning", "notice") for c in commands(out))


def test_distill_to_a_file_is_left_byte_exact(tmp_path: Path) -> None:
    # A redirected stream is data, not the runner's log: `> report.json` keeps the log's text.
    log = _hostile_log(tmp_path)
    target = tmp_path / "out.json"
    env = {**os.environ, "GITHUB_ACTIONS": "true",
           "PYTHONPATH": str(Path(ci_agent.__file__).resolve().parents[1])}
    with target.open("w") as handle:
        subprocess.run([sys.executable, "-m", "ci_agent", "distill", str(log), "-o", "json"], cwd=tmp_path,
                       env=env, stdout=handle, check=True, timeout=120)
    assert "##[add-path]" in target.read_text()


def test_warnings_errors_and_usage_text_print_no_command(tmp_path: Path) -> None:
    log = str(_hostile_log(tmp_path))
    outputs = [
        _cli(tmp_path, "distill", *HOSTILE_LINES, log, "--output", "json"),  # "no such file" warnings
        _cli(tmp_path, *HOSTILE_LINES[:2]),  # argparse: invalid choice, on stderr
        _cli(tmp_path, "distill", log, "--max-bytes", HOSTILE_LINES[0]),  # argparse: invalid int
        _cli(tmp_path, "distill", HOSTILE_LINES[1]),  # ci-agent: error: no input could be read
    ]
    for _code, out, err in outputs:
        assert CANARY in out + err, "the hostile text is shown, as text"
        assert hostile_commands(out + "\n" + err) == []


def test_patch_check_of_a_hostile_patch_prints_no_command(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True, timeout=30)
    patch = tmp_path / "p.diff"
    name = f"##[set-env name={CANARY}]x.py"
    patch.write_text(f"--- a/{name}\n+++ b/{name}\n@@ -0,0 +1,2 @@\n+::set-output name={CANARY}::1\n"
                     f"+##[add-path]/{CANARY}\n--- a/../::add-mask::{CANARY}\n+++ b/../::add-mask::{CANARY}\n"
                     "@@ -1 +1 @@\n-a\n+b\n")
    for extra in ([], ["--json"]):
        _code, out, err = _cli(tmp_path, "patch", "check", str(patch), "--repo", str(tmp_path / "repo"),
                               *extra)
        assert CANARY in out + err
        assert hostile_commands(out + "\n" + err) == []


def test_fix_local_dry_run_on_a_hostile_log_prints_no_command(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, timeout=30)
    (repo / "a.py").write_text("x = 1\n")
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True, timeout=30)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm",
                    "i"], check=True, timeout=30)
    log = _hostile_log(tmp_path)
    code, out, err = _cli(tmp_path, "fix", "--local", "--dry-run", "--repo", str(repo), "--build-log",
                          str(log))
    assert CANARY in out + err, (code, out, err)
    assert hostile_commands(out + "\n" + err) == []


def test_without_github_actions_the_output_is_not_rewritten(tmp_path: Path) -> None:
    code, out, err = _cli(tmp_path, "distill", str(_hostile_log(tmp_path)), "-o", "json", github=False)
    assert code == 0, err
    assert f"##[add-path]/tmp/{CANARY}" in out


# ------------------------------------------------------------------------- the guard itself


def _through_guard(pieces: list[str]) -> str:
    raw = io.StringIO()
    guard = CommandGuard(raw)
    for piece in pieces:
        guard.write(piece)
        guard.flush()
    guard.finish()
    return raw.getvalue()


@pytest.mark.parametrize("line", HOSTILE_LINES)
def test_a_line_split_at_any_point_across_writes_stays_inert(line: str) -> None:
    text = "before\n" + line + "\n"
    for cut in range(len(text) + 1):
        shown = _through_guard([text[:cut], text[cut:]])
        assert hostile_commands(shown) == [], (cut, shown)
        assert shown.replace("\u2236", ":").replace("\uff3b", "[") == text


def test_ours_pass_and_hostile_data_inside_ours_is_still_neutralised() -> None:
    raw = io.StringIO()
    guard = CommandGuard(raw)
    guard.write(f"partial ::set-output name={CANARY}::")
    mask_secrets(["s3cr3t-value"], guard)  # type: ignore[arg-type]
    emit_commands(guard, f"::error file=a.py,line=1::message with ##[add-path]/{CANARY}\n")  # type: ignore[arg-type]
    guard.write(f"\n::set-env name={CANARY}::x\n")
    guard.finish()
    shown = raw.getvalue()
    assert hostile_commands(shown) == []
    names = [c.name for c in commands(shown)]
    assert set(names[:-1]) == {"add-mask"} and names[-1] == "error"
    with pytest.raises(ValueError):
        emit_commands(guard, "not a command\n")  # type: ignore[arg-type]


def test_neutralise_keeps_line_breaks_and_text() -> None:
    assert neutralise("a\r\n::x::y\rb ##[z]") == "a\r\n\u2236\u2236x::y\rb ##\uff3bz]"
