"""Path rules and glob semantics on their own (no git needed)."""

from __future__ import annotations

import pytest

from ci_agent.config import PatchSettings
from ci_agent.patch.parse import parse_patch
from ci_agent.patch.policy import glob_match, path_rejections, police


@pytest.mark.parametrize(
    ("path", "glob", "fold", "expected"),
    [
        (".github/workflows/ci.yml", ".github/workflows/**", True, True),
        (".github/workflows/sub/x.yml", ".github/workflows/**", True, True),
        ("docs/.github/workflows/ci.yml", ".github/workflows/**", True, False),  # anchored at the root
        (".GITHUB/WORKFLOWS/CI.YML", ".github/workflows/**", True, True),
        (".GITHUB/WORKFLOWS/CI.YML", ".github/workflows/**", False, False),
        ("deep/dir/server.pem", "*.pem", True, True),  # no slash: any depth
        ("app/.env.local", ".env*", True, True),
        ("app/environment.ts", ".env*", True, False),
        ("secrets/a.json", "**/secrets/**", True, True),
        ("a/b/secrets/c/d.json", "**/secrets/**", True, True),
        ("a/mysecrets/x", "**/secrets/**", True, False),
        ("src/x.cs", "src/*.cs", False, True),
        ("src/sub/x.cs", "src/*.cs", False, False),
        ("/src/x.cs", "/src/**", False, False),
        ("src/x.cs", "/src/**", False, True),
    ],
)
def test_glob_semantics(path: str, glob: str, fold: bool, expected: bool) -> None:
    assert glob_match(path, glob, fold_case=fold) is expected


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("", "path.invalid"), ("/abs", "path.absolute"), ("~/x", "path.absolute"),
        ("D:/x", "path.absolute"), ("c:", "path.absolute"), ("a\\b", "path.invalid"),
        ("a/../b", "path.traversal"), ("..", "path.traversal"), ("a//b", "path.invalid"),
        ("a/./b", "path.invalid"), ("dir/", "path.invalid"), ("x\x00y", "path.invalid"),
        ("x\x7fy", "path.invalid"), (".git", "path.git_dir"), ("a/.Git /x", "path.git_dir"),
        ("a/.git...", "path.git_dir"),
    ],
)
def test_path_rules(path: str, rule: str) -> None:
    assert [r.rule for r in path_rejections(path)] == [rule]


@pytest.mark.parametrize("path", ["src/App/Program.cs", ".gitignore", ".github/CODEOWNERS", "my dir/ü.txt",
                                  "git/x", "a.git/b", ".gitattributes", "a:b.txt"])
def test_ordinary_paths_pass(path: str) -> None:
    assert path_rejections(path) == []


def test_all_problems_reported_at_once() -> None:
    text = ("--- a/.gitlab-ci.yml\n+++ b/.gitlab-ci.yml\n@@ -1 +1 @@\n-a\n+b\n"
            "--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n")
    rules = [r.rule for r in police(parse_patch(text), PatchSettings(max_files=1))]
    assert rules == ["path.denied", "path.traversal", "size.files"]


def test_messages_say_what_to_do_instead() -> None:
    (rejection,) = path_rejections("/etc/passwd")
    assert "relative to the repository root" in rejection.message
    (denied,) = police(parse_patch("--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-a\n+b\n"), PatchSettings())
    assert denied.rule == "path.denied" and "secrets" in denied.message and "instead" in denied.message
