"""Sample repositories for the scenarios: real git repos (with a bare origin) built in tmp_path.

Templates live in `samples/<name>/` with a `.tmpl` suffix, so pytest, ruff and mypy never take
them for this project's own code. Each sample's history is realistic: a first commit where the
code works, then the commit that broke it, pushed to a bare `origin` (the failing commit's diff
is context ci-agent may send). Diffs the scripted model "writes" are computed from the template
text with difflib, the way a model writes them (`--- a/path` / `+++ b/path`, 3 context lines).
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
import stat
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path

from tests.conftest import SHARED_FIXTURES
from tests.toolchain import PYTEST as TOOLCHAIN_PYTEST
from tests.toolchain import PYTHON as TOOLCHAIN_PYTHON

SAMPLES = Path(__file__).resolve().parent / "samples"
IDENTITY = {"GIT_AUTHOR_NAME": "Dev Person", "GIT_AUTHOR_EMAIL": "dev@example.com",
            "GIT_COMMITTER_NAME": "Dev Person", "GIT_COMMITTER_EMAIL": "dev@example.com"}
# A real `dotnet build` console log (JAIMES-AF, see the shared fixtures' PROVENANCE): one
# CS4014 error in `JAIMES AF.Web/Components/Shared/MetricsGrid.razor(49,90)`, a path with spaces.
DOTNET_LOG = SHARED_FIXTURES / "dotnet-logs" / "warnaserror-cs4014-razor-spaces.log"


@dataclass(frozen=True)
class Edit:
    """Replace `old` (exactly once) by `new` in `path`."""

    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Sample:
    name: str
    templates: tuple[str, ...]  # folders under samples/, later ones overlay earlier ones
    bug: Edit  # applied to the working code, as the commit that broke it
    fix: Edit  # the correct fix of the broken code
    wrong: dict[str, Edit] = field(default_factory=dict)  # fixes that do not fix it
    command: str = ""
    verify: str = ""
    bug_message: str = "the commit that broke it"


PY = shlex.quote(TOOLCHAIN_PYTHON)
PYTEST = TOOLCHAIN_PYTEST  # a Python the sandboxed verify user can run (tests/toolchain.py)

_MEAN = "    return sum(ratings) / len(ratings)\n"
_GUARDED_MEAN = "    if not ratings:\n        return 0.0\n" + _MEAN
PYTHON = Sample(
    name="python",
    templates=("python_pkg",),
    bug=Edit("shop/ratings.py", _GUARDED_MEAN, _MEAN),
    fix=Edit("shop/ratings.py", _MEAN, _GUARDED_MEAN),
    wrong={
        # integer division: the empty case passes, the averages now fail
        "floor": Edit("shop/ratings.py", "    return sum(ratings) / len(ratings)\n",
                      "    return sum(ratings) // max(len(ratings), 1)\n"),
        # the same failing tests as "floor" (no progress)
        "floor_float": Edit("shop/ratings.py", "    return sum(ratings) / len(ratings)\n",
                            "    return float(sum(ratings) // max(len(ratings), 1))\n"),
        # None for no ratings: the empty-product tests still fail
        "none": Edit("shop/ratings.py", "    return sum(ratings) / len(ratings)\n",
                     "    return sum(ratings) / len(ratings) if ratings else None\n"),
    },
    command=PYTEST,
    verify=PYTEST,
    bug_message="ratings: simplify average_rating",
)

# The Python sample with an overlay (a canary file, hostile content) and no wrong fixes.
PYTHON_CANARY = replace(PYTHON, name="python-canary", templates=("python_pkg", "python_canary"), wrong={})
PYTHON_HOSTILE = replace(PYTHON, name="python-hostile", templates=("python_pkg", "python_hostile"), wrong={})

C = Sample(
    name="c",
    templates=("c_prog",),
    bug=Edit("src/stats.c", "    return total;\n}\n\nint max_of", "    return totl;\n}\n\nint max_of"),
    fix=Edit("src/stats.c", "    return totl;\n", "    return total;\n"),
    wrong={"zero": Edit("src/stats.c", "    return totl;\n", "    return 0;\n")},
    command="make app",
    verify="make check",
    bug_message="stats: tidy sum",
)

DOTNET = Sample(
    name="dotnet",
    templates=("dotnet_razor",),
    bug=Edit("JAIMES AF.Web/Components/Shared/MetricsGrid.razor",
             "_refreshing = true; await LoadMetricsAsync(); })\">Refresh",
             "_refreshing = true; LoadMetricsAsync(); })\">Refresh"),
    fix=Edit("JAIMES AF.Web/Components/Shared/MetricsGrid.razor",
             "_refreshing = true; LoadMetricsAsync(); })\">Refresh",
             "_refreshing = true; await LoadMetricsAsync(); })\">Refresh"),
    command="dotnet build",
    verify="dotnet build",
    bug_message="MetricsGrid: refresh button",
)
# What the shim looks for: the refresh handler's call without `await` (the CS4014 of the log).
DOTNET_BUG_REGEX = r"_refreshing = true; LoadMetricsAsync\(\);"


def template_files(sample: Sample) -> dict[str, str]:
    files: dict[str, str] = {}
    for folder in sample.templates:
        root = SAMPLES / folder
        for path in sorted(root.rglob("*.tmpl")):
            files[path.relative_to(root).as_posix().removesuffix(".tmpl")] = path.read_text(encoding="utf-8")
    return files


def apply_edit(text: str, edit: Edit) -> str:
    assert text.count(edit.old) == 1, f"{edit.path}: {edit.old!r} must occur exactly once"
    return text.replace(edit.old, edit.new)


def broken_files(sample: Sample, substitutions: dict[str, str] | None = None) -> dict[str, str]:
    """The sample as it is after the breaking commit: the templates hold that state."""
    files = template_files(sample)
    for key, value in (substitutions or {}).items():
        files = {path: text.replace("{{" + key + "}}", value) for path, text in files.items()}
    return files


def edit_diff(files: dict[str, str], edit: Edit) -> str:
    """The unified diff of `edit` against `files`, as a model would write it."""
    before = files[edit.path]
    after = apply_edit(before, edit)
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        f"a/{edit.path}", f"b/{edit.path}", n=3))


def git(cwd: Path, *args: str, check: bool = True) -> str:
    env = {**os.environ, **IDENTITY, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, text=True, capture_output=True, check=False)
    if check:
        assert done.returncode == 0, f"git {' '.join(args)} failed in {cwd}: {done.stderr}"
    return done.stdout


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")


@dataclass
class SampleRepo:
    """The user's clone of a sample (`path`), its bare `origin`, and the broken files."""

    sample: Sample
    path: Path
    origin: Path
    files: dict[str, str]

    def git(self, *args: str, check: bool = True) -> str:
        return git(self.path, *args, check=check)

    def diff(self, edit: Edit) -> str:
        return edit_diff(self.files, edit)


