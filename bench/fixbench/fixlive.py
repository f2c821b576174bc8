"""The whole fix loop on one case (`ci-agent fix --local` against the API), and whether it fixed it.

Only run with `run.py --live` (which refuses without ANTHROPIC_API_KEY). ci-agent applies its
patch on `ci-agent/fix/change` in its own worktree and runs the case's command as `--verify`;
the harness then checks independently: the fix branch's tree, in a fresh copy, must pass the
case's command (the same check capture.py makes of the true fix). Nothing is pushed (`--local`).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fixcase import Case, git_env, run_command
from fixrequest import BRANCH, agent_env

FIX_BRANCH = f"ci-agent/fix/{BRANCH}"
# USD per million tokens (input, output), by model-name prefix (longest prefix wins); cache writes
# cost 1.25x input and cache reads 0.1x input (5-minute cache). From anthropic.com/pricing;
# `--price IN,OUT` overrides for a model not listed or a changed price.
PRICES: dict[str, tuple[float, float]] = {
    "claude-opus-4-5": (5.0, 25.0), "claude-opus-4-6": (5.0, 25.0),
    "claude-opus-4": (15.0, 75.0), "claude-sonnet-4": (3.0, 15.0), "claude-3-7-sonnet": (3.0, 15.0),
    "claude-haiku-4": (1.0, 5.0), "claude-3-5-haiku": (0.8, 4.0),
}
# What ci-agent's live run may see of our environment: the key and a base URL (tests point the
# SDK at the loopback fake with CI_AGENT_ANTHROPIC_BASE_URL).
PASSED_THROUGH = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CI_AGENT_ANTHROPIC_BASE_URL")


@dataclass
class LiveResult:
    fixed: bool = False  # the fix branch passes the case's command
    status: str = ""  # ci-agent's own outcome (its `done` event)
    exit_code: int = -1
    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    cost_usd: float | None = None
    wall_s: float = 0.0
    events: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def price_of(model: str, override: tuple[float, float] | None = None) -> tuple[float, float] | None:
    if override is not None:
        return override
    matches = [prefix for prefix in PRICES if model.startswith(prefix)]
    return PRICES[max(matches, key=len)] if matches else None


def cost(result: LiveResult, price: tuple[float, float] | None) -> float | None:
    if price is None:
        return None
    per_in, per_out = price
    dollars = (result.input_tokens * per_in + result.cache_write_tokens * per_in * 1.25
               + result.cache_read_tokens * per_in * 0.1 + result.output_tokens * per_out)
    return round(dollars / 1_000_000, 6)


def read_events(stdout: str, result: LiveResult) -> None:
    """Fold ci-agent's `--json` progress events into `result`."""
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        name = str(event.get("event", ""))
        result.events.append(name)
        if name == "asked":
            result.attempts += 1
            raw_usage = event.get("usage")
            usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
            result.input_tokens += int(usage.get("input_tokens", 0))
            result.output_tokens += int(usage.get("output_tokens", 0))
            result.cache_write_tokens += int(usage.get("cache_creation_input_tokens", 0))
            result.cache_read_tokens += int(usage.get("cache_read_input_tokens", 0))
        elif name == "done":
            result.status = str(event.get("status", ""))
            result.exit_code = int(event.get("exit_code", -1))


def _branch_passes(case: Case, repo: Path, scratch: Path, timeout: float) -> bool:
    """Export the fix branch's tree to a fresh folder and run the case's command there."""
    listed = subprocess.run(["git", "rev-parse", "--verify", "--quiet", FIX_BRANCH], cwd=repo,
                            env=git_env(repo), capture_output=True, check=False)
    if listed.returncode != 0:
        return False
    scratch.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", "--format=tar", FIX_BRANCH], cwd=repo, env=git_env(repo),
                             capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(scratch)], input=archive.stdout, check=True)
    return run_command(case.command, scratch, timeout).exit_code == 0


def run_live(case: Case, python: str, work: Path, input_flags: list[str], *, model: str | None,
             max_attempts: int | None, price: tuple[float, float] | None, environ: dict[str, str],
             timeout: float) -> LiveResult:
    """`ci-agent fix --local --verify <command> --json` on `<work>/repo`, timed, then checked."""
    home = work / "home"
    home.mkdir(exist_ok=True)
    argv = [python, "-m", "ci_agent", "fix", "--local", "--repo", "repo", "--json",
            "--verify", shlex.join(case.command), *input_flags]
    if model:
        argv += ["--model", model]
    if max_attempts is not None:
        argv += ["--max-attempts", str(max_attempts)]
    passed = {key: environ[key] for key in PASSED_THROUGH if environ.get(key)}
    result = LiveResult()
    started = time.monotonic()
    done = subprocess.run(argv, cwd=work, env=agent_env(home, passed), capture_output=True, text=True,
                          timeout=timeout, check=False)
    result.wall_s = round(time.monotonic() - started, 2)
    read_events(done.stdout, result)
    if result.exit_code == -1:
        result.exit_code = done.returncode
    result.fixed = _branch_passes(case, work / "repo", work / "check", timeout)
    result.cost_usd = cost(result, price)
    return result
