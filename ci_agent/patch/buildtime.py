"""Edits to code that runs at build or test time: allowed (fixing a build often means fixing
its scripts), but flagged, so the fix PR/MR carries a label and a callout at the top of its
body and a reviewer reads those files first.

The list: files a build tool executes as code (conftest.py, setup.py, noxfile.py, Makefiles,
CMake, Gradle, build.rs, Directory.Build.*), MSBuild project files whose added lines define
targets, tasks or `Exec` commands, and package.json (its scripts run on install and test, and a
new dependency brings install scripts of its own). The verify command of the PR's own CI runs
them, so they are the one place a patch's code runs with the pipeline's privileges.
"""

from __future__ import annotations

import re

from ci_agent.patch import lines
from ci_agent.patch.diff import FilePatch, Patch

_ALWAYS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(^|/)conftest\.py$"), "pytest imports it before any test"),
    (re.compile(r"(^|/)(setup\.py|noxfile\.py)$"), "the Python build runs it"),
    (re.compile(r"(^|/)(GNUmakefile|makefile|Makefile)$|\.mk$"), "make runs its recipes"),
    (re.compile(r"(^|/)CMakeLists\.txt$|\.cmake$", re.I), "CMake runs it"),
    (re.compile(r"(^|/)(build|settings)\.gradle(\.kts)?$"), "Gradle runs it"),
    (re.compile(r"(^|/)build\.rs$"), "cargo runs it before compiling"),
    (re.compile(r"(^|/)Directory\.Build\.[^/]+$", re.I), "MSBuild imports it into every project"),
    (re.compile(r"(^|/)package\.json$"), "npm runs its scripts (and new dependencies' install scripts)"),
)
_MSBUILD = re.compile(r"\.(csproj|vbproj|fsproj|props|targets)$", re.I)
_MSBUILD_CODE = re.compile(r"<\s*(Exec|UsingTask|Target|Import|Task)\b|\b(Before|After)Targets\s*=|"
                           r"TaskFactory", re.I)


def _why(fp: FilePatch) -> str | None:
    path = fp.path
    for pattern, why in _ALWAYS:
        if pattern.search(path):
            return why
    if _MSBUILD.search(path) and lines.first(lines.added(fp), _MSBUILD_CODE) is not None:
        return "it adds MSBuild targets, tasks or Exec commands that run during the build"
    return None


def build_changes(patch: Patch) -> tuple[str, ...]:
    """`path: why` for each file of `patch` whose change runs at build time."""
    out: list[str] = []
    for fp in patch.files:
        if fp.new_path is None or fp.binary:
            continue
        why = _why(fp)
        if why is not None:
            out.append(f"{fp.path}: {why}")
    return tuple(out)