def create_sample_repo(tmp_path: Path, sample: Sample, substitutions: dict[str, str] | None = None
                       ) -> SampleRepo:
    """A bare origin and the user's clone: the working commit, then the one that broke it."""
    broken = broken_files(sample, substitutions)
    working = dict(broken)
    working[sample.bug.path] = apply_edit(broken[sample.bug.path], Edit(sample.bug.path, sample.bug.new,
                                                                        sample.bug.old))
    origin = tmp_path / "origin.git"
    path = tmp_path / "work" / sample.name
    path.mkdir(parents=True)
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Dev Person")
    git(path, "config", "user.email", "dev@example.com")
    git(path, "config", "commit.gpgsign", "false")
    _write(path, working)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial version")
    _write(path, broken)
    git(path, "commit", "-q", "-am", sample.bug_message)
    git(path, "remote", "add", "origin", str(origin))
    git(path, "push", "-q", "-u", "origin", "main")
    return SampleRepo(sample, path, origin, broken)


@dataclass(frozen=True)
class WorkingCopy:
    """What a user would notice if a tool touched their checkout."""

    head: str
    branch: str
    status: str
    index: bytes
    files: dict[str, bytes]
    stashes: str


def working_copy(repo: Path) -> WorkingCopy:
    files = {p.relative_to(repo).as_posix(): p.read_bytes() for p in sorted(repo.rglob("*"))
             if p.is_file() and ".git" not in p.relative_to(repo).parts}
    return WorkingCopy(
        head=git(repo, "rev-parse", "HEAD").strip(),
        branch=git(repo, "symbolic-ref", "--short", "HEAD").strip(),
        status=git(repo, "status", "--porcelain=v1", "--untracked-files=all"),
        index=(repo / ".git" / "index").read_bytes(),
        files=files,
        stashes=git(repo, "stash", "list"),
    )


def install_dotnet_shim(bin_dir: Path) -> Path:
    """`bin_dir/dotnet`: the replay shim, run by the toolchain's interpreter; returns the calls log.
    `bin_dir` must be reachable by the sandbox user (the `reachable_tmp` fixture); the replayed log
    is copied beside the shim for the same reason."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    calls = bin_dir / "dotnet-calls.jsonl"
    calls.touch()
    calls.chmod(0o666)  # the sandboxed build user appends to it
    shim = bin_dir / "dotnet"
    source = (SAMPLES / "dotnet_shim.py").read_text(encoding="utf-8")
    shim.write_text(f"#!{TOOLCHAIN_PYTHON}\n{source}", encoding="utf-8")
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    config = {"file": DOTNET.fix.path, "bug_regex": DOTNET_BUG_REGEX,
              "failed_log": str(_beside(bin_dir, DOTNET_LOG)), "calls": str(calls)}
    (bin_dir / "dotnet-shim.json").write_text(json.dumps(config), encoding="utf-8")
    return calls


def _beside(folder: Path, source: Path) -> Path:
    copy = folder / source.name
    copy.write_bytes(source.read_bytes())
    return copy


def shim_calls(calls: Path) -> list[dict[str, object]]:
    if not calls.exists():
        return []
    return [json.loads(line) for line in calls.read_text(encoding="utf-8").splitlines() if line]


# Third-party pytest plugins of this environment load in ~1 s per run and the samples need none.
QUIET_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def run(argv: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run a sample's build or verify command the way ci-agent does: argv, no shell."""
    return subprocess.run(shlex.split(argv), cwd=cwd, env={**(env or os.environ), **QUIET_ENV}, text=True,
                          capture_output=True, check=False, timeout=120)
