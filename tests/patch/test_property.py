"""Property: whatever diff arrives — valid, mangled the way models mangle, or corrupted — the
engine either rejects it with the tree untouched or applies it cleanly. Never a partial tree.

Valid diffs come from difflib (an independent generator, not our renderer), against files with
LF, CRLF and no final newline; the forgivable manglings (no a/ b/ prefixes, CRLF transport,
prose and fences around it) must still apply and give exactly the intended content.
"""

from __future__ import annotations

import difflib
import os
import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ci_agent.config import PatchSettings
from ci_agent.patch import apply_patch
from tests.patch.conftest import Repo, make_repo

WORDS = ["alpha", "beta", "gamma", "", "{", "}", "    return x;", "delta", "alpha"]
FILES = {  # name -> (line break, final newline)
    "lf.txt": ("\n", True),
    "crlf.cs": ("\r\n", True),
    "noeol.py": ("\n", False),
    "dir with space/ü.txt": ("\n", True),
}


def _content(seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.choice(WORDS)} {n}" if n % 3 else rng.choice(WORDS) for n in range(30)]


ORIGINAL = {name: _content(k) for k, name in enumerate(FILES)}


def _encode(name: str, lines: list[str]) -> bytes:
    eol, final = FILES[name]
    text = eol.join(lines) + (eol if final and lines else "")
    return text.encode()


@pytest.fixture(scope="module")
def prop_repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    root: Path = tmp_path_factory.mktemp("prop") / "r"
    return make_repo(root, {name: _encode(name, lines) for name, lines in ORIGINAL.items()})


edit = st.tuples(
    st.sampled_from(sorted(FILES)),
    st.integers(0, 32),  # where
    st.integers(0, 3),  # lines removed
    st.lists(st.sampled_from([*WORDS, "new line", "x = 1"]), max_size=3),  # lines added
)
FORGIVEN = ["none", "no-prefix", "crlf-transport", "prose-and-fence"]
CORRUPT = ["counts", "context", "drop-line", "truncate", "junk-line", "duplicate-hunk", "hostile-path"]


def _apply_edits(edits: list[tuple[str, int, int, list[str]]]) -> dict[str, list[str]]:
    result = {name: list(lines) for name, lines in ORIGINAL.items()}
    for name, where, removed, added in edits:
        lines = result[name]
        at = min(where, len(lines))
        lines[at : at + removed] = added
    return result


def _difflib_patch(new: dict[str, list[str]]) -> str:
    parts = []
    for name in sorted(FILES):
        if new[name] != ORIGINAL[name]:
            parts += difflib.unified_diff(ORIGINAL[name], new[name], f"a/{name}", f"b/{name}", lineterm="")
    return "\n".join(parts) + "\n"


def _mangle(text: str, how: str, rnd: random.Random) -> str:
    lines = text.split("\n")
    body = [k for k, line in enumerate(lines)
            if line[:1] in (" ", "+", "-") and not line.startswith(("---", "+++"))]
    if how == "no-prefix":
        return re.sub(r"^(---|\+\+\+) [ab]/", r"\1 ", text, flags=re.M)
    if how == "crlf-transport":
        return text.replace("\n", "\r\n")
    if how == "prose-and-fence":
        return f"The fix:\n\n```diff\n{text}```\n\n- this explains the change\n"
    if how == "counts":
        return re.sub(r"^@@ -(\d+),?\d* \+(\d+),?\d* @@",
                      lambda m: f"@@ -{m[1]},{rnd.randint(0, 9)} +{m[2]},{rnd.randint(0, 9)} @@",
                      text, count=1, flags=re.M)
    if how == "context" and body:
        k = rnd.choice(body)
        if lines[k][0] in " -":
            lines[k] += " changed"
    elif how == "drop-line" and body:
        del lines[rnd.choice(body)]
    elif how == "truncate":
        return text[: rnd.randint(0, len(text))]
    elif how == "junk-line":
        junk = rnd.choice(["@@ nonsense", "+++ b/x", "GIT binary patch", "~~~"])
        lines.insert(rnd.randint(0, len(lines)), junk)
    elif how == "duplicate-hunk":
        return text + text[text.find("@@"):] if "@@" in text else text
    elif how == "hostile-path":
        return text.replace("b/lf.txt", "b/../lf.txt", 1).replace("a/crlf.cs", "a/.git/config", 1)
    return "\n".join(lines)


