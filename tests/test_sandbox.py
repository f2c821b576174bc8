"""ci_agent/sandbox.py: how untrusted build/verify code runs. As root: another uid, its own HOME,
a copy of the work tree (a fresh one-commit repository), an allow-listed environment, the real
.git hidden while it runs, results read back without following links. Not as root: in place, the
allow-listed environment, and one sentence saying so (fix, doctor)."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import time
from pathlib import Path

import pytest

from ci_agent import sandbox
from ci_agent.cli.doctor import WARN, check_sandbox
from ci_agent.errors import CiAgentError
from ci_agent.sandbox_fs import glob_regex
from tests.toolchain import PYTHON

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the privilege drop needs root (CI runs as root)")


def _repo(root: Path) -> Path:
    repo = root / "checkout"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "a.txt").write_text("hello\n")
    subprocess.run(["git", "-C", str(repo), "add", "a.txt"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm",
                    "one"], check=True)
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin",
                    "https://x-access-token:ghs_canaryCANARYcanary@example.com/o/r.git"], check=True)
    return repo


def _py(code: str) -> list[str]:
    return [PYTHON, "-c", code]


# --------------------------------------------------------------------------- the environment


def test_the_environment_is_an_allow_list() -> None:
    environ = {
        "PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "TZ": "UTC", "CI": "true",
        "DOTNET_ROOT": "/usr/share/dotnet", "DOTNET_CLI_TELEMETRY_OPTOUT": "1", "NUGET_PACKAGES": "/n",
        "MSBUILDDISABLENODEREUSE": "1", "JAVA_HOME": "/jdk", "PYTHONUNBUFFERED": "1",
        # everything below is a canary: it must never arrive
        "ANTHROPIC_API_KEY": "c1", "GITHUB_TOKEN": "c2", "INPUT_GITHUB_TOKEN": "c3",
        "CI_AGENT_GITLAB_TOKEN": "c4", "CI_JOB_TOKEN": "c5", "CI_REGISTRY_PASSWORD": "c6",
        "MY_DB_PASSWORD": "c7", "DEPLOY": "c8", "NUGET_AUTH_TOKEN": "c9", "DOTNET_SECRET_KEY": "c10",
        "PYTHONPATH": "/root/ci-agent", "PYTHONHOME": "/root/.pyenv", "HTTPS_PROXY": "http://u:c11@proxy:3128",
        "PIP_INDEX_URL": "https://u:c12@pypi.example.com/simple", "GITHUB_EVENT_PATH": "/github/event.json",
        "HOME": "/root", "TMPDIR": "/root/tmp", "SSH_AUTH_SOCK": "/tmp/agent.sock",
    }
    env = sandbox.allowed_environment(environ, {"HOME": "/sandbox/home", "TMPDIR": "/sandbox/tmp"})
    assert env == {
        "PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "TZ": "UTC", "CI": "true",
        "DOTNET_ROOT": "/usr/share/dotnet", "DOTNET_CLI_TELEMETRY_OPTOUT": "1", "NUGET_PACKAGES": "/n",
        "MSBUILDDISABLENODEREUSE": "1", "JAVA_HOME": "/jdk", "PYTHONUNBUFFERED": "1",
        "HOME": "/sandbox/home", "TMPDIR": "/sandbox/tmp",
    }


# --------------------------------------------------------------------------- globs


@pytest.mark.parametrize(("pattern", "path", "matches"), [
    ("**/*.trx", "a.trx", True), ("**/*.trx", "x/y/a.trx", True), ("**/*.trx", "x/a.xml", False),
    ("test-results/*.xml", "test-results/j.xml", True), ("test-results/*.xml", "test-results/a/j.xml", False),
    ("./out/junit?.xml", "out/junit1.xml", True), ("out/[!x]*.xml", "out/a.xml", True),
    ("out/[!x]*.xml", "out/x.xml", False), ("**/junit*.xml", "deep/er/junit-1.xml", True),
    ("a.b", "aXb", False),
])
def test_result_globs_match_as_glob_does(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_regex(pattern).match(path)) is matches


# --------------------------------------------------------------------------- as root


@needs_root
def test_the_command_runs_as_another_user_in_a_copy_it_owns(reachable_tmp: Path) -> None:
    repo = _repo(reachable_tmp)
    probe = ("import json, os, subprocess; print(json.dumps({'uid': os.getuid(), 'gids': os.getgroups(), "
             "'cwd': os.getcwd(), 'home': os.environ['HOME'], "
             "'home_mode': oct(os.stat(os.environ['HOME']).st_mode), "
             "'owner': os.stat('.').st_uid, 'log': subprocess.run(['git', 'log', '--format=%s'], "
             "capture_output=True, text=True).stdout, 'remotes': subprocess.run(['git', 'remote', '-v'], "
             "capture_output=True, text=True).stdout, 'config': open('.git/config').read()}))")
    with sandbox.run(_py(probe), repo, timeout=60) as ran:
        assert ran.sandboxed and ran.result.ok, ran.result
        seen = json.loads(ran.result.stdout)
        copy = ran.directory
        assert copy.is_dir()
    who = sandbox.account()
    assert seen["uid"] == who.uid != 0 and seen["gids"] in ([], [who.gid])
    assert seen["owner"] == who.uid and seen["cwd"] == str(copy) and not str(copy).startswith(str(repo))
    assert seen["home_mode"].endswith("700") and seen["home"] != os.environ.get("HOME")
    assert seen["log"] == "snapshot\n" and seen["remotes"] == ""  # one commit, no remote
    assert "canary" not in seen["config"] and "url" not in seen["config"]
    assert not copy.exists(), "the copy is removed afterwards"


@needs_root
def test_the_real_git_directory_is_hidden_while_it_runs_and_restored_after(
        reachable_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(reachable_tmp)
    elsewhere = reachable_tmp / "elsewhere"
    (elsewhere / ".git").mkdir(parents=True)
    (elsewhere / ".git" / "config").write_text("not ours to hide\n")
    monkeypatch.chdir(elsewhere)  # ci-agent's own working folder: only the work tree's repo is hidden
    # actions/checkout v6 keeps its credentials in a file under RUNNER_TEMP that .git/config
    # includes: hidden too.
    included = reachable_tmp / "runner-temp" / "git-credentials.config"
    included.parent.mkdir()
    included.write_text('[http "https://example.com/"]\n\textraheader = AUTHORIZATION: basic canary\n')
    subprocess.run(["git", "-C", str(repo), "config", "include.path", str(included)], check=True)
    before = stat.S_IMODE((repo / ".git").stat().st_mode)
    code = f"print(open({str(repo / '.git' / 'config')!r}).read())"
    with sandbox.run(_py(code), repo, timeout=60) as ran:
        assert not ran.result.ok and "Permission denied" in ran.result.stderr, ran.result
    with sandbox.run(_py(f"print(open({str(included)!r}).read())"), repo, timeout=60) as ran:
        assert not ran.result.ok and "Permission denied" in ran.result.stderr, ran.result
    with sandbox.run(_py(f"print(open({str(elsewhere / '.git' / 'config')!r}).read())"), repo,
                     timeout=60) as ran:
        assert ran.result.stdout == "not ours to hide\n\n", ran.result
    assert stat.S_IMODE((repo / ".git").stat().st_mode) == before == 0o755
    assert stat.S_IMODE(included.stat().st_mode) == 0o644
    # Control: the same read without the sandbox works (the config is world-readable).
    assert "canary" in subprocess.run(
        ["setpriv", f"--reuid={sandbox.account().uid}", f"--regid={sandbox.account().gid}", "--clear-groups",
         *_py(code)], capture_output=True, text=True, check=False).stdout


@needs_root
def test_ancestors_environ_and_memory_are_unreadable(reachable_tmp: Path) -> None:
    """The kernel's rule, proved rather than assumed: another uid reads no /proc/<pid>/environ or
    memory of ours (we hold a canary in both), though cmdline stays readable."""
    canary = "sandbox-canary-" + os.urandom(6).hex()
    os.environ["SANDBOX_TEST_CANARY"] = canary
    try:
        code = (f"import os; pid = {os.getpid()}\n"
                "for name in ('environ', 'mem', 'maps', 'cmdline'):\n"
                "    try: open(f'/proc/{pid}/{name}', 'rb').read(4096); print(name, 'read')\n"
                "    except OSError as e: print(name, type(e).__name__)\n")
        with sandbox.run(_py(code), _repo(reachable_tmp), timeout=60) as ran:
            lines = ran.result.stdout.split("\n")
    finally:
        del os.environ["SANDBOX_TEST_CANARY"]
    assert "environ PermissionError" in lines and "mem PermissionError" in lines, lines
    assert "maps PermissionError" in lines and "cmdline read" in lines, lines
    assert canary not in ran.result.stdout


@needs_root
def test_results_are_read_back_without_following_links(reachable_tmp: Path) -> None:
    repo = _repo(reachable_tmp)
    secret = reachable_tmp / "root-only.txt"
    secret.write_text("root secret\n")
    secret.chmod(0o600)
    code = (f"import os; os.makedirs('out/deep'); open('out/r.xml', 'w').write('<ok/>');"
            f"os.symlink({str(secret)!r}, 'out/s.xml'); os.symlink('/', 'out/deep/root');"
            f"os.symlink({str(reachable_tmp)!r}, 'linked')")
    with sandbox.run(_py(code), repo, timeout=60, result_globs=["out/**/*.xml", "linked/*.txt"]) as ran:
        assert ran.result.ok, ran.result
        names = [Path(p).name for p in ran.results]
        assert names == ["r.xml"]
        assert all(not Path(p).is_relative_to(ran.directory) for p in ran.results)
        assert Path(ran.results[0]).read_text() == "<ok/>"


@needs_root
def test_a_timeout_kills_the_tree_and_removes_the_copy(reachable_tmp: Path) -> None:
    code = ("import subprocess, sys, time; "
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)")
    started = time.monotonic()
    with sandbox.run(_py(code), _repo(reachable_tmp), timeout=2) as ran:
        assert ran.result.timed_out
        copy = ran.directory
    assert time.monotonic() - started < 30
    assert not copy.exists()


@needs_root
def test_a_program_the_sandbox_user_cannot_run_is_a_clear_error(reachable_tmp: Path) -> None:
    private = reachable_tmp / "private"
    private.mkdir(mode=0o700)
    tool = private / "tool"
    tool.write_text("#!/bin/sh\necho hi\n")
    tool.chmod(0o755)
    with pytest.raises(CiAgentError, match="permission denied for the sandbox user"), \
            sandbox.run([str(tool)], _repo(reachable_tmp), timeout=30):
        pass


# --------------------------------------------------------------------------- no privilege drop


def test_without_root_it_runs_in_place_and_says_so_once(reachable_tmp: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capfd: pytest.CaptureFixture[str]) -> None:
    """A developer's machine: nobody to drop to. The command runs in place with the allow-listed
    environment; `fix` says so once, `doctor` as a warning."""
    from ci_agent.cli.main import main

    repo = _repo(reachable_tmp)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setenv("MY_DB_PASSWORD", "canary-db-password")
    with sandbox.run(_py("import os; print(os.getcwd()); print(os.environ.get('MY_DB_PASSWORD'))"),
                     repo, timeout=60) as ran:
        assert not ran.sandboxed and ran.result.stdout.split() == [str(repo), "None"]
    check = check_sandbox()
    assert check.status == WARN and "without a privilege drop" in check.message
    verify = shlex.join(_py("import sys; sys.exit(1)"))
    capfd.readouterr()
    main(["fix", "--local", "--repo", str(repo), "--command", verify, "--verify", verify, "--dry-run"])
    out, err = capfd.readouterr()
    assert (out + err).count("without a privilege drop") == 1, out + err
