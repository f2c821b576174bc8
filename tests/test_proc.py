"""proc.run: argv only, captured output, the whole process tree killed on timeout."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from ci_agent.errors import CiAgentError
from ci_agent.proc import run


def test_captures_output_and_returncode(tmp_path: Path) -> None:
    result = run([sys.executable, "-c", "import os,sys; print(os.getcwd()); sys.exit(3)"], cwd=tmp_path)
    assert result.returncode == 3 and not result.ok
    assert result.stdout.strip() == str(tmp_path)


def test_no_shell_interpretation() -> None:
    result = run(["echo", "$HOME; rm -rf /"])
    assert result.stdout == "$HOME; rm -rf /\n"


def test_env_and_stdin() -> None:
    result = run([sys.executable, "-c", "import os,sys; print(os.environ['X'] + sys.stdin.read())"],
                 env={**os.environ, "X": "a"}, stdin="b")
    assert result.ok and result.stdout.strip() == "ab"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")  # a zombie nobody reaped (PID 1 in a container) is dead too
    try:
        return "\nState:\tZ" not in status.read_text()
    except OSError:
        return False


def test_timeout_kills_grandchildren(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    child = tmp_path / "child.py"
    # The child starts a long-sleeping grandchild, records its pid, then hangs itself.
    child.write_text(
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(120)\n"
    )
    result = run([sys.executable, str(child)], timeout=1)
    assert result.timed_out and not result.ok
    grandchild = int(pid_file.read_text())
    # Killed processes are reaped by init asynchronously: wait (bounded) for it to vanish.
    for _ in range(100):
        if not _alive(grandchild):
            break
        time.sleep(0.05)
    assert not _alive(grandchild)


def test_missing_program_is_a_clear_error() -> None:
    with pytest.raises(CiAgentError, match="not found"):
        run(["definitely-not-a-program-ci-agent"])
