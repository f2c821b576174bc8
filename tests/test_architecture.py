"""The structure issue 14 set up, kept by the suite: no import cycle, no upward import, no platform
importing another, no module over 400 lines. `python tools/check_imports.py` is the command; these
tests run it as a reviewer would, and first prove on a made-up package that it catches each kind
of problem (a checker that finds nothing because it looks at nothing would pass otherwise)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHECKER = ROOT / "tools" / "check_imports.py"
MAX_MODULE_LINES = 400

sys.path.insert(0, str(CHECKER.parent))
import check_imports  # noqa: E402  (a script, not a package: found through its folder)

LAYERS = {"__init__": 0, "low": 0, "engine": 5, "platforms": 7, "cli": 8}


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def test_the_package_has_no_import_problem() -> None:
    run = subprocess.run([sys.executable, str(CHECKER)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout
    assert run.stderr.strip() == "0 import problem(s) in ci_agent/"


def test_no_module_is_over_400_lines() -> None:
    sizes = {path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
             for path in (ROOT / "ci_agent").rglob("*.py")}
    assert len(sizes) > 100  # the walk found the package
    assert {name: lines for name, lines in sizes.items() if lines > MAX_MODULE_LINES} == {}


def test_a_cycle_is_found_even_through_an_import_inside_a_function(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "engine/__init__.py": "",
        "engine/a.py": "from pkg.engine import b\n",
        "engine/b.py": "def late():\n    from pkg.engine.a import thing\n",
    })
    assert check_imports.violations(root, LAYERS) == ["import cycle: pkg.engine.a -> pkg.engine.b"]


def test_an_upward_import_is_found_also_under_type_checking(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "engine/__init__.py": "",
        "engine/run.py": "from typing import TYPE_CHECKING\n"
                         "if TYPE_CHECKING:\n    from pkg.cli import main\n",
        "cli/__init__.py": "",
        "cli/main.py": "",
    })
    assert check_imports.violations(root, LAYERS) == [
        "pkg/engine/run.py:3: upward import of pkg.cli.main (layer 8 from layer 5)"]


def test_a_platform_may_not_import_another_but_may_use_local(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "platforms/__init__.py": "",
        "platforms/local/__init__.py": "",
        "platforms/local/forge.py": "",
        "platforms/github/__init__.py": "",
        "platforms/github/env.py": "",
        "platforms/gitlab/__init__.py": "",
        "platforms/gitlab/env.py": "from pkg.platforms.github import env\n"
                                   "from pkg.platforms.local import forge\n",
    })
    assert check_imports.violations(root, LAYERS) == [
        "pkg/platforms/gitlab/env.py:1: platform gitlab imports platform github"]


def test_a_room_without_a_layer_is_a_problem_not_a_pass(tmp_path: Path) -> None:
    root = _package(tmp_path, {"newroom.py": "from pkg import low\n", "low.py": ""})
    assert check_imports.violations(root, LAYERS) == [
        "pkg/newroom.py: room 'newroom' has no layer in tools/check_imports.py"]


def test_importing_downward_and_the_own_package_init_is_fine(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "low.py": "",
        "engine/__init__.py": "from pkg.engine.core import x\n",
        "engine/core.py": "import pkg.low\nfrom pkg import engine\nx = 1\n",
    })
    assert check_imports.violations(root, LAYERS) == []


@pytest.mark.parametrize("argv", [[], ["ci_agent"]])
def test_the_command_names_the_folder_it_checked(argv: list[str]) -> None:
    run = subprocess.run([sys.executable, str(CHECKER), *argv], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert "import problem(s) in ci_agent/" in run.stderr
