"""RepoTools: confined to the repository, .git and exclude globs hidden, output capped."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ci_agent.llm import tools as tools_module
from ci_agent.llm.tools import MAX_LIST_ENTRIES, MAX_MATCHES, MAX_READ_LINES, RepoTools, ToolError
from ci_agent.redact import Redactor


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "src" / "app.py").write_text("import os\n\ndef main():\n    return os.getcwd()\n")
    (root / "README.md").write_text("# demo\nTOKEN_MARKER in docs\n")
    (root / "secrets").mkdir()
    (root / "secrets" / "prod.txt").write_text("TOKEN_MARKER secret\n")
    (root / "cert.pem").write_text("TOKEN_MARKER pem\n")
    (root / ".git" / "notes.txt").write_text("TOKEN_MARKER in git\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text("TOKEN_MARKER outside\n")
    os.symlink(outside / "passwd", root / "link_out")
    os.symlink(outside, root / "dir_out")
    os.symlink("src/app.py", root / "link_in")
    os.symlink(".git/config", root / "link_git")
    return root


@pytest.fixture
def tools(repo: Path) -> RepoTools:
    return RepoTools(repo, exclude_globs=("secrets/**", "*.pem"))


def test_read_file_numbers_lines_and_reads_ranges(tools: RepoTools) -> None:
    assert tools.read_file("src/app.py") == (
        "src/app.py (lines 1-4 of 4)\n"
        "     1\timport os\n     2\t\n     3\tdef main():\n     4\t    return os.getcwd()\n"
    )
    assert tools.read_file("./src/../src/app.py", start_line=3, end_line=3) == (
        "src/app.py (lines 3-3 of 4)\n     3\tdef main():\n[1 more lines; call read_file with start_line=4]\n"
    )


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside/passwd", "src/../../outside/passwd"])
def test_paths_outside_the_repo_are_refused(tools: RepoTools, path: str) -> None:
    with pytest.raises(ToolError, match=r"absolute|outside the repository"):
        tools.read_file(path)


def test_symlinks_out_of_the_repo_are_refused(tools: RepoTools) -> None:
    with pytest.raises(ToolError, match="symlink that points outside"):
        tools.read_file("link_out")
    with pytest.raises(ToolError, match="symlink that points outside"):
        tools.read_file("dir_out/passwd")
    with pytest.raises(ToolError, match="symlink that points outside"):
        tools.list_files("dir_out")


def test_a_symlink_inside_the_repo_is_followed(tools: RepoTools) -> None:
    assert tools.read_file("link_in").startswith("src/app.py (lines 1-4 of 4)")


@pytest.mark.parametrize("path", [".git/config", ".git/notes.txt", "link_git", ".GIT/config",
                                  "secrets/prod.txt", "cert.pem", "secrets"])
def test_git_and_excluded_files_answer_like_missing_ones(tools: RepoTools, path: str) -> None:
    with pytest.raises(ToolError, match="does not exist in the repository"):
        tools.read_file(path)


def test_list_files_hides_git_excluded_and_outside(tools: RepoTools) -> None:
    # link_in stays (its target is inside); link_git, link_out and dir_out do not
    assert tools.list_files() == "README.md\nlink_in\nsrc/app.py\n"
    assert tools.list_files(glob="*.py") == "src/app.py\n"
    assert tools.list_files("src") == "src/app.py\n"
    with pytest.raises(ToolError, match="does not exist"):
        tools.list_files(".git")


def test_search_sees_only_visible_files(tools: RepoTools) -> None:
    assert tools.search_code("TOKEN_MARKER") == "README.md:2: TOKEN_MARKER in docs\n"


def test_search_is_literal_unless_regex(tools: RepoTools) -> None:
    assert tools.search_code("os.getcwd()") == "src/app.py:4: return os.getcwd()\n"
    assert tools.search_code("o.\\.getcwd") .startswith("No matches")
    assert tools.search_code(r"def \w+\(", regex=True) == "src/app.py:3: def main():\n"
    assert tools.search_code("import", glob="*.md").startswith("No matches")


@pytest.mark.parametrize("pattern", ["(a+)+$", r"(\w*x)*y", "(a|aa){2,}", r"(x\d*)+"])
def test_catastrophic_regexes_are_refused(tools: RepoTools, pattern: str) -> None:
    with pytest.raises(ToolError, match="Nested quantifiers"):
        tools.search_code(pattern, regex=True)


def test_invalid_regex(tools: RepoTools) -> None:
    with pytest.raises(ToolError, match="Invalid regular expression"):
        tools.search_code("(", regex=True)


def test_binary_files_are_not_read(repo: Path, tools: RepoTools) -> None:
    (repo / "blob.bin").write_bytes(b"\x00\x01\x02")
    with pytest.raises(ToolError, match="binary"):
        tools.read_file("blob.bin")


def test_read_is_capped_in_lines_and_bytes(repo: Path, tools: RepoTools) -> None:
    (repo / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 1001)))
    out = tools.read_file("big.txt")
    assert f"(lines 1-{MAX_READ_LINES} of 1000)" in out
    assert out.endswith(f"[{1000 - MAX_READ_LINES} more lines; call read_file with start_line="
                        f"{MAX_READ_LINES + 1}]\n")
    (repo / "wide.txt").write_text(("x" * 1000 + "\n") * 300)
    wide = tools.read_file("wide.txt")
    assert len(wide.encode()) < tools_module.MAX_OUTPUT_BYTES + 200
    assert "[output truncated at" in wide


def test_search_and_list_are_capped(repo: Path, tools: RepoTools) -> None:
    many = repo / "many"
    many.mkdir()
    for i in range(MAX_LIST_ENTRIES + 5):
        (many / f"f{i:04d}.txt").write_text("needle\n")
    hits = tools.search_code("needle")
    assert hits.count("needle") == MAX_MATCHES
    assert hits.endswith(f"[first {MAX_MATCHES} matches shown; narrow the search]\n")
    listing = tools.list_files("many")
    assert listing.count("\n") == MAX_LIST_ENTRIES + 1
    assert listing.endswith("[5 more files; narrow with dir or glob]\n")


def test_call_validates_arguments(tools: RepoTools) -> None:
    assert "     1\timport os\n[3 more" in tools.call("read_file", {"path": "src/app.py", "end_line": 1})
    with pytest.raises(ToolError, match="no parameter 'mode'"):
        tools.call("read_file", {"path": "src/app.py", "mode": "w"})
    with pytest.raises(ToolError, match="start_line must be a int"):
        tools.call("read_file", {"path": "src/app.py", "start_line": "3"})
    with pytest.raises(ToolError, match="needs 'pattern'"):
        tools.call("search_code", {})
    with pytest.raises(ToolError, match="no tool named 'write_file'"):
        tools.call("write_file", {})


def test_read_file_shows_exact_text_with_specials_marked(repo: Path, tools: RepoTools) -> None:
    """Issue 15: read_file passed U+202E and HTML comments on unmarked; now it shows what an
    excerpt shows (`ci_agent.exact`): the text exactly, each special character as a marker."""
    (repo / "src" / "trojan.py").write_text(
        "\ufeff# <!-- hidden? no -->\naccess = 'user\u202e \u2066# admin\u2069'\r\nlast\u2028same line\n",
        encoding="utf-8")
    assert tools.read_file("src/trojan.py") == (
        "src/trojan.py (lines 1-3 of 3)\n"
        "     1\t\u27e6U+FEFF\u27e7# <!-- hidden? no -->\n"
        "     2\taccess = 'user\u27e6U+202E\u27e7 \u27e6U+2066\u27e7# admin\u27e6U+2069\u27e7'"
        "\u27e6U+000D\u27e7\n"  # a CR in a file whose other lines end in LF alone
        "     3\tlast\u27e6U+2028\u27e7same line\n"  # one line to git, so one line here (was two)
    )
    assert tools.search_code("user\u27e6U+202E\u27e7") == tools.search_code("admin")  # as shown
    hit = tools.search_code("admin")
    assert hit == ("src/trojan.py:2: access = 'user\u27e6U+202E\u27e7 \u27e6U+2066\u27e7# admin"
                   "\u27e6U+2069\u27e7'\n")


def test_read_file_names_the_lines_a_secret_was_cut_from(repo: Path) -> None:
    canary = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    (repo / "src" / "conf.py").write_text(f"URL = 'x'\nTOKEN = '{canary}'\nB = 2\n", encoding="utf-8")
    tools = RepoTools(repo, redact=Redactor.from_environ({}))
    out = tools.read_file("src/conf.py")
    assert canary not in out and "     2\tTOKEN = '[REDACTED:" in out
    assert out.endswith("[line 2: a secret replaced by [REDACTED:...], so not the file's text; "
                        "do not use it as diff context]\n")
