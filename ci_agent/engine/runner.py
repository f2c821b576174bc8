"""One fix cycle in PR/MR mode, forge-neutral: `ci-agent fix --github` and `fix --gitlab` both
run it, each through its `Platform` (platforms/github/cycle.py, platforms/gitlab/cycle.py).

Order of things (DESIGN.md §4.3): mask secrets; read inputs and context; refuse forks and skip
`ci-agent/*` branches before any network call; read the durable state (the remote fix branch's
trailers + our status comment's marker); fold this CI run into it when it ran on the fix branch
(the pending attempt passes or fails; a rerun of a handled run changes nothing); check the budget
before any model call; run the attempt engine in a worktree; push fast-forward only; open or
reuse the draft fix change request; upsert the status comment(s); escalate once. The platform's
module writes the outcome where its CI reads it (step outputs, dotenv, job summary).

The steps: `observe.open_cycle` (who, which branch, which marker), then `execute.execute`, which
gathers what `decide.decide` asks for and runs the one executor its decision names.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from ci_agent.engine.cycle import OUTCOMES, Cycle, Result, Run, repo_root, summary
from ci_agent.engine.execute import execute
from ci_agent.engine.observe import open_cycle
from ci_agent.engine.platform import Platform
from ci_agent.engine.types import ActionInputs, Trigger
from ci_agent.llm.client import ModelClient


def run_cycle(env: Mapping[str, str], inputs: ActionInputs, trig: Trigger, platform: Platform,
              client_factory: Callable[[], ModelClient] | None = None, *, instructions: str = "",
              explain: bool = False) -> Result:
    """One cycle for a trigger the platform judged acceptable (not refused, not skipped). A trigger
    of kind "command" is a writer's `/ci-agent fix` or `explain` on the failure of run `run_id`."""
    run = Run(env, inputs, trig, platform, client_factory, instructions=instructions, explain=explain)
    cycle = open_cycle(run)
    if isinstance(cycle, Result):
        return cycle
    with tempfile.TemporaryDirectory(prefix="ci-agent-cycle-") as tmp:
        return execute(run, cycle, Path(tmp))


__all__ = ["OUTCOMES", "Cycle", "Result", "Run", "repo_root", "run_cycle", "summary"]
