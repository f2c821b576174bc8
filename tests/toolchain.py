"""The Python a sandboxed verify/build command can run, for tests that make ci-agent run Python.

As root, ci-agent runs verify/build commands as an unprivileged user that cannot read /root, and this
machine's (and CI's) development Python lives under /root/.pyenv. So as root the tests' verify commands
use Debian's /usr/bin/python3 with python3-pytest (.ci/run installs it); as any other user the running
interpreter is reachable by the same user and is used as before.
"""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
from pathlib import Path

SYSTEM_PYTHON = "/usr/bin/python3"

#: The interpreter a verify/build command run by ci-agent can execute.
PYTHON = SYSTEM_PYTHON if os.geteuid() == 0 else sys.executable
#: `PYTHON -m pytest`, quiet, without a cache dir, as one shell-quoted command string.
PYTEST = f"{shlex.quote(PYTHON)} -m pytest -q -p no:cacheprovider"


def reachable_dir() -> Path:
    """A fresh folder under /tmp the sandbox user can enter, read and write (the caller removes
    it). As root, pytest's tmp_path lies in root's 0700 /tmp/pytest-of-root: unreachable for it."""
    folder = Path(tempfile.mkdtemp(prefix="ci-agent-test-", dir="/tmp"))
    folder.chmod(0o777)
    return folder
