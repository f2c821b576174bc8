"""Seed corpora for the fuzz targets, built from real files.

- logs and XML results: every file under `../shared/fixtures/` and `tests/fixtures/` (the
  `.expected.json` oracles excepted), sorted into XML by root element and logs by the rest,
  each cut to its first SEED_BYTES (the mutators splice and repeat to grow past that);
- diffs: real `git diff` output of edits made with git in a temp repository of real source files
  (this repository's own modules), so the patch pipeline is fuzzed against the tree it came from;
- markers, events, note hooks and environments: made with ci-agent's own writers
  (`render_marker`) and the scenario harnesses' event builders (`tests/github_scenarios/fake_site`),
  which follow the documented payload shapes. No real webhook payload is in the fixtures.
"""

from __future__ import annotations

import json
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

from ci_agent.engine.forge import status_body
from ci_agent.engine.marker import ForgeState
from ci_agent.engine.marker_entries import Proposed, Tried
from ci_agent.parsers import xml_root_name
from tests.conftest import REPO_ROOT, SHARED_FIXTURES

SEED_BYTES = 48 * 1024
LOCAL_FIXTURES = REPO_ROOT / "tests" / "fixtures"
_SKIP_SUFFIXES = (".expected.json", ".md", ".py")
IDENTITY = ["-c", "user.name=Fuzz", "-c", "user.email=fuzz@example.com", "-c", "commit.gpgsign=false"]


def fixture_files() -> list[Path]:
    roots = [r for r in (SHARED_FIXTURES, LOCAL_FIXTURES) if r.is_dir()]
    files = [p for r in roots for p in r.rglob("*") if p.is_file()]
    return sorted(p for p in files if not p.name.endswith(_SKIP_SUFFIXES))


@cache
def _heads() -> tuple[tuple[str, bytes], ...]:
    out = []
    for path in fixture_files():
        with open(path, "rb") as fh:
            out.append((str(path), fh.read(SEED_BYTES)))
    return tuple(out)


@cache
def xml_seeds() -> dict[str, tuple[bytes, ...]]:
    """Root element local name -> seed heads (a cut XML file is itself a good hostile input)."""
    found: dict[str, list[bytes]] = {}
    for _, head in _heads():
        root = xml_root_name(head)
        if root is not None:
            found.setdefault(root, []).append(head)
    return {k: tuple(v) for k, v in found.items()}


@cache
def log_seeds() -> tuple[bytes, ...]:
    return tuple(head for _, head in _heads() if xml_root_name(head) is None)


def xml_seeds_for(root_names: frozenset[str]) -> tuple[bytes, ...]:
    seeds = [s for name, group in xml_seeds().items() if name in root_names for s in group]
    return tuple(seeds) or tuple(s for group in xml_seeds().values() for s in group)


# --- a real repository and real diffs ---------------------------------------------------------------

REPO_FILES = ("ci_agent/redact.py", "ci_agent/engine/budget.py", "ci_agent/slash/help.py", "README.md")


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *IDENTITY, *args], cwd=repo, capture_output=True, check=True)
    return done.stdout.decode("utf-8", "surrogateescape")


def make_repo(where: Path) -> Path:
    """A committed repository holding real source files, under the names they have here."""
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(where)], check=True)
    for rel in REPO_FILES:
        target = where / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((REPO_ROOT / rel).read_bytes())
    (where / "tests").mkdir(exist_ok=True)
    (where / "tests" / "test_redact.py").write_bytes((REPO_ROOT / "tests" / "test_redact.py").read_bytes())
    _git(where, "add", "-A")
    _git(where, "commit", "-q", "-m", "init")
    return where


def _edits() -> list[tuple[str, str]]:
    """(kind, path) of the edits made to produce diffs: modify, add, delete, rename, deny-listed."""
    return [("modify", "ci_agent/redact.py"), ("modify", "ci_agent/engine/budget.py"),
            ("add", "ci_agent/new_mod.py"), ("delete", "ci_agent/slash/help.py"), ("rename", "README.md"),
            ("modify", "tests/test_redact.py"),
            ("add", ".github/workflows/ci.yml")]