def _expected(name: str, lines: list[str]) -> bytes:
    return _encode(name, lines)


_DIRTY: set[bool] = set()


# PATCH_PROP_EXAMPLES=1000 for a longer local hunt; the suite stays fast with 50
EXAMPLES = int(os.environ.get("PATCH_PROP_EXAMPLES", "50"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(edit, min_size=1, max_size=3), how=st.sampled_from(FORGIVEN + CORRUPT),
       seed=st.integers(0, 2**16))
def test_rejected_or_applied_cleanly_never_partial(
    prop_repo: Repo, edits: list[tuple[str, int, int, list[str]]], how: str, seed: int
) -> None:
    if _DIRTY:  # only after an applied example: a rejected one left the tree as it was
        prop_repo.git("reset", "-q", "--hard")
        _DIRTY.clear()
    new = _apply_edits(edits)
    text = _mangle(_difflib_patch(new), how, random.Random(seed))
    before = prop_repo.snapshot()
    verdict = apply_patch(text, prop_repo.path, PatchSettings())
    after = prop_repo.snapshot()
    event(f"{how}: {'applied' if verdict.ok else 'rejected'}")
    changed = {name for name in FILES if new[name] != ORIGINAL[name]}
    if not verdict.ok:
        assert after == before, f"rejected ({verdict.rejections}) but the tree changed"
        assert how not in FORGIVEN or not changed, f"a forgivable patch was rejected: {verdict.rejections}"
        return
    _DIRTY.add(True)
    # applied: the work tree and the index agree, and only the patch's files changed
    assert prop_repo.git("diff", "--name-only", "-z") == ""  # nothing left unstaged
    assert prop_repo.git("ls-files", "--others", "-z") == ""  # no stray files (.rej, .orig)
    staged = set(filter(None, prop_repo.git("diff", "--cached", "--name-only", "-z").split("\0")))
    assert staged <= set(verdict.files)
    for name in FILES:
        if name not in verdict.files:
            assert prop_repo.read(name) == _encode(name, ORIGINAL[name])
    if how in FORGIVEN:
        assert set(verdict.files) == changed
        for name in changed:
            got, want = prop_repo.read(name), _expected(name, new[name])
            if FILES[name][1]:
                assert got == want, name
            else:  # a file without a final newline may gain one where the patch appends lines
                assert got.rstrip(b"\n") == want.rstrip(b"\n"), name


TOKENS = ["diff --git a/x b/x", "--- a/x", "+++ b/x", "--- /dev/null", "+++ /dev/null", "@@ -1,2 +1,2 @@",
          "@@ -0,0 +1 @@", "@@", " ctx", "-old", "+new", "", "\\ No newline at end of file", "```diff", "```",
          "rename from x", "rename to y", "new file mode 100644", "old mode 100644", "new mode 100755",
          "GIT binary patch", 'diff --git "a/\\303" "b/\\3', "prose", "\r", "index 1..2"]


@settings(max_examples=int(os.environ.get("PATCH_FUZZ_EXAMPLES", "300")), deadline=None)
@given(parts=st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=12)), max_size=25))
def test_parser_never_raises_anything_but_its_own_error(parts: list[str]) -> None:
    from ci_agent.config import PatchSettings as PS
    from ci_agent.patch.extract import extract_diff
    from ci_agent.patch.gates import run_gates
    from ci_agent.patch.parse import PatchParseError, parse_patch
    from ci_agent.patch.policy import police
    from ci_agent.patch.render import render_patch

    text = extract_diff("\n".join(parts))
    try:
        patch = parse_patch(text)
    except PatchParseError:
        return
    police(patch, PS())
    run_gates(patch, PS().gates)
    rendered = render_patch(patch)
    assert parse_patch(rendered).paths == patch.paths  # what git reads names the same files
