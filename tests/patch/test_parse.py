# ruff: noqa: E501  (diff literals read best one per line)
"""Parser, extractor and renderer on their own (no git): what models write, what git writes."""

from __future__ import annotations

import pytest

from ci_agent.patch.extract import extract_diff, fit_file
from ci_agent.patch.parse import PatchParseError, parse_patch, unquote
from ci_agent.patch.render import quote, render_patch

GIT_STYLE = """diff --git a/src/x.cs b/src/x.cs
index 83db48f..bf269f4 100644
--- a/src/x.cs
+++ b/src/x.cs
@@ -1,3 +1,3 @@ namespace X
 a
-b
+B
 c
"""


def test_git_style_patch() -> None:
    patch = parse_patch(GIT_STYLE)
    (fp,) = patch.files
    assert (fp.old_path, fp.new_path) == ("src/x.cs", "src/x.cs")
    assert (fp.added, fp.removed, fp.is_new, fp.is_deleted, fp.rename) == (1, 1, False, False, False)
    assert fp.hunks[0].section == " namespace X"
    rendered = render_patch(patch)
    assert rendered == GIT_STYLE.replace("index 83db48f..bf269f4 100644\n", "")


def test_render_is_a_fixed_point() -> None:
    once = render_patch(parse_patch(GIT_STYLE))
    assert render_patch(parse_patch(once)) == once


def test_counts_are_recomputed_and_trailing_prose_dropped() -> None:
    text = "--- a/x\n+++ b/x\n@@ -1,9 +1,1 @@\n a\n-b\n+c\n\nI changed b to c because reasons.\n"
    (fp,) = parse_patch(text).files
    assert fp.hunks[0].lines == (" a", "-b", "+c")
    assert "@@ -1,2 +1,2 @@" in render_patch(parse_patch(text))


def test_declared_counts_separate_a_removed_sql_comment_from_a_header() -> None:
    # removing the SQL line "-- note" gives "--- note"; the counts say it is a hunk line
    text = "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,1 @@\n--- note\n SELECT 1;\n"
    (fp,) = parse_patch(text).files
    assert fp.hunks[0].lines == ("--- note", " SELECT 1;")


def test_blank_context_line_inside_hunk_kept_trailing_blank_dropped() -> None:
    text = "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n\n\nprose"
    assert parse_patch(text).files[0].hunks[0].lines == (" a", " ", "-b", "+c")


def test_missing_prefixes_and_dot_slash() -> None:
    (fp,) = parse_patch("--- ./src/x.py\n+++ ./src/x.py\n@@ -1 +1 @@\n-a\n+b\n").files
    assert fp.path == "src/x.py"
    (fp,) = parse_patch("--- src/x.py\n+++ src/x.py\n@@ -1 +1 @@\n-a\n+b\n").files
    assert fp.path == "src/x.py"


def test_gnu_diff_timestamps_and_quoted_names() -> None:
    text = ("--- a/my file.txt\t2024-01-01 10:00:00.000000000 +0000\n"
            "+++ b/my file.txt\t2024-01-01 10:00:01.000000000 +0000\n@@ -1 +1 @@\n-a\n+b\n")
    assert parse_patch(text).paths == ("my file.txt",)
    text = 'diff --git "a/caf\\303\\251" "b/caf\\303\\251"\n--- "a/caf\\303\\251"\n+++ "b/caf\\303\\251"\n@@ -1 +1 @@\n-a\n+b\n'
    assert parse_patch(text).paths == ("café",)


@pytest.mark.parametrize("name", ["plain.txt", "my file.txt", "café/ü.txt", 'q"uote', "back\\slash", "tab\there"])
def test_quote_round_trip(name: str) -> None:
    quoted = quote(name)
    assert (unquote(quoted)[0] if quoted.startswith('"') else quoted) == name


def test_new_deleted_renamed_and_mode_headers() -> None:
    text = ("diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+n\n"
            "diff --git a/d.txt b/d.txt\ndeleted file mode 100755\n--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-d\n"
            "diff --git a/old name b/new name\nsimilarity index 90%\nrename from old name\nrename to new name\n"
            "diff --git a/m.sh b/m.sh\nold mode 100644\nnew mode 100755\n")
    new, deleted, renamed, mode = parse_patch(text).files
    assert new.is_new and new.new_path == "n.txt" and new.new_mode == "100644"
    assert deleted.is_deleted and deleted.old_mode == "100755"
    assert renamed.rename and (renamed.old_path, renamed.new_path) == ("old name", "new name")
    assert (mode.old_mode, mode.new_mode) == ("100644", "100755")


@pytest.mark.parametrize(
    "text",
    ["--- a/x\n+++ b/x\n@@ -a +b @@\n-a\n", "--- a/x\n+++ b/x\n", "--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+a\n",
     "--- a/x\n+++ b/x\n@@ -1 +1 @@\nprose only\n", 'diff --git "a/x\\q" b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n'],
    ids=["bad-header", "no-hunks", "both-null", "empty-hunk", "bad-escape"],
)
def test_malformed(text: str) -> None:
    with pytest.raises(PatchParseError):
        parse_patch(text)


def test_extract_joins_diff_fences_and_ignores_other_code() -> None:
    answer = ("Cause: wrong operator.\n\n```csharp\nvar x = 1;\n```\n\n```diff\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-a\n+b\n"
              "```\nand\n~~~patch\n--- a/b\n+++ b/b\n@@ -1 +1 @@\n-a\n+b\n~~~\n")
    assert parse_patch(extract_diff(answer)).paths == ("a", "b")


def test_extract_fence_inside_a_list_item() -> None:
    answer = "1. Apply:\n   ```diff\n   --- a/a\n   +++ b/a\n   @@ -1 +1 @@\n   -a\n   +b\n   ```\n"
    assert parse_patch(extract_diff(answer)).files[0].hunks[0].lines == ("-a", "+b")


def test_extract_crlf_transport_and_bom() -> None:
    text = extract_diff("\ufeff--- a/a\r\n+++ b/a\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n")
    assert text == "--- a/a\n+++ b/a\n@@ -1 +1 @@\n-a\n+b\n"


def test_fit_crlf_and_no_final_newline() -> None:
    (fp,) = parse_patch("--- a/a\n+++ b/a\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n").files
    fitted = fit_file(fp, b"x\r\ny")
    assert fitted.hunks[0].lines == (" x\r", "-y", "\\ No newline at end of file", "+z",
                                     "\\ No newline at end of file")


def test_prose_mentioning_diff_is_not_a_file() -> None:
    text = "I ran diff -u on it.\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
    assert parse_patch(text).paths == ("x",)
    text = "diff -u a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
    assert parse_patch(text).paths == ("x",)


def test_diff_of_a_markdown_file_with_its_own_fences() -> None:
    answer = ("```diff\n--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,3 @@\n ```bash\n-make\n+make test\n ```\n```\n"
              "Done.")
    (fp,) = parse_patch(extract_diff(answer)).files
    assert fp.hunks[0].lines == (" ```bash", "-make", "+make test", " ```")
