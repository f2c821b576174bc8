"""The only place that knows how untrusted code runs: every build / verify / test command
ci-agent starts (ci_agent/engine/collect.py) runs here, because after a patch it is code a model wrote.

As root (the image, GitLab's Docker executor) the command runs as the unprivileged user
`ci-agent-sandbox` (created when absent; a fixed numeric id when that fails) with no supplementary
groups, its own empty HOME and TMPDIR, in a copy of the work tree it owns (a fresh one-commit
repository: no remote, no config, no credentials of the real one), with an environment built from
an allow-list. While it runs, the real repository's git directory, the files its config includes
and ci-agent's HOME lose their group/other permissions. The kernel does the rest: another uid
can read neither /proc/<pid>/environ nor the memory of ci-agent or its ancestors. Result files
are read back from the copy without following links, and the copy is removed.

Without root there is nobody to drop to: the command runs in place as the current user with the
allow-listed environment, and `fix` and `doctor` say so.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import pwd
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_agent import proc, sandbox_fs
from ci_agent.errors import CiAgentError
from ci_agent.inputs import expand_inputs
from ci_agent.redact import is_secret_name

USER_NAME = "ci-agent-sandbox"
# When no named user can be made (no useradd, read-only /etc): an id nothing else uses.
FALLBACK_ID = 61874
RESULT_CAP_BYTES = 512 << 20  # one result file read back from the copy: plenty for any TRX

# Passed through unchanged when set (HOME, TMPDIR, USER and LOGNAME are the sandbox's own).
ALLOWED_NAMES = frozenset({
    "PATH", "LANG", "LANGUAGE", "TZ", "TERM", "CI", "GITHUB_ACTIONS", "GITLAB_CI", "NO_COLOR",
    "FORCE_COLOR", "COLUMNS", "SHELL",
    "JAVA_HOME", "GOROOT", "GOPATH", "GOFLAGS", "GOCACHE", "GOMODCACHE", "GOPROXY", "GOPRIVATE",
    "GONOSUMDB", "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "VIRTUAL_ENV", "NODE_PATH",
    "NODE_ENV", "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "PKG_CONFIG_PATH",
    "LD_LIBRARY_PATH", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
})
# Toolchain families: passed unless the name looks like a secret (NUGET_AUTH_TOKEN, ...).
ALLOWED_PREFIXES = ("LC_", "DOTNET_", "NUGET_", "MSBUILD", "PYTHON", "PIP_", "NPM_CONFIG_")
# Pointing an interpreter at ci-agent's own code or home is never the toolchain's business.
DENIED_NAMES = frozenset({"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE"})
# A proxy or index URL with user:password@ carries a credential whatever its name.
_USERINFO_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s@]*@")


def allowed_environment(environ: Mapping[str, str], own: Mapping[str, str]) -> dict[str, str]:
    """The command's environment: the allow-listed part of `environ` plus `own` (HOME, TMPDIR,
    USER, LOGNAME). Everything else (model key, forge and job tokens, a team's database password
    under any name) is absent: an allow-list, never a deny-list."""
    env: dict[str, str] = {}
    for name, value in environ.items():
        if name in DENIED_NAMES or _USERINFO_RE.search(value):
            continue
        if name in ALLOWED_NAMES or (name.upper().startswith(ALLOWED_PREFIXES) and not is_secret_name(name)):
            env[name] = value
    env.update(own)
    return env


@dataclass(frozen=True, slots=True)
class Account:
    uid: int
    gid: int
    name: str


def privilege_drop_possible() -> bool:
    return os.geteuid() == 0


def no_drop_note() -> str:
    """The one sentence `fix` prints and `doctor` shows when untrusted code runs as ourselves."""
    who = _current_user()
    return (f"verify runs as {who} without a privilege drop: ci-agent is not root, so the build / "
            "verify command gets only an allow-listed environment but can read whatever "
            f"{who} can read (this checkout's .git/config, HOME, /proc of ci-agent); run as root "
            "(the image does) to sandbox it as a separate user")


def drop_description() -> str:
    """What a run as root does, without creating anything (for `doctor`)."""
    found = _lookup()
    who = (f"user {USER_NAME} (uid {found.uid})" if found
           else f"user {USER_NAME} (created on first use)")
    return (f"build/verify commands run as {who} in a copy of the work tree, with an "
            "allow-listed environment; this checkout's .git is hidden from them while they run")


def _current_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.geteuid()}"


_account: Account | None = None


def account() -> Account:
    """The sandbox user, created on first use when absent (root only)."""
    global _account
    if _account is None:
        _account = _lookup() or _create() or _fallback()
    return _account


def _lookup() -> Account | None:
    try:
        entry = pwd.getpwnam(USER_NAME)
    except KeyError:
        return None
    return Account(entry.pw_uid, entry.pw_gid, USER_NAME)


def _create() -> Account | None:
    argv = ["useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
            "--shell", "/usr/sbin/nologin", USER_NAME]
    with contextlib.suppress(CiAgentError):
        proc.run(argv, timeout=60)
    return _lookup()


def _fallback() -> Account:
    uid = FALLBACK_ID
    while _taken(uid):
        uid += 1
    return Account(uid, uid, USER_NAME)


def _taken(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class Ran:
    result: proc.Result
    directory: Path  # where the command ran: the root its output's paths are relative to
    results: list[str]  # result files it wrote that match the globs, safe for us to read
    sandboxed: bool


@contextlib.contextmanager
def run(argv: Sequence[str], workdir: Path, *, timeout: float,
        result_globs: Sequence[str] = ()) -> Iterator[Ran]:
    """Run untrusted `argv` for `workdir`; the yielded paths live until the block ends."""
    if not privilege_drop_possible():
        own = {k: os.environ[k] for k in ("HOME", "TMPDIR", "USER", "LOGNAME") if k in os.environ}
        result = proc.run(list(argv), cwd=workdir, timeout=timeout,
                          env=allowed_environment(os.environ, own))
        yield Ran(result, workdir, _in_place(workdir, result_globs), False)
        return
    who = account()
    base = Path(tempfile.mkdtemp(prefix="ci-agent-sandbox-", dir=_sandbox_parent()))
    harvested = Path(tempfile.mkdtemp(prefix="ci-agent-results-"))
    try:
        work, home, tmp = base / "work", base / "home", base / "tmp"
        sandbox_fs.copy_work_tree(workdir, work)
        home.mkdir(mode=0o700)
        tmp.mkdir(mode=0o700)
        sandbox_fs.snapshot_repository(work, home, timeout)
        sandbox_fs.chown_tree(base, who.uid, who.gid)
        own = {"HOME": str(home), "TMPDIR": str(tmp), "USER": who.name, "LOGNAME": who.name}
        private = sandbox_fs.private_paths(workdir, os.environ.get("HOME"))
        with sandbox_fs.hidden(private, keep_reachable=base):
            result = proc.run(list(argv), cwd=work, timeout=timeout,
                              env=allowed_environment(os.environ, own),
                              user=who.uid, group=who.gid, umask=0o077)
        results = sandbox_fs.harvest(work, [g for g in result_globs if not os.path.isabs(g)],
                                     harvested, RESULT_CAP_BYTES)
        yield Ran(result, work, results, True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(harvested, ignore_errors=True)


def _sandbox_parent() -> str:
    """Where the copy goes: the temp folder when another user can get through to it (pytest's
    and some runners' are 0700 roots' folders), else /tmp."""
    preferred = Path(tempfile.gettempdir())
    return str(preferred) if sandbox_fs.reachable_by_others(preferred) else "/tmp"


def _in_place(workdir: Path, globs: Sequence[str]) -> list[str]:
    relative = [str(workdir / g) for g in globs if not os.path.isabs(g)]
    return expand_inputs(relative, sys.stderr)
