"""One fixbench case on disk: load and check `case.json`, apply its diffs, run its command.

Shared by `capture.py` (records a case's outputs), `run.py` (the harness) and the suite's
well-formedness test. The format is `bench/fixbench/README.md` ("Case format").
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

ECOSYSTEMS = ("python", "c", "typescript", "rust", "go")
BREAKAGE_KINDS = (
    "rename-half-done", "changed-signature", "wrong-condition", "missing-import",
    "warning-as-error", "assertion-after-refactor", "off-by-one", "wrong-type",
    "null-handling", "missing-case", "wrong-default", "api-misuse",
)
# The keys of case.json "outputs" are ci-agent's input kinds (the CLI's --build-log/--junit/--trx).
OUTPUT_KINDS = ("build_log", "junit", "trx")
REQUIRED_FIELDS = ("id", "ecosystem", "breakage", "description", "break_message", "command", "outputs")
CASES_DIR = Path(__file__).resolve().parent / "cases"


class CaseError(ValueError):
    """A case folder that does not follow the format (the message names what is wrong)."""


@dataclass(frozen=True)
class Case:
    root: Path
    id: str
    ecosystem: str
    breakage: str
    description: str
    break_message: str
    command: tuple[str, ...]
    outputs: dict[str, tuple[str, ...]]

    @property
    def before(self) -> Path:
        return self.root / "before"

    @property
    def break_diff(self) -> Path:
        return self.root / "break.diff"

    @property
    def fix_diff(self) -> Path:
        return self.root / "fix.diff"

    @property
    def outputs_dir(self) -> Path:
        return self.root / "outputs"

    def output_files(self, kind: str) -> list[Path]:
        return [self.outputs_dir / name for name in self.outputs.get(kind, ())]


def _str_list(value: object, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise CaseError(f"{what} must be a list of non-empty strings")
    return tuple(value)


def _safe_relative(name: str, what: str) -> str:
    """An output name is a path under the work dir and outputs/: no absolute path, no `..`."""
    parts = Path(name).parts
    if Path(name).is_absolute() or ".." in parts or not parts:
        raise CaseError(f"{what}: {name!r} is not a relative path inside the case")
    return name


def parse_case(root: Path, data: object) -> Case:
    """Check case.json's content against the format; the folder name is the id."""
    if not isinstance(data, dict):
        raise CaseError("case.json must hold an object")
    missing = [name for name in REQUIRED_FIELDS if name not in data]
    if missing:
        raise CaseError(f"case.json lacks {', '.join(missing)}")
    for name in ("id", "ecosystem", "breakage", "description", "break_message"):
        if not isinstance(data[name], str) or not data[name].strip():
            raise CaseError(f"{name} must be a non-empty string")
    if data["id"] != root.name:
        raise CaseError(f"id {data['id']!r} is not the folder name {root.name!r}")
    if data["ecosystem"] not in ECOSYSTEMS:
        raise CaseError(f"ecosystem {data['ecosystem']!r} is not one of {', '.join(ECOSYSTEMS)}")
    if not root.name.startswith(data["ecosystem"] + "-"):
        raise CaseError(f"folder {root.name!r} does not start with its ecosystem {data['ecosystem']!r}")
    if data["breakage"] not in BREAKAGE_KINDS:
        raise CaseError(f"breakage {data['breakage']!r} is not one of the format's kinds")
    command = _str_list(data["command"], "command")
    raw_outputs = data["outputs"]
    if not isinstance(raw_outputs, dict) or not raw_outputs:
        raise CaseError("outputs must be a non-empty object")
    outputs: dict[str, tuple[str, ...]] = {}
    for kind, names in raw_outputs.items():
        if kind not in OUTPUT_KINDS:
            raise CaseError(f"outputs key {kind!r} is not one of {', '.join(OUTPUT_KINDS)}")
        outputs[kind] = tuple(_safe_relative(name, f"outputs.{kind}") for name in _str_list(names, kind))
    if len(outputs.get("build_log", ())) > 1:
        raise CaseError("outputs.build_log names one file (the command's combined stdout+stderr)")
    return Case(root, data["id"], data["ecosystem"], data["breakage"], data["description"],
                data["break_message"], command, outputs)


