"""Canary secrets: distinct random values planted in one place each, then looked for everywhere
ci-agent writes. Every check is also recorded, so a run of this directory can print the table
"where planted x where looked for" (the SECURITY.md figure; see conftest.py).

A canary is found when its exact value (or its last 12 characters, so a truncated or partially
masked copy counts too) appears in a place's text.
"""

from __future__ import annotations

import secrets
import string
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Rows: where a canary was planted.
ENV_API_KEY = "env ANTHROPIC_API_KEY"
ENV_FORGE_TOKEN = "env forge token"
ENV_CUSTOM = "env DEPLOY_SECRET (custom)"
LOG_ENV_VALUE = "failing log (an env secret's value)"
LOG_TOKEN_SHAPE = "failing log (token shape only)"
REPO_FILE = "repo file read by read_file"
COMMENT = "PR comment / slash instruction"
ORIGIN_URL = "CI_JOB_TOKEN in the runner's origin URL"
SECRET_FILES = "secret files (.env*, secrets/, *.key)"
SECRET_FILES_CASE = "secret files, other case (.ENV, Secrets/, *.KEY)"
SECRET_LINK = "in-repo symlink to a secret file"
CREDENTIAL_FILES = "credential files (.netrc, docker config.json)"

# Columns: where it was looked for.
MODEL = "model requests"
FORGE = "forge bodies, titles, comments"
SUMMARY = "job summary"
ANNOTATIONS = "annotations"
OUTPUTS = "outputs / dotenv"
CONSOLE = "stdout / stderr"
GIT_CONFIG = ".git/config"
ERRORS = "error messages"
COMMITS = "pushed commits (messages + diffs)"
VERIFY_ENV = "verify command's environment"

ROWS = (ENV_API_KEY, ENV_FORGE_TOKEN, ENV_CUSTOM, LOG_ENV_VALUE, LOG_TOKEN_SHAPE, REPO_FILE, SECRET_FILES,
        SECRET_FILES_CASE, SECRET_LINK, CREDENTIAL_FILES, COMMENT, ORIGIN_URL)
COLUMNS = (MODEL, FORGE, SUMMARY, ANNOTATIONS, OUTPUTS, CONSOLE, GIT_CONFIG, ERRORS, COMMITS, VERIFY_ENV)

# A failing test that prints a custom secret and a registry token from its environment into the
# CI log (as a careless test does), failing only because of the sample's bug.
DEPLOY_TEST = (
    "import os\n\nfrom shop.ratings import average_rating\n\n\n"
    "def test_deploy_summary() -> None:\n"
    "    try:\n        average_rating([])\n    except ZeroDivisionError as exc:\n"
    "        raise AssertionError('deploy failed: DEPLOY_SECRET=' + os.environ.get('DEPLOY_SECRET', '') "
    "+ ' registry ' + os.environ.get('REGISTRY_LOGIN', '')) from exc\n")

_ALNUM = string.ascii_letters + string.digits


def alnum(n: int) -> str:
    return "".join(secrets.choice(_ALNUM) for _ in range(n))


def anthropic_key() -> str:
    return f"sk-ant-api03-{alnum(40)}"


def github_token() -> str:
    return f"ghp_{alnum(36)}"


def gitlab_token() -> str:
    return f"glpat-{alnum(20)}"


def custom_secret() -> str:
    """A value with no recognisable shape: only the environment rule can find it."""
    return f"dps{secrets.token_hex(12)}"


@dataclass(frozen=True)
class Canary:
    planted: str  # a row
    value: str

    def found_in(self, text: str) -> bool:
        return self.value in text or self.value[-12:] in text


# (mode, row, column) -> [checks, leaks]
_SEEN: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])


def scan(mode: str, canaries: list[Canary], places: dict[str, str]) -> list[tuple[str, str]]:
    """Every (planted, place) where a canary shows up; each check is recorded for the table."""
    leaks: list[tuple[str, str]] = []
    for canary in canaries:
        for column, text in places.items():
            assert column in COLUMNS, column
            cell = _SEEN[(mode, canary.planted, column)]
            cell[0] += 1
            if canary.found_in(text):
                cell[1] += 1
                leaks.append((canary.planted, column))
    return leaks


def table() -> str:
    """The Markdown figure: per row and column, `ok N` (N checks, no leak), `LEAK k/N`, or `-`."""
    modes = sorted({mode for mode, _, _ in _SEEN})
    lines = ["| planted \\ looked for | " + " | ".join(COLUMNS) + " |",
             "|---" * (len(COLUMNS) + 1) + "|"]
    for row in ROWS:
        cells = []
        for column in COLUMNS:
            checks = sum(_SEEN[(m, row, column)][0] for m in modes if (m, row, column) in _SEEN)
            leaks = sum(_SEEN[(m, row, column)][1] for m in modes if (m, row, column) in _SEEN)
            where = ",".join(m for m in modes if (m, row, column) in _SEEN)
            cells.append("-" if not checks else (f"LEAK {leaks}/{checks}" if leaks else f"ok {checks}")
                         + (f" ({where})" if checks else ""))
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def annotation_lines(stdout: str) -> str:
    """GitHub workflow-command lines that become annotations (::error, ::warning, ::notice)."""
    return "\n".join(line for line in stdout.splitlines()
                     if line.startswith(("::error", "::warning", "::notice")))


def console(stdout: str, stderr: str) -> str:
    """stdout without the `::add-mask::` lines (the runner consumes them: they must name the
    secrets, which is how they are masked), and stderr."""
    kept = [line for line in stdout.splitlines() if not line.startswith("::add-mask::")]
    return "\n".join(kept) + "\n" + stderr


def request_text(requests: list[Any]) -> str:
    """Recorded requests' bodies and headers, minus the credential headers they must carry."""
    private = {"x-api-key", "authorization", "private-token", "job-token"}
    return "\n".join(f"{r.method} {r.path} {r.body!s} "
                     f"{ {k: v for k, v in r.headers.items() if k.lower() not in private}!s}"
                     for r in requests)


def read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def env_probe(folder: Path, names: list[str]) -> tuple[str, Path]:
    """A verify command (pytest, through a wrapper) that records which of `names` its environment
    holds: the environment any code a model wrote runs with. `folder`: the `reachable_tmp` fixture
    (the sandbox user runs the script and writes the record)."""
    import shlex

    from tests.toolchain import PYTEST, PYTHON

    seen = folder / "verify-env.json"
    script = folder / "env_probe.py"
    script.write_text(
        "import json, os, subprocess, sys\n"
        f"json.dump({{n: os.environ.get(n, '') for n in {names!r}}}, open({str(seen)!r}, 'w'))\n"
        f"sys.exit(subprocess.call({shlex.split(PYTEST)!r}))\n")
    return f"{shlex.quote(PYTHON)} {shlex.quote(str(script))}", seen
