"""The README's walkthrough (issue 13 point 17), run as written: the shell commands of its
`walkthrough: dry-run` and `walkthrough: real-run` blocks, parsed out of README.md, in one bash
session from the checkout, with `ci-agent` and `python3` on PATH as after `pip install .`. Every
line the README shows as their output must be in what they print (commit ids, sizes and timings
aside). For the real run the model's side is the loopback Anthropic fake with a scripted answer,
as the README says."""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT
from tests.fakes.anthropic_fake import AnthropicFake
from tests.scenarios import model_scripts as model
from tests.toolchain import PYTHON

README = REPO_ROOT / "README.md"
SAMPLE = REPO_ROOT / "examples" / "python-broken"
SPLIT = "::walkthrough: real run::"
_BLOCK = re.compile(r"<!-- walkthrough: ([a-z -]+) -->\n```[a-z]*\n(.*?)```", re.DOTALL)


def readme_blocks() -> dict[str, str]:
    return {name: body for name, body in _BLOCK.findall(README.read_text(encoding="utf-8"))}


def normalise(text: str) -> str:
    """Commit ids, sizes and timings differ from run to run; everything else must match."""
    text = re.sub(r"\b[0-9a-f]{7,40}\b", "<hex>", text)
    text = re.sub(r"\b\d+ bytes\b", "<n> bytes", text)
    return re.sub(r"\b\d+\.\d+s\b", "<t>s", text)


def fixed_diff() -> str:
    broken = (SAMPLE / "shop" / "ratings.py").read_text(encoding="utf-8")
    mean = "    return sum(ratings) / len(ratings)\n"
    fixed = broken.replace(mean, "    if not ratings:\n        return 0.0\n" + mean)
    assert fixed != broken
    return "".join(difflib.unified_diff(broken.splitlines(keepends=True), fixed.splitlines(keepends=True),
                                        "a/shop/ratings.py", "b/shop/ratings.py"))


def _path_with_tools(tmp: Path) -> str:
    """`ci-agent` (this checkout's code, as `pip install .` would put it on PATH) and `python3`
    (with pytest, runnable by the unprivileged user a verify runs as when we are root)."""
    tools = tmp / "bin"
    tools.mkdir()
    source = str(Path(__file__).resolve().parents[2])
    launcher = tools / "ci-agent"
    launcher.write_text(f'#!/bin/sh\nPYTHONPATH="{source}" exec "{sys.executable}" -m ci_agent "$@"\n')
    launcher.chmod(0o755)
    (tools / "python3").symlink_to(PYTHON)
    return os.pathsep.join([str(tools), os.environ.get("PATH", "/usr/bin:/bin")])


def test_the_readme_walkthrough_runs_as_written(anthropic_fake: AnthropicFake, tmp_path: Path) -> None:
    blocks = readme_blocks()
    assert set(blocks) == {"dry-run", "dry-run output", "real-run", "real-run output"}, set(blocks)
    anthropic_fake.reply(model.submit_patch(
        fixed_diff(), summary="Return 0.0 from average_rating when there are no ratings.",
        root_cause="average_rating divides by len(ratings), which is zero for a product without "
                   "ratings, so test_no_ratings_yet and test_stars_of_a_new_product raise "
                   "ZeroDivisionError."))
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": _path_with_tools(tmp_path), "HOME": str(home), "LANG": "C.UTF-8",
           "TMPDIR": str(tmp_path), "CI_AGENT_ANTHROPIC_BASE_URL": anthropic_fake.base_url,
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    script = f"{blocks['dry-run']}\necho '{SPLIT}' >&2\n{blocks['real-run']}"

    done = subprocess.run(["bash", "-c", script], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=600, check=False)

    printed = done.stdout + done.stderr
    assert SPLIT in done.stderr, printed
    dry_err, real_err = done.stderr.split(SPLIT + "\n", 1)
    story = f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    for line in blocks["dry-run output"].splitlines():
        assert normalise(line) in normalise(dry_err), f"{line!r} not printed by the dry run\n{story}"
    assert len(anthropic_fake.message_requests) == 1, "the dry run sent nothing; the real run asked once"
    for line in blocks["real-run output"].splitlines():
        if line.strip():
            assert normalise(line) in normalise(done.stdout + real_err), f"{line!r} not printed\n{story}"
    (demo,) = [p for p in tmp_path.iterdir() if p.name.startswith("tmp.")]
    request = json.loads((demo / "request.json").read_text())
    text = json.dumps(request["messages"])
    assert "inputs: pytest.log (pytest_console," in text and "FAILED TESTS (2)" in text
    assert [t["name"] for t in request["tools"]] == ["read_file", "search_code", "list_files", "submit_patch",
                                                      "give_up"]
    shown = subprocess.run(["git", "show", "ci-agent/fix/main:shop/ratings.py"], cwd=demo, text=True,
                           capture_output=True, check=True).stdout
    assert "if not ratings:\n        return 0.0" in shown
    assert (demo / "shop" / "ratings.py").read_text() == (SAMPLE / "shop" / "ratings.py").read_text(), \
        "the checkout is never touched: the fix is on the branch only"
