"""What the model is sent names no runner path (issue 15, defect 9): `fix --local --dry-run` on a
CI log whose traceback runs through the runner's checkout and its Python's site-packages.
Real git repository (the clone of tests/cli/test_fix_local.py), request as `--dry-run` prints it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_fix_local import fix, no_model
from tests.cli.test_fix_local import repo as repo  # the fixture: a clone whose test fails

# A GitHub job's log: pytest in the workspace, then a script crashing inside a library.
CI_LOG = """\
Run /home/runner/work/_temp/.venv/bin/python -m pytest test_calc.py
============================= test session starts ==============================
platform linux -- Python 3.11.9, pytest-8.3.2, pluggy-1.5.0
rootdir: /home/runner/work/calc/calc
collected 1 item

test_calc.py F                                                           [100%]

=================================== FAILURES ===================================
___________________________________ test_add ___________________________________

    def test_add():
>       assert add(2, 3) == 5
E       assert -1 == 5
E        +  where -1 = add(2, 3)

test_calc.py:5: AssertionError
=========================== short test summary info ============================
FAILED test_calc.py::test_add - assert -1 == 5
============================== 1 failed in 0.03s ===============================
Traceback (most recent call last):
  File "/home/runner/work/calc/calc/calc.py", line 9, in <module>
    requests.get(URL, timeout=0)
  File "/opt/hostedtoolcache/Python/3.11.9/x64/lib/python3.11/site-packages/requests/api.py", line 73, in get
    return request("get", url, params=params, **kwargs)
ValueError: Attempted to set connect timeout to 0
"""


def test_the_request_shows_repo_relative_and_short_third_party_paths(
        repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "job.log"
    log.write_text(CI_LOG)
    assert fix(repo, "--build-log", str(log), "--dry-run", "--json", client=no_model) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    request = json.dumps(next(e for e in events if e["event"] == "dry_run")["request"])
    assert "/home/runner" not in request and "/opt/hostedtoolcache" not in request
    assert "<site-packages>/requests/api.py(73): error ValueError" in request
    assert 'File \\"calc.py\\", line 9, in <module>' in request
