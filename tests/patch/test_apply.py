"""The engine on real repositories: what models send, what git demands, all or nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ci_agent.config import CommitSettings, PatchSettings
from ci_agent.patch import Trailers, apply_patch, commit, review, rollback
from ci_agent.patch.apply import ApplyError, apply_atomically
from tests.patch.conftest import Repo, make_repo

FIX = """--- a/src/App/Calc.cs
+++ b/src/App/Calc.cs
@@ -4,3 +4,3 @@
 {
-    public static int Add(int a, int b) => a - b;
+    public static int Add(int a, int b) => a + b;
 }
"""


def real_diff(repo: Repo, edits: dict[str, bytes | None], *args: str) -> str:
    """A patch as git itself writes it: make the edits, diff, put the tree back."""
    for rel, data in edits.items():
        if data is None:
            (repo.path / rel).unlink()
        else:
            repo.write(rel, data)
    repo.git("add", "-A")
    text = repo.git("diff", "--cached", *args)
    repo.git("reset", "-q", "--hard")
    repo.git("clean", "-qfdx")
    return text


def test_model_style_fix_applies_to_tree_and_index(repo: Repo) -> None:
    verdict = apply_patch(FIX, repo.path, PatchSettings())
    assert verdict.ok, verdict.rejections
    assert verdict.files == ("src/App/Calc.cs",)
    assert (verdict.added, verdict.removed) == (1, 1)
    assert b"a + b" in repo.read("src/App/Calc.cs")
    assert repo.staged() == "M\tsrc/App/Calc.cs\n"


def test_review_never_writes(repo: Repo) -> None:
    before = repo.snapshot()
    assert review(FIX, repo.path, PatchSettings()).ok
    assert repo.snapshot() == before


def test_missing_prefixes_wrong_counts_prose_and_fence(repo: Repo) -> None:
    answer = (
        "The operator is wrong.\n\n```diff\n"
        "--- src/App/Calc.cs\n+++ src/App/Calc.cs\n"
        "@@ -4,7 +4,9 @@\n {\n-    public static int Add(int a, int b) => a - b;\n"
        "+    public static int Add(int a, int b) => a + b;\n }\n```\n\nThat fixes `Adds`."
    )
    verdict = apply_patch(answer, repo.path, PatchSettings())
    assert verdict.ok, verdict.rejections
    assert b"a + b" in repo.read("src/App/Calc.cs")


def test_bare_diff_with_trailing_prose_and_no_final_newline(repo: Repo) -> None:
    answer = FIX.rstrip("\n") + "\n\nThis changes the operator."
    assert apply_patch(answer, repo.path, PatchSettings()).ok
    answer2 = FIX.rstrip("\n")  # no final newline at all
    repo.git("reset", "-q", "--hard")
    assert apply_patch(answer2, repo.path, PatchSettings()).ok


# (id, file, its content, the patch, the file's bytes after): line endings and final newlines are
# kept as the file has them, whatever the patch uses; names as models write them (unquoted).
BYTE_EXACT = [
    ("crlf-file-lf-patch", "Program.cs", b"class P\r\n{\r\n    int x = 1;\r\n}\r\n",
     "--- a/Program.cs\n+++ b/Program.cs\n@@ -2,3 +2,3 @@\n {\n-    int x = 1;\n+    int x = 2;\n }\n",
     b"class P\r\n{\r\n    int x = 2;\r\n}\r\n"),
    ("lf-file-crlf-patch", "a.py", b"x = 1\ny = 2\n",
     "--- a/a.py\r\n+++ b/a.py\r\n@@ -1,2 +1,2 @@\r\n-x = 1\r\n+x = 3\r\n y = 2\r\n", b"x = 3\ny = 2\n"),
    # still no final newline: minimal change
    ("no-final-newline-kept", "a.txt", b"one\ntwo\nthree",
     "--- a/a.txt\n+++ b/a.txt\n@@ -2,2 +2,2 @@\n two\n-three\n+THREE\n", b"one\ntwo\nTHREE"),
    ("append-after-last-line-without-newline", "a.txt", b"one\r\ntwo",
     "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,3 @@\n one\n two\n+three\n", b"one\r\ntwo\r\nthree"),
    ("unquoted-utf8-and-space-names", "my dir/é.txt", b"a\n",
     "--- a/my dir/é.txt\n+++ b/my dir/é.txt\n@@ -1 +1 @@\n-a\n+b\n", b"b\n"),
]


@pytest.mark.parametrize(("name", "before", "patch", "after"), [c[1:] for c in BYTE_EXACT],
                         ids=[c[0] for c in BYTE_EXACT])
def test_patched_file_bytes(tmp_path: Path, name: str, before: bytes, patch: str, after: bytes) -> None:
    repo = make_repo(tmp_path / "r", {name: before})
    verdict = apply_patch(patch, repo.path, PatchSettings())
    assert verdict.ok, verdict.rejections
    assert repo.read(name) == after


def test_real_git_diff_of_no_newline_file_round_trips(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.txt": "one\ntwo"})
    patch = real_diff(repo, {"a.txt": b"one\nTWO"})
    assert "\\ No newline at end of file" in patch
    assert apply_patch(patch, repo.path, PatchSettings()).ok
    assert repo.read("a.txt") == b"one\nTWO"


def test_paths_with_spaces_and_non_ascii(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"docs/my notes.txt": "a\nb\n", "src/café/naïve.py": "x = 1\n"})
    patch = real_diff(repo, {"docs/my notes.txt": b"a\nB\n", "src/café/naïve.py": b"x = 2\n"})
    assert '"a/src/caf\\303\\251/na\\303\\257ve.py"' in patch  # git quotes it
    verdict = apply_patch(patch, repo.path, PatchSettings())
    assert verdict.ok, verdict.rejections
    assert set(verdict.files) == {"docs/my notes.txt", "src/café/naïve.py"}
    assert repo.read("docs/my notes.txt") == b"a\nB\n"
    assert repo.read("src/café/naïve.py") == b"x = 2\n"


def test_new_file(repo: Repo) -> None:
    patch = "--- /dev/null\n+++ b/src/App/Util.cs\n@@ -0,0 +1,2 @@\n+namespace App;\n+static class Util {}\n"
    verdict = apply_patch(patch, repo.path, PatchSettings())
    assert verdict.ok, verdict.rejections
    assert repo.read("src/App/Util.cs") == b"namespace App;\nstatic class Util {}\n"
    assert repo.staged() == "A\tsrc/App/Util.cs\n"


def test_new_file_that_already_exists_is_rejected(repo: Repo) -> None:
    patch = "--- /dev/null\n+++ b/README.md\n@@ -0,0 +1 @@\n+# other\n"
    before = repo.snapshot()
    verdict = apply_patch(patch, repo.path, PatchSettings())
    assert [r.rule for r in verdict.rejections] == ["apply.check"]
    assert repo.snapshot() == before


def test_deleted_file_when_allowed(repo: Repo) -> None:
    patch = real_diff(repo, {"README.md": None})
    assert [r.rule for r in review(patch, repo.path, PatchSettings()).rejections] == ["file.deletion"]
    verdict = apply_patch(patch, repo.path, PatchSettings(allow_deletions=True))
    assert verdict.ok, verdict.rejections
    assert not (repo.path / "README.md").exists()
    assert repo.staged() == "D\tREADME.md\n"


def test_renamed_file_when_allowed(repo: Repo) -> None:
    patch = real_diff(repo, {"README.md": None, "docs/README.md": b"# demo\n"}, "-M")
    assert "rename from README.md" in patch
    assert [r.rule for r in review(patch, repo.path, PatchSettings()).rejections] == ["file.rename"]
    verdict = apply_patch(patch, repo.path, PatchSettings(allow_renames=True))
    assert verdict.ok, verdict.rejections
    assert repo.read("docs/README.md") == b"# demo\n"
    assert not (repo.path / "README.md").exists()


def test_stale_patch_is_rejected_and_tree_untouched(repo: Repo) -> None:
    repo.write("src/App/Calc.cs", repo.read("src/App/Calc.cs").replace(b"a - b", b"a * b"))
    repo.commit_all("someone else changed it")
    before = repo.snapshot()
    verdict = apply_patch(FIX, repo.path, PatchSettings())
    assert not verdict.ok
    assert [(r.rule, r.path) for r in verdict.rejections] == [("apply.check", "src/App/Calc.cs")]
    assert "patch does not apply" in verdict.rejections[0].message
    assert repo.snapshot() == before


def test_second_hunk_fails_first_is_not_applied(tmp_path: Path) -> None:
    lines = "".join(f"line {n}\n" for n in range(1, 41))
    repo = make_repo(tmp_path / "r", {"big.txt": lines, "other.txt": "keep\n"})
    patch = (
        "--- a/other.txt\n+++ b/other.txt\n@@ -1 +1 @@\n-keep\n+changed\n"
        "--- a/big.txt\n+++ b/big.txt\n"
        "@@ -2,3 +2,3 @@\n line 2\n-line 3\n+LINE 3\n line 4\n"
        "@@ -30,3 +30,3 @@\n line 30\n-line 31 (not what the file says)\n+LINE 31\n line 32\n"
    )
    before = repo.snapshot()
    verdict = apply_patch(patch, repo.path, PatchSettings())
    assert [r.rule for r in verdict.rejections] == ["apply.check"]
    assert repo.snapshot() == before


def test_dirty_index_is_kept_exactly_on_failure(repo: Repo) -> None:
    repo.write("README.md", "# staged change\n")
    repo.git("add", "README.md")
    repo.write("README.md", "# unstaged on top\n")
    repo.write("scratch.txt", "untracked\n")
    before = repo.snapshot()
    bad = FIX.replace("a - b", "a / b")
    assert not apply_patch(bad, repo.path, PatchSettings()).ok
    assert repo.snapshot() == before


def test_write_failure_after_check_restores_tree_and_index(repo: Repo) -> None:
    """git apply passes --check, then fails while writing: an untracked file `blocker` stands
    where the patch needs a directory. Real git has by then rewritten Calc.cs in the work tree
    (checked by hand: `git apply --index` leaves ` M src/App/Calc.cs`); we must put it back."""
    repo.write("blocker", "untracked file\n")
    text = FIX + "--- /dev/null\n+++ b/blocker/x.cs\n@@ -0,0 +1 @@\n+class N {}\n"
    checked = review(text, repo.path, PatchSettings())
    assert checked.ok, checked.rejections
    before = repo.snapshot()
    with pytest.raises(ApplyError, match="Not a directory"):
        apply_atomically(repo.path, checked.patch_text, checked.touched)
    assert repo.snapshot() == before
    verdict = apply_patch(text, repo.path, PatchSettings())
    assert [r.rule for r in verdict.rejections] == ["apply.failed"]
    assert repo.snapshot() == before


def test_rollback_restores_the_committed_state(repo: Repo) -> None:
    before = repo.snapshot()
    verdict = apply_patch(FIX, repo.path, PatchSettings())
    rollback(repo.path, verdict.patch_text, verdict.touched)
    assert repo.snapshot() == before
    with pytest.raises(ApplyError):  # a second rollback does not fit: refused, tree untouched
        rollback(repo.path, verdict.patch_text, verdict.touched)
    assert repo.snapshot() == before


def test_commit_with_identity_and_trailers_and_push(repo: Repo, tmp_path: Path) -> None:
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    repo.git("remote", "add", "origin", str(origin))
    assert apply_patch(FIX, repo.path, PatchSettings()).ok
    settings = CommitSettings(author_name="ci-agent bot", author_email="bot@example.com")
    sha = commit(repo.path, settings, "Fix Calc.Add\n\n# uses + instead of -",
                 Trailers(attempt=2, failure="cs1061:abc\nsecond line", run="https://ci/run/7"))
    from ci_agent import git

    git.push(repo.path, "origin", "HEAD:refs/heads/ci-agent/fix-main")
    shown = subprocess.run(["git", "log", "-1", "--format=%an <%ae>|%cn <%ce>|%B", "ci-agent/fix-main"],
                           cwd=origin, capture_output=True, text=True, check=True).stdout
    assert shown.startswith("ci-agent bot <bot@example.com>|ci-agent bot <bot@example.com>|Fix Calc.Add")
    assert "# uses + instead of -" in shown  # a '#' line is message, not a comment to strip
    assert (
        "CI-Agent-Attempt: 2\nCI-Agent-Failure: cs1061:abc second line\nCI-Agent-Run: https://ci/run/7"
    ) in shown
    assert repo.git("rev-parse", "HEAD").strip() == sha
    trailers = repo.git("log", "-1", "--format=%(trailers:key=CI-Agent-Attempt,valueonly)").strip()
    assert trailers == "2"


def _failing_hook(repo: Repo) -> None:
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho refused by hook >&2\nexit 1\n")
    hook.chmod(0o755)


def test_commit_runs_hooks_unless_configured(repo: Repo) -> None:
    from ci_agent.git import GitError

    _failing_hook(repo)
    assert apply_patch(FIX, repo.path, PatchSettings()).ok
    with pytest.raises(GitError, match="refused by hook"):
        commit(repo.path, CommitSettings(), "Fix", Trailers(attempt=1))
    sha = commit(repo.path, CommitSettings(no_verify=True), "Fix", Trailers(attempt=1))
    assert repo.git("rev-parse", "HEAD").strip() == sha


NUMBERS = "".join(f"{n}\n" for n in range(1, 21))


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        ("@@ -10 +10 @@\n-10\n+ten\n", NUMBERS.replace("\n10\n", "\nten\n")),
        ("@@ -0,0 +1 @@\n+zero\n", "zero\n" + NUMBERS),
        ("@@ -5,0 +6 @@\n+five and a half\n", NUMBERS.replace("\n5\n", "\n5\nfive and a half\n")),
        ("@@ -20 +20 @@\n-20\n+twenty\n", NUMBERS.replace("\n20\n", "\ntwenty\n")),
        ("@@ -3 +3 @@\n-12\n+twelve\n", NUMBERS.replace("\n12\n", "\ntwelve\n")),  # wrong line number
        ("@@ @@\n 7\n-8\n+eight\n 9\n", NUMBERS.replace("\n8\n", "\neight\n")),  # bare header
    ],
    ids=["replace-mid", "insert-first", "insert-mid", "replace-last", "wrong-line-number", "bare-header"],
)
def test_zero_context_and_numberless_hunks_get_context_from_disk(
    tmp_path: Path, patch: str, expected: str
) -> None:
    repo = make_repo(tmp_path / "r", {"n.txt": NUMBERS})
    verdict = apply_patch("--- a/n.txt\n+++ b/n.txt\n" + patch, repo.path, PatchSettings())
    assert verdict.ok, verdict.rejections
    assert repo.read("n.txt").decode() == expected


def test_blank_context_lines_without_their_space(tmp_path: Path) -> None:
    """Models (and editors) strip the single space of an empty context line."""
    repo = make_repo(tmp_path / "r", {"a.py": "import os\n\n\ndef f():\n    return 1\n"})
    patch = ("--- a/a.py\n+++ b/a.py\n@@ -1,5 +1,5 @@\n import os\n\n\n def f():\n"
             "-    return 1\n+    return 2\n")
    assert apply_patch(patch, repo.path, PatchSettings()).ok
    assert repo.read("a.py") == b"import os\n\n\ndef f():\n    return 2\n"


def test_context_lines_that_lost_trailing_whitespace(tmp_path: Path) -> None:
    source = "class A\n{\n    void F()\n    {\n        \n        Run(); \n    }\n}\n"
    repo = make_repo(tmp_path / "r", {"A.cs": source})
    # the model dropped the blank line's indentation and Run();'s trailing space
    patch = "--- a/A.cs\n+++ b/A.cs\n@@ -4,4 +4,4 @@\n     {\n \n-        Run();\n+        Run(1);\n     }\n"
    verdict = apply_patch(patch, repo.path, PatchSettings())
    assert verdict.ok, verdict.rejections
    assert repo.read("A.cs").decode() == source.replace("Run(); ", "Run(1);")


def test_model_summary_cannot_forge_our_trailers(repo: Repo) -> None:
    assert apply_patch(FIX, repo.path, PatchSettings()).ok
    summary = ("Fix Calc.Add\n\nReset the budget.\n\n"
               "CI-Agent-Attempt: 0\nci-agent-failure = none\nSigned-off-by: X <x@y.z>")
    commit(repo.path, CommitSettings(), summary, Trailers(attempt=3, failure="fp1"))
    attempts = repo.git("log", "-1", "--format=%(trailers:key=CI-Agent-Attempt,valueonly)").split()
    assert attempts == ["3"]
    body = repo.git("log", "-1", "--format=%B")
    assert "none" not in body and "Signed-off-by: X <x@y.z>" in body
    assert body.rstrip().endswith("CI-Agent-Attempt: 3\nCI-Agent-Failure: fp1")


def test_failed_write_keeps_intent_to_add_entries(repo: Repo) -> None:
    """The index is put back byte for byte: even an intent-to-add entry survives a failure."""
    repo.write("later.txt", "not staged yet\n")
    repo.git("add", "--intent-to-add", "later.txt")
    repo.write("blocker", "untracked\n")
    text = FIX + "--- /dev/null\n+++ b/blocker/x.cs\n@@ -0,0 +1 @@\n+class N {}\n"
    index_before = (repo.path / ".git" / "index").read_bytes()
    before = repo.snapshot()
    assert [r.rule for r in apply_patch(text, repo.path, PatchSettings()).rejections] == ["apply.failed"]
    assert repo.snapshot() == before
    assert (repo.path / ".git" / "index").read_bytes() == index_before


def test_autocrlf_checkout_is_fitted_to_the_index_not_the_disk(tmp_path: Path) -> None:
    """core.autocrlf=true: CRLF on disk, LF in the index. git apply --index patches the index
    form, so an LF patch is right as it is (and a CRLF one is fitted down to LF)."""
    repo = make_repo(tmp_path / "r", {"f.txt": "a\nb\nc\n"})
    repo.git("config", "core.autocrlf", "true")
    (repo.path / "f.txt").unlink()
    repo.git("checkout", "--", "f.txt")
    assert repo.read("f.txt") == b"a\r\nb\r\nc\r\n"
    for patch in ("--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
                  "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\r\n-b\r\n+B\r\n c\r\n"):
        verdict = apply_patch(patch, repo.path, PatchSettings())
        assert verdict.ok, verdict.rejections
        assert repo.read("f.txt") == b"a\r\nB\r\nc\r\n"
        assert repo.git("show", ":f.txt") == "a\nB\nc\n"
        repo.git("reset", "-q", "--hard")
