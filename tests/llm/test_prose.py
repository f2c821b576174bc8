"""The prose the model reads lives in templates: each macro is used by the code that fills it,
and a value the code forgot is an error, never an empty string in a prompt."""

from __future__ import annotations

import re
from pathlib import Path

import jinja2
import pytest

from ci_agent.render.prose import Prose, render_template

PACKAGE = Path(__file__).resolve().parents[2] / "ci_agent"
# template of macros -> the modules that fill it
USERS = {
    "attempts.md.j2": ["llm/prompt.py"],
    "language.md.j2": ["llm/prompt.py"],
    "conversation.md.j2": ["llm/loop.py"],
    "review.md.j2": ["review/text.py"],
    "tools.md.j2": ["llm/tools.py"],
    "context.md.j2": ["context/gather.py", "context/fit.py", "context/render.py", "context/history_read.py"],
}
HELPERS = {"names"}  # macros the templates call themselves


@pytest.mark.parametrize("template", USERS)
def test_every_macro_is_used_by_the_code_that_fills_its_template(template: str) -> None:
    code = "".join((PACKAGE / module).read_text(encoding="utf-8") for module in USERS[template])
    called = set(re.findall(r"""\(\s*"(\w+)"[,)]""", code))
    assert Prose(template).macros() - HELPERS <= called, "macros no code calls"
    assert Prose(template).macros(), template


def test_every_template_is_known_here() -> None:
    whole_texts = {"system.md.j2", "user.md.j2", "guidance.md.j2",  # rendered as they stand
                   "review_system.md.j2", "review_user.md.j2"}
    macro_files = {p.name for p in (PACKAGE / "templates").glob("*.j2")} - whole_texts
    assert macro_files == set(USERS)


def test_a_missing_value_is_an_error() -> None:
    with pytest.raises(jinja2.UndefinedError):
        Prose("attempts.md.j2")("attempt_number", number=2)
    with pytest.raises(jinja2.UndefinedError):
        render_template("user.md.j2", report="R", context="")


def test_a_piece_carries_no_newline_of_the_template_file() -> None:
    assert Prose("attempts.md.j2")("attempt_number", number=2, max_attempts=3) == "This is attempt 2 of 3."
    assert Prose("tools.md.j2")("missing", path="a b.py") == (
        "'a b.py' does not exist in the repository (or is excluded from what you may read).")
