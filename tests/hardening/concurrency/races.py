"""The machinery of the race tests: ci-agent jobs as real child processes, and a choreographer that
orders what two jobs do against the fakes, so that each interleaving worth testing is reached on
purpose instead of by luck.

- `spawn` starts `python -m ci_agent <verb> --github|--gitlab` with exactly a job's variables (as
  tests/github_scenarios `Job.start()` does, for any verb and either forge); `Proc.wait` collects
  its exit code, output and the files the job leaves (step outputs or dotenv, summary).
- `Choreo` holds chosen requests of a fake (the GitHub/GitLab fake's dispatch, the Anthropic fake's
  scripted answers) until a condition over the world holds, e.g. "job A's pull request creation
  waits until job B has exited". A hold is a barrier, never a timed check: when its condition never
  comes (the product took another path) it lets the request through after `HOLD_LIMIT_S` and the
  test's invariants decide.
- `RefLog` installs a `post-receive` hook in the bare origin recording every ref update (old, new), so
  a force-push or a deletion of the fix branch is seen even when a later push hides it.
- `record` appends each race's outcome to `$CI_AGENT_RACE_LOG` (JSON lines) for the figure
  (tests/hardening/concurrency/tally.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fakes.anthropic_fake import AnthropicFake, Reply, Script
from tests.platform_scenarios.base import child_command, child_environment

HOLD_LIMIT_S = 45.0  # a hold whose condition never comes lets the request through after this
POLL_S = 0.02
_METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"}
# Variables of the test process a job must not inherit (each runner starts clean).
_PREFIXES = ("GITHUB_", "INPUT_", "CI_", "GITLAB_", "RUNNER_")
ZERO = "0" * 40
# How a job that lost a race says so (ci_agent/engine/runner.py, commands.py); a loser whose
# output says none of these has not said clearly that another won.
LOST = ("moved on origin while this attempt ran", "is waiting for its ci", "was already handled",
        "was already claimed by another", "tested an older commit")


def wait_until(condition: Callable[[], bool], limit_s: float = HOLD_LIMIT_S) -> bool:
    """Poll `condition` until it holds; False when `limit_s` passed first (never asserted on)."""
    end = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(POLL_S)
    return True


# -- jobs as processes -------------------------------------------------------------------------


@dataclass
class Proc:
    """One ci-agent job running as a child process."""

    label: str
    variables: dict[str, str]
    workspace: Path
    child: subprocess.Popen[str]
    result: JobResult | None = None

    @property
    def done(self) -> bool:
        return self.child.poll() is not None

    def wait(self) -> JobResult:
        if self.result is None:
            out, err = self.child.communicate(timeout=300)
            self.result = JobResult(self.label, self.child.returncode, out, err, _outputs(self.variables,
                                                                                           self.workspace),
                                    _summary(self.variables, self.workspace))
        return self.result


@dataclass(frozen=True)
class JobResult:
    label: str
    exit_code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]  # GitHub step outputs, or GitLab's dotenv without the CI_AGENT_ prefix
    summary: str

    @property
    def outcome(self) -> str:
        return self.outputs.get("outcome", "")

    def said_it_lost(self) -> bool:
        text = (self.stdout + self.stderr + self.summary).lower()
        return any(phrase in text for phrase in LOST)

    def __str__(self) -> str:
        return (f"[{self.label}] exit {self.exit_code} outputs {self.outputs}\n"
                f"--- stdout\n{self.stdout[-2000:]}\n--- stderr\n{self.stderr[-3000:]}\n"
                f"--- summary\n{self.summary[:1500]}")


def spawn(label: str, variables: dict[str, str], workspace: Path, argv: list[str]) -> Proc:
    """`python -m ci_agent <argv>` in `workspace` with only the job's variables (plus the test
    process's own non-CI environment: PATH, HOME ...), as a container entrypoint runs it."""
    child = subprocess.Popen(child_command(*argv), cwd=workspace, env=child_environment(variables, _PREFIXES),
                             text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return Proc(label, variables, workspace, child)


def _outputs(variables: dict[str, str], workspace: Path) -> dict[str, str]:
    from tests.github_scenarios.harness import parse_github_output
    from tests.gitlab_scenarios.harness import parse_dotenv

    if "GITHUB_OUTPUT" in variables:
        return parse_github_output(Path(variables["GITHUB_OUTPUT"]).read_text())
    dotenv = workspace / "ci-agent.env"
    found = parse_dotenv(dotenv.read_text()) if dotenv.exists() else {}
    return {k.removeprefix("CI_AGENT_").lower(): v for k, v in found.items()}


def _summary(variables: dict[str, str], workspace: Path) -> str:
    path = Path(variables["GITHUB_STEP_SUMMARY"]) if "GITHUB_STEP_SUMMARY" in variables \
        else workspace / "ci-agent-summary.md"
    return path.read_text() if path.exists() else ""


@contextmanager
def prepared(world: Any) -> Iterator[list[tuple[dict[str, str], Path]]]:
    """Within the block, the scenario world's in-process `_invoke` only records the job it was
    given (variables, workspace) instead of running it, so the harness's own job preparation
    (checkout, event payload, predefined variables, include rules) is reused for a child process."""
    seen: list[tuple[dict[str, str], Path]] = []

    def record(variables: dict[str, str], workspace: Path) -> tuple[int, str, str]:
        seen.append((dict(variables), workspace))
        return 0, "", ""

    world._invoke = record
    try:
        yield seen
    finally:
        del world._invoke
        for listing in ("actions", "jobs"):  # the placeholder results of the recorded runs
            done = getattr(world, listing, None)
            if isinstance(done, list):
                del done[len(done) - len(seen):]


# -- holding requests ----------------------------------------------------------------------------


@dataclass
class Hold:
    method: str
    path: str  # a regex searched in the request path
    until: Callable[[], bool]
    times: int = 1
    timed_out: int = 0


@dataclass
class Choreo:
    """Holds on one forge fake's requests, installed by wrapping its dispatch (or handle)."""

    holds: list[Hold] = field(default_factory=list)
    arrived: list[tuple[str, str]] = field(default_factory=list)  # (method, path) of every request
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def install(self, fake: Any) -> None:
        name = "dispatch" if hasattr(type(fake), "dispatch") else "handle"
        inner = getattr(fake, name)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            method, target = _method_and_target(args)
            self._maybe_hold(method, target.split("?", 1)[0])
            return inner(*args, **kwargs)

        setattr(fake, name, wrapped)

    def hold(self, method: str, path: str, until: Callable[[], bool], times: int = 1) -> Hold:
        found = Hold(method, path, until, times)
        with self._lock:
            self.holds.append(found)
        return found

    def count(self, method: str, path: str) -> int:
        with self._lock:
            return sum(1 for m, p in self.arrived if m == method and re.search(path, p))

    def _maybe_hold(self, method: str, path: str) -> None:
        with self._lock:
            self.arrived.append((method, path))
            hit = next((h for h in self.holds if h.times > 0 and h.method == method
                        and re.search(h.path, path)), None)
            if hit is not None:
                hit.times -= 1
        if hit is not None and not wait_until(hit.until):
            hit.timed_out += 1


def _method_and_target(args: tuple[Any, ...]) -> tuple[str, str]:
    for i, value in enumerate(args[:-1]):
        if isinstance(value, str) and value in _METHODS:
            return value, str(args[i + 1])
    return "", ""


def held_answer(script: Script, until: Callable[[], bool]) -> Script:
    """A scripted model answer given only once `until` holds (the fake answers each request in its
    own thread, so holding one answer holds only the job that asked)."""
    def answer(body: dict[str, Any]) -> Reply:
        wait_until(until)
        return script(body)
    return answer


def hold_answers(api: AnthropicFake, until: Callable[[], bool]) -> None:
    """Every answer queued so far is given only once `until` holds."""
    with api._lock:
        queued = list(api._script)
        api._script.clear()
        api._script.extend(held_answer(s, until) if callable(s) else s for s in queued)


def model_asks(api: AnthropicFake, count: int) -> Callable[[], bool]:
    return lambda: len(api.message_requests) >= count


# -- what origin saw -----------------------------------------------------------------------------


@dataclass(frozen=True)
class RefUpdate:
    ref: str
    old: str
    new: str


class RefLog:
    """Every update of origin's refs that took effect, from a `post-receive` hook (the `update`
    hook also sees pushes that lose the ref lock afterwards)."""

    def __init__(self, origin: Path) -> None:
        self.origin = origin
        self.path = origin / "ci-agent-ref-updates.log"
        hook = origin / "hooks" / "post-receive"
        hook.parent.mkdir(exist_ok=True)
        hook.write_text("#!/bin/sh\nwhile read old new ref; do\n"
                        f'  echo "$ref $old $new" >> "{self.path}"\ndone\nexit 0\n')
        hook.chmod(0o755)

    def updates(self, ref: str) -> list[RefUpdate]:
        if not self.path.exists():
            return []
        found = [RefUpdate(*line.split()) for line in self.path.read_text().splitlines() if line.strip()]
        return [u for u in found if u.ref == ref]

    def rewrites(self, ref: str) -> list[RefUpdate]:
        """Updates of `ref` that dropped commits: a deletion, or a move to a non-descendant."""
        bad = []
        for update in self.updates(ref):
            dropped = update.old != ZERO and not is_ancestor(self.origin, update.old, update.new)
            if update.new == ZERO or dropped:
                bad.append(update)
        return bad


def is_ancestor(origin: Path, old: str, new: str) -> bool:
    done = subprocess.run(["git", "merge-base", "--is-ancestor", old, new], cwd=origin, capture_output=True)
    return done.returncode == 0


# -- the figure ---------------------------------------------------------------------------------


def record(kind: str, schedule: str, results: list[JobResult], verdict: str, **facts: Any) -> None:
    """One race's outcome, for the figure: appended to $CI_AGENT_RACE_LOG when it is set."""
    target = os.environ.get("CI_AGENT_RACE_LOG")
    if not target:
        return
    line = {"kind": kind, "schedule": schedule, "verdict": verdict,
            "jobs": [{"label": r.label, "exit": r.exit_code, "outcome": r.outcome} for r in results], **facts}
    with open(target, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


OFFSET_STEP_S = 1.5  # a job takes 5-10 s here: offsets 0, 1.5, 3 ... s cross every phase of the first


def offset_s(schedule: str) -> float:
    """The start offset of schedule `offset_<i>` (0 for a choreographed one)."""
    return OFFSET_STEP_S * int(schedule.removeprefix("offset_")) if schedule.startswith("offset_") else 0.0


def repeats() -> int:
    """How many extra start offsets each race runs with: `$CI_AGENT_RACE_REPEATS` (the figure's
    run), 0 in the ordinary suite, which keeps only the choreographed interleavings."""
    try:
        return max(0, int(os.environ.get("CI_AGENT_RACE_REPEATS", "0")))
    except ValueError:
        return 0