def real_diffs(repo: Path) -> tuple[str, ...]:
    """`git diff` of each edit (made, diffed, then undone), so every seed applies to `repo`."""
    diffs = []
    for kind, rel in _edits():
        path = repo / rel
        if kind == "modify":
            lines = path.read_text().splitlines(keepends=True)
            for i in range(3, len(lines), max(7, len(lines) // 6)):
                lines[i] = lines[i].replace("return", "return  # fuzz") if "return" in lines[i] \
                    else lines[i].rstrip("\n") + "  # edited\n"
            path.write_text("".join(lines))
        elif kind == "add":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("def added() -> int:\n    return 1\n")
            _git(repo, "add", "-N", rel)
        elif kind == "delete":
            _git(repo, "rm", "-q", rel)
        else:
            _git(repo, "mv", rel, rel + ".moved")
        diffs.append(_git(repo, "diff", "HEAD", "-M"))
        _git(repo, "reset", "-q", "--hard", "HEAD")
        _git(repo, "clean", "-qfd")
    return tuple(d for d in diffs if d)


def reset(repo: Path) -> None:
    _git(repo, "reset", "-q", "--hard", "HEAD")
    _git(repo, "clean", "-qfdx")


def tree_state(repo: Path) -> str:
    """What `review` must never change: HEAD, the index and the work tree."""
    return _git(repo, "rev-parse", "HEAD") + _git(repo, "status", "--porcelain", "--ignored")


# --- markers, events, hooks -------------------------------------------------------------------------

def _states() -> list[ForgeState]:
    tried = Tried("a" * 40, 1, "fp1", "fp2", "123", "CS0103 in Calc.cs")
    return [
        ForgeState(),
        ForgeState(fix_branch="ci-agent/fix/main", source_branch="main", results={"r1": "failed"},
                   after={"r1": "abc"}, runs={"9": "counted"}, resets=(("green", "b" * 40),), tokens=1234,
                   tried=(tried,), handled=(5, 6), command_times=(1.5, 2.0)),
        ForgeState(fix_branch="ci-agent/fix/x", escalated=True, escalation_posted=True, fixed="c" * 40,
                   proposed=Proposed("d" * 64, "e" * 40, "feature/x", 7, "fix <b>&</b> -->", "fp")),
    ]


def marker_seeds() -> tuple[bytes, ...]:
    bodies = [status_body(s.to_json(), "### ci-agent\nAttempt 1 of 3 <!-- x --> `code`") for s in _states()]
    return tuple(b.encode() for b in bodies)


def github_event_seeds() -> tuple[bytes, ...]:
    from tests.github_scenarios.fake_site import pull_request_event, push_event, workflow_run_event

    run = {"id": 42, "url": "https://api.github.com/repos/o/r/actions/runs/42", "name": "CI",
           "head_branch": "feature/x", "head_sha": "f" * 40, "run_attempt": 1,
           "status": "completed", "conclusion": "failure", "event": "pull_request",
           "pull_requests": [{"number": 3}], "actor": {"login": "dev"}, "triggering_actor": {"login": "dev"},
           "head_repository": {"full_name": "o/r"}}
    events: list[dict[str, Any]] = [
        push_event("o/r", "feature/x", "0" * 40, "f" * 40, "dev"),
        pull_request_event("o/r", 3, "o/r", "feature/x", "f" * 40, "main", "0" * 40, "dev"),
        workflow_run_event("o/r", run),
        {"action": "created", "issue": {"number": 3, "pull_request": {"url": "u"}},
         "comment": {"id": 77, "body": "/ci-agent fix the null check",
                     "user": {"login": "dev", "type": "User"}, "author_association": "MEMBER"}},
    ]
    return tuple(json.dumps(e).encode() for e in events)


def note_hook_seeds() -> tuple[bytes, ...]:
    base: dict[str, Any] = {
        "object_kind": "note", "event_type": "note", "user": {"id": 1, "username": "dev"},
        "project": {"id": 5, "path_with_namespace": "group/app"},
        "object_attributes": {"id": 900, "note": "/ci-agent fix please", "noteable_type": "MergeRequest",
                              "action": "create", "system": False},
        "merge_request": {"iid": 3, "source_branch": "feature/x"},
    }
    issue = json.loads(json.dumps(base))
    issue["object_attributes"]["noteable_type"] = "Issue"
    return tuple(json.dumps(x).encode() for x in (base, issue))


GITLAB_ENV_KEYS = ("CI_SERVER_URL", "CI_PROJECT_PATH", "CI_PROJECT_ID", "CI_PIPELINE_ID", "CI_AGENT_TRIGGER",
                   "CI_COMMIT_SHA", "CI_COMMIT_BRANCH", "CI_COMMIT_REF_NAME", "CI_COMMIT_TAG",
                   "CI_MERGE_REQUEST_IID", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME",
                   "CI_MERGE_REQUEST_SOURCE_PROJECT_ID", "GITLAB_USER_LOGIN", "CI_AGENT_INPUT_MODE",
                   "CI_AGENT_INPUT_MAX_ATTEMPTS", "CI_AGENT_INPUT_BUILD_LOGS", "CI_AGENT_INPUT_DRAFT")


def gitlab_env_seeds() -> tuple[bytes, ...]:
    values = [
        ("https://gitlab.example.com", "group/app", "5", "77", "on_failure", "f" * 40, "feature/x",
         "feature/x", "", "", "", "", "dev", "pr", "3", "build.log", "true"),
        ("http://gl.local:8080/", "g/sub/app", "5", "78", "on_success", "f" * 40, "", "feature/x", "", "12",
         "ci-agent/fix/feature/x", "5", "dev", "push", "10", "a.log\nb.log", "false"),
        ("https://gitlab.example.com", "group/app", "5", "79", "", "f" * 40, "", "v1.0", "v1.0", "", "", "",
         "", "", "", "", ""),
    ]
    return tuple("\x00".join(v).encode() for v in values)
