"""Code that runs at build time may change, but the verdict flags it (`build_change`), so the fix
PR/MR is labelled and called out (DESIGN §4.4). Real diffs, a real repository."""

from __future__ import annotations

import pytest

from ci_agent.config import PatchSettings
from ci_agent.patch import review
from tests.patch.conftest import Repo, make_repo

CSPROJ = '<Project Sdk="Microsoft.NET.Sdk">\n  <PropertyGroup>\n    <Nullable>enable</Nullable>\n' \
         "  </PropertyGroup>\n</Project>\n"
PACKAGE = '{\n  "name": "web",\n  "scripts": {\n    "test": "jest"\n  }\n}\n'
FILES: dict[str, str | bytes] = {"src/App/App.csproj": CSPROJ, "src/app.py": "x = 1\n",
                                  "package.json": PACKAGE}


def new_file(path: str, text: str = "x = 1\n") -> str:
    lines = text.splitlines()
    return f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{x}\n" for x in lines)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return make_repo(tmp_path_factory.mktemp("buildtime") / "r", FILES)


EXEC = ('--- a/src/App/App.csproj\n+++ b/src/App/App.csproj\n@@ -4,2 +4,5 @@\n   </PropertyGroup>\n'
        '+  <Target Name="Pre" BeforeTargets="Build">\n+    <Exec Command="./gen.sh" />\n+  </Target>\n'
        ' </Project>\n')
SCRIPT = ('--- a/package.json\n+++ b/package.json\n@@ -3,3 +3,4 @@\n   "scripts": {\n'
          '-    "test": "jest"\n+    "test": "jest",\n+    "postinstall": "node setup.js"\n   }\n')


@pytest.mark.parametrize(("patch", "path", "why"), [
    (new_file("tests/conftest.py"), "tests/conftest.py", "pytest imports it"),
    (new_file("conftest.py"), "conftest.py", "pytest imports it"),
    (new_file("setup.py"), "setup.py", "Python build"),
    (new_file("Makefile", "all:\n\ttrue"), "Makefile", "make"),
    (new_file("build/rules.mk", "x := 1"), "build/rules.mk", "make"),
    (new_file("CMakeLists.txt", "project(x)"), "CMakeLists.txt", "CMake"),
    (new_file("build.gradle.kts", "plugins {}"), "build.gradle.kts", "Gradle"),
    (new_file("Directory.Build.props", "<Project />"), "Directory.Build.props", "every project"),
    (new_file("src/Directory.Build.targets", "<Project />"), "src/Directory.Build.targets", "every project"),
    (EXEC, "src/App/App.csproj", "Exec"),
    (SCRIPT, "package.json", "scripts"),
])
def test_build_time_code_passes_but_is_flagged(repo: Repo, patch: str, path: str, why: str) -> None:
    verdict = review(patch, repo.path, PatchSettings())
    assert verdict.ok, verdict.rejections
    (flag,) = verdict.build_change
    assert flag.startswith(f"{path}: ") and why in flag
    assert verdict.to_json()["build_change"] == [flag]


@pytest.mark.parametrize("patch", [
    new_file("src/other.py"), new_file("docs/Makefile.md", "text"),
    "--- a/src/App/App.csproj\n+++ b/src/App/App.csproj\n@@ -3 +3,2 @@\n     <Nullable>enable</Nullable>\n"
    "+    <LangVersion>latest</LangVersion>\n",
])
def test_other_changes_are_not_flagged(repo: Repo, patch: str) -> None:
    verdict = review(patch, repo.path, PatchSettings())
    assert verdict.ok and verdict.build_change == ()
