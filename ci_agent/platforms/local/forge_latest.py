"""The local forge's runs with a branch, a commit and a conclusion, for issue 16's pre-existing
check: `runs/<id>/run.json` (`record_run` writes it) says what run `<id>` tested and how it ended;
a run folder without one is a failed run of no known branch (the workflow_run-like path reads only
its `jobs/` and `artifacts/`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ci_agent.engine.forge import RunInfo

RUN_FILE = "run.json"


def record_run(runs: Path, run_id: int, *, branch: str, sha: str, conclusion: str, workflow: str = "",
               status: str = "completed") -> Path:
    """Write what run `run_id` tested (for tests and dry runs: a real forge knows this itself)."""
    folder = runs / str(run_id)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / RUN_FILE
    path.write_text(json.dumps({"branch": branch, "sha": sha, "conclusion": conclusion,
                                "workflow": workflow, "status": status}), encoding="utf-8")
    return path


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None  # a run described badly is a run we know nothing about
    return data if isinstance(data, dict) else None


def latest_completed_run(runs: Path, branch: str, workflow: str = "") -> RunInfo | None:
    """The completed run of `branch` with the highest id (ids grow, as on the forges), of
    `workflow` when some run of it is there."""
    found: list[tuple[int, dict[str, Any]]] = []
    for path in runs.glob(f"*/{RUN_FILE}"):
        data = _read(path)
        if (path.parent.name.isdigit() and data is not None and data.get("branch") == branch
                and data.get("status", "completed") == "completed"):
            found.append((int(path.parent.name), data))
    same = [(i, d) for i, d in found if workflow and d.get("workflow") == workflow]
    candidates = same or found
    if not candidates:
        return None
    run_id, data = max(candidates, key=lambda item: item[0])
    return RunInfo(run_id, str(data.get("sha") or ""), str(data.get("conclusion") or ""),
                   f"local/runs/{run_id}")
