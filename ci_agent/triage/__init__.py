"""Judgment before the model (issue 16, DESIGN.md §3 "triage"): is this failure ours to fix?

Deterministic code decides, before any model call, whether a failure is
- `infrastructure`: its cause is the environment (package feeds, network, disk, memory, a
  cancelled, timed-out or lost job, registry rate limits), not the code (`triage.infra`);
- `pre_existing`: the default branch's latest run fails the same way, so this change did not
  cause it (`triage.preexisting`);
- `flaky`: the failed tests pass when run once more (`triage.rerun` builds the filtered re-run;
  the forge re-runs failed jobs in CI).

A verdict means no patch. Each is a `Verdict`, shown in the status comment, the job summary, the
outputs (`outcome`) and the JSON report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

VerdictKind = Literal["flaky", "pre_existing", "infrastructure"]
VERDICT_KINDS: tuple[VerdictKind, ...] = ("flaky", "pre_existing", "infrastructure")


@dataclass(frozen=True, slots=True)
class Verdict:
    """Why a failure gets no patch. `reason` is one sentence for a person; `evidence` the log
    lines, job facts or test names that decided it (untrusted text: render it as such); `tests`
    the tests concerned (flaky: those that passed on the re-run; pre_existing: those the default
    branch fails too)."""

    kind: VerdictKind
    reason: str
    evidence: tuple[str, ...] = ()
    tests: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "reason": self.reason, "evidence": list(self.evidence),
                "tests": list(self.tests)}
