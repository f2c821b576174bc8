"""Where the failure is read from: files on the runner (inline mode) or the failed jobs' logs and
artifacts fetched through the forge (workflow_run mode, GitLab's fix job, slash commands).

The rule for build logs and result files (`build_logs`, `test_results`): they are what the
failing run wrote, never what the commit holds.
- Fetched: only the artifacts are searched (GitLab: the failed jobs' own artifacts; GitHub: the
  run's, which belong to no job), never the checkout ci-agent commits from. A committed sample
  `.trx` or a tracked `logging.xml` under `**/*.xml` is not a result of the failed run.
- Inline (the step runs in the job that built and tested): the workspace is searched, but a
  file the commit holds unchanged is skipped (named in the notes): this job did not write it.
  An untracked or modified file is this job's (checkouts start clean).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_agent import git
from ci_agent.engine.forge import Forge, Job
from ci_agent.engine.types import ActionInputs, Trigger
from ci_agent.triage.infra import JobOutcome

_EXAMPLES = 3


@dataclass(frozen=True)
class Sources:
    logs: tuple[str, ...]  # absolute paths or globs
    result_globs: tuple[str, ...]  # absolute paths or globs
    notes: tuple[str, ...] = ()  # what could not be fetched or was left out, for the summary
    # (download folder, label): how fetched files are named to people and the model, never by
    # the runner's temp path (`collect.display_name`)
    labels: tuple[tuple[str, str], ...] = ()
    # what the forge says of each failed job whose log was read (fetched sources only): the
    # infrastructure verdict reads a cancelled, timed-out or runner-failed job from it
    jobs: tuple[JobOutcome, ...] = ()


def _absolute(base: Path, pattern: str) -> str:
    return pattern if os.path.isabs(pattern) else str(base / pattern)


def _files(pattern: str) -> list[str]:
    """The regular files a path or glob (`**` recursive) names, sorted."""
    if glob.has_magic(pattern):
        return sorted(p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p))
    return [pattern] if os.path.isfile(pattern) else []


def committed_files(workspace: Path) -> frozenset[str]:
    """Real paths of the files whose content in `workspace` is the commit's (tracked and not
    modified); empty when `workspace` is in no git work tree."""
    root = git.work_tree_root(workspace)
    if root is None:
        return frozenset()
    tracked = git.git(root, ["ls-files", "-z", "--cached"])
    changed = git.git(root, ["diff", "--no-ext-diff", "--name-only", "-z"])
    if tracked.returncode != 0 or changed.returncode != 0:
        return frozenset()
    unchanged = set(tracked.stdout.split("\0")) - set(changed.stdout.split("\0")) - {""}
    return frozenset(os.path.realpath(root / name) for name in unchanged)


def _written_by_job(base: Path, patterns: Sequence[str], committed: frozenset[str],
                    input_name: str) -> tuple[list[str], list[str]]:
    """(paths, notes): each pattern's files minus the commit's own. A pattern that names nothing
    is passed on as it is, so the reader says "no file matches" as for any input."""
    picked: list[str] = []
    notes: list[str] = []
    for pattern in patterns:
        absolute = _absolute(base, pattern)
        matches = _files(absolute)
        if not matches:
            picked.append(absolute)
            continue
        ours = [m for m in matches if os.path.realpath(m) not in committed]
        skipped = [os.path.relpath(m, base) for m in matches if os.path.realpath(m) in committed]
        if skipped:
            notes.append(f"{input_name} {pattern!r}: {len(skipped)} file(s) of the commit itself were "
                         f"not read ({_names(skipped)}); only files this job wrote are its results")
        picked.extend(ours)
    return picked, notes


def _names(paths: Sequence[str]) -> str:
    shown = ", ".join(paths[:_EXAMPLES])
    return shown + (f" and {len(paths) - _EXAMPLES} more" if len(paths) > _EXAMPLES else "")


def inline_sources(inputs: ActionInputs, workspace: Path) -> Sources:
    committed = committed_files(workspace)
    logs, log_notes = _written_by_job(workspace, inputs.build_logs, committed, "build_logs")
    results, result_notes = _written_by_job(workspace, inputs.test_results, committed, "test_results")
    return Sources(tuple(logs), tuple(results), tuple(log_notes + result_notes))


def _in_artifact(folder: Path, patterns: Iterable[str]) -> list[str]:
    """Files the patterns name inside one extracted artifact. Patterns are relative to the
    project directory the artifact was uploaded from (a leading `/` is dropped); a match outside
    the folder (`../`) is never read."""
    root = folder.resolve()
    found: list[str] = []
    for pattern in patterns:
        found += [m for m in _files(str(folder / pattern.lstrip("/")))
                  if Path(m).resolve().is_relative_to(root)]
    return found


def _own(job: Job, own_prefix: str) -> bool:
    return bool(own_prefix) and job.name.startswith(own_prefix + "-")


def fetched_sources(forge: Forge, trig: Trigger, inputs: ActionInputs, dest: Path,
                    own_prefix: str = "") -> Sources:
    """Download the failed jobs' logs and their artifacts under `dest`, and find the `build_logs`
    and `test_results` files in those artifacts; an artifact that expired, is too big or is unsafe
    is left out and named in `notes`. Jobs named `<own_prefix>-...` are ci-agent's own (a failed
    distill job in the same stage) and never read as the failure."""
    try:
        run_id = int(trig.run_id)
    except ValueError:
        return Sources((), (), (f"the run id {trig.run_id!r} is not a number; nothing was fetched",))
    notes: list[str] = []
    labels = ((str(dest / "logs"), "job log "), (str(dest / "artifacts"), "artifact "))
    failed = [job for job in forge.failed_jobs(run_id) if not _own(job, own_prefix)]
    traces = [str(forge.download_job_log(job.id, dest / "logs").text_path) for job in failed]
    if not traces:
        notes.append(f"run {run_id} lists no failed job (cancelled, or re-run since?)")
    found = forge.download_artifacts(run_id, dest / "artifacts", jobs=[job.id for job in failed])
    logs: list[str] = []
    results: list[str] = []
    usable: list[str] = []
    for artifact in found:
        if artifact.path is None:
            notes.append(f"artifact {artifact.name!r} was not used: {artifact.problem}")
            continue
        usable.append(artifact.name)
        logs += _in_artifact(artifact.path, inputs.build_logs)
        results += _in_artifact(artifact.path, inputs.test_results)
    if not found:
        notes.append(f"run {run_id} has no artifacts (of its failed jobs, on GitLab); the failure was "
                     "read from the logs only (keep the build log and TRX/JUnit files as artifacts of "
                     "the failing job, `when: always`, to use them)")
    for name, patterns, matched in (("build_logs", inputs.build_logs, logs),
                                    ("test_results", inputs.test_results, results)):
        if usable and patterns and not matched:
            notes.append(f"{name} ({', '.join(patterns)}) matched no file in the artifacts of "
                         f"{_names(usable)}")
    outcomes = tuple(JobOutcome(job.name, job.conclusion, job.failure_reason) for job in failed)
    return Sources(tuple(traces + logs), tuple(results), tuple(notes), labels, outcomes)