def load_case(root: Path) -> Case:
    root = root.resolve()
    for name in ("case.json", "break.diff", "fix.diff"):
        if not (root / name).is_file():
            raise CaseError(f"{root.name}: {name} is missing")
    if not (root / "before").is_dir():
        raise CaseError(f"{root.name}: before/ is missing")
    try:
        data = json.loads((root / "case.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CaseError(f"{root.name}: case.json is not JSON: {exc}") from exc
    try:
        return parse_case(root, data)
    except CaseError as exc:
        raise CaseError(f"{root.name}: {exc}") from exc


def digest_of(paths: list[Path], root: Path) -> str:
    """sha256 over the files' names (relative to root) and bytes: a row measured for this exact
    input can be reused (run.py --reuse)."""
    sha = hashlib.sha256()
    for path in sorted(paths):
        sha.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return sha.hexdigest()[:16]


def case_digest(case: Case) -> str:
    return digest_of([path for path in case.root.rglob("*") if path.is_file()], case.root)


def committed_cases(cases_dir: Path = CASES_DIR) -> list[Path]:
    """Every case folder (a folder holding case.json), sorted by name."""
    if not cases_dir.is_dir():
        return []
    return sorted(path.parent for path in cases_dir.glob("*/case.json"))


def git_env(workdir: Path) -> dict[str, str]:
    """git run in `workdir` never climbs into a surrounding repository nor reads the user's config."""
    env = dict(os.environ)
    env["GIT_CEILING_DIRECTORIES"] = str(workdir.resolve().parent)
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_CONFIG_GLOBAL"] = os.devnull
    return env


def apply_diff(diff: Path, workdir: Path, *, check_only: bool = False) -> None:
    """`git apply` (strict: no fuzz, whitespace as written); CaseError with git's message if it fails."""
    argv = ["git", "apply", *(["--check"] if check_only else []), str(diff.resolve())]
    result = subprocess.run(argv, cwd=workdir, env=git_env(workdir), capture_output=True, text=True,
                            check=False)
    if result.returncode != 0:
        raise CaseError(f"{diff.name} does not apply: {result.stderr.strip()}")


def copy_tree(source: Path, target: Path) -> None:
    shutil.copytree(source, target, symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", "*.o"))


def materialise(case: Case, workdir: Path, *, broken: bool, fixed: bool = False) -> Path:
    """before/ copied to `workdir`, then break.diff (and fix.diff) applied: the tree at that stage."""
    copy_tree(case.before, workdir)
    if broken or fixed:
        apply_diff(case.break_diff, workdir)
    if fixed:
        apply_diff(case.fix_diff, workdir)
    return workdir


@functools.cache
def _can_unshare_network() -> bool:
    try:
        probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True, check=False, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def command_env() -> dict[str, str]:
    """The case's command sees a CI-like environment, never our API key."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("ANTHROPIC_", "CI_AGENT_", "PYTEST_", "GITHUB_", "GITLAB_"))}
    env.update({"CI": "true", "PYTHONDONTWRITEBYTECODE": "1", "LC_ALL": "C.UTF-8"})
    return env


@dataclass(frozen=True)
class RunResult:
    exit_code: int
    output: bytes  # stdout and stderr interleaved as the tool wrote them
    isolated: bool  # ran without network (an unshared network namespace)


def run_command(command: tuple[str, ...], workdir: Path, timeout: float) -> RunResult:
    """Run the case's command in `workdir`, without network when the kernel allows it."""
    isolated = _can_unshare_network()
    argv = (["unshare", "-rn", "--"] if isolated else []) + list(command)
    try:
        result = subprocess.run(argv, cwd=workdir, env=command_env(), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                                check=False)
    except subprocess.TimeoutExpired as exc:
        raise CaseError(f"{' '.join(command)} timed out after {timeout:g} s") from exc
    return RunResult(result.returncode, result.stdout, isolated)
