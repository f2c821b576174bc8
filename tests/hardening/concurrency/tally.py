"""The concurrency figure: races run and their outcomes, from the JSON lines the race tests append
to `$CI_AGENT_RACE_LOG` (tests/hardening/concurrency/races.py `record`).

    rm -f races.jsonl
    CI_AGENT_RACE_LOG=$PWD/races.jsonl CI_AGENT_RACE_REPEATS=4 \\
        python -m pytest tests/hardening/concurrency -q -p no:randomly
    python -m tests.hardening.concurrency.tally races.jsonl
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

_WON = ("committed", "fixed", "escalated")


def table(lines: list[dict[str, object]]) -> str:
    by_kind: dict[str, list[dict[str, object]]] = defaultdict(list)
    for line in lines:
        by_kind[str(line["kind"])].append(line)
    out = ["| race | runs | schedules | job outcomes (winner / other) | invariants held | violated |",
           "|---|---:|---|---|---:|---|"]
    for kind, races in by_kind.items():
        schedules = sorted({str(r["schedule"]) for r in races})
        plain = sum(1 for s in schedules if s.startswith("offset_"))
        named = [s for s in schedules if not s.startswith("offset_")]
        shown = ", ".join(named) + (f" + {plain} start offsets" if plain else "")
        outcomes: Counter[str] = Counter()
        for race in races:
            jobs = race["jobs"]
            assert isinstance(jobs, list)
            said = sorted((f"{j['outcome'] or '-'} ({j['exit']})" for j in jobs),
                          key=lambda s: (not s.startswith(_WON), s))  # the winner first
            outcomes[" / ".join(said)] += 1
        held = sum(1 for r in races if r["verdict"] == "ok")
        bad = Counter(str(r["verdict"]).removeprefix("violated: ") for r in races if r["verdict"] != "ok")
        out.append(f"| {kind} | {len(races)} | {shown} | "
                   + "; ".join(f"{k} ×{n}" for k, n in outcomes.most_common())
                   + f" | {held} | " + ("; ".join(f"{k} ×{n}" for k, n in bad.items()) or "none") + " |")
    total = len(lines)
    ok = sum(1 for r in lines if r["verdict"] == "ok")
    out.append(f"\n{total} races, invariants held in {ok}, violated in {total - ok}.")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    path = Path(argv[0] if argv else "races.jsonl")
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    print(table(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
