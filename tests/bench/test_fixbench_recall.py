"""Context recall on hand-made requests where the answer is known (bench/fixbench/fixmetrics.py)."""

from __future__ import annotations

from typing import Any

import pytest
from fixmetrics import estimate_tokens, files_shown, fix_shape, passages, request_text, shown_targets, shows

BROKEN = {
    "shop/cart.py": [
        "from shop.money import fmt",        # 1
        "",                                  # 2
        "def total(items):",                 # 3
        "    s = 0",                         # 4
        "    for item in items:",            # 5
        "        s += item.price",           # 6
        "    return s",                      # 7
        "",                                  # 8
        "def label(items):",                 # 9
        "    return fmt(total(items))",      # 10
        "",                                  # 11
        "def count(items):",                 # 12
        "    return s",                      # 13 (duplicate text of line 7)
    ],
    "shop/money.py": ["def fmt(cents):", "    return f'{cents / 100:.2f}'"],
    "include/x.h": ["int x(void);"],
}
# The true fix: line 6 replaced; a pure insertion after blank line 8 (anchored to line 7, the
# nearest non-blank above); line 13 removed; money.py line 2 changed.
FIX = "\n".join([
    'diff --git a/shop/cart.py b/shop/cart.py',
    '--- a/shop/cart.py',
    '+++ b/shop/cart.py',
    '@@ -5,9 +5,10 @@ def total(items):',
    '     for item in items:',
    '-        s += item.price',
    '+        s += item.price * item.quantity',
    '     return s',
    ' ',
    '+',
    ' def label(items):',
    '     return fmt(total(items))',
    ' ',
    ' def count(items):',
    '-    return s',
    '+    return len(items)',
    'diff --git a/shop/money.py b/shop/money.py',
    '--- a/shop/money.py',
    '+++ b/shop/money.py',
    '@@ -1,2 +1,2 @@',
    ' def fmt(cents):',
    "-    return f'{cents / 100:.2f}'",
    "+    return f'{cents / 100:,.2f}'",
]) + "\n"


def _request(user_text: str) -> dict[str, Any]:
    return {"system": "You fix builds.", "messages": [{"role": "user", "content": [
        {"type": "text", "text": user_text}]}]}


def _recall(user_text: str) -> tuple[list[bool], dict[str, bool], dict[str, bool]]:
    shape = fix_shape(FIX, BROKEN)
    found = passages(request_text(_request(user_text)), BROKEN)
    paths = shape.files
    return (shown_targets(shape.targets, found, BROKEN),
            files_shown(paths, found, BROKEN, outside_diff=False),
            files_shown(paths, found, BROKEN, outside_diff=True))


def test_targets_are_removed_lines_and_the_line_an_insertion_follows() -> None:
    shape = fix_shape(FIX, BROKEN)
    assert [(t.path, t.line, t.kind) for t in shape.targets] == [
        ("shop/cart.py", 6, "removed"), ("shop/cart.py", 7, "anchor"), ("shop/cart.py", 13, "removed"),
        ("shop/money.py", 2, "removed")]
    assert shape.files == ["shop/cart.py", "shop/money.py"]


def _excerpt(path: str, first: int, last: int, gutter: str) -> str:
    rows = [gutter.format(n=n) + BROKEN[path][n - 1] for n in range(first, last + 1)]
    return "\n".join([f"### {path} (lines {first}-{last})", *rows])


@pytest.mark.parametrize("gutter", ["{n:>2} | ", "{n}: ", "", "L{n}\t"])
def test_recall_does_not_depend_on_the_excerpt_line_format(gutter: str) -> None:
    # cart.py lines 3-10 are excerpted (targets 6 and 7 shown); line 13 is not; money.py only named.
    text = "FAILED test_total\n  shop/money.py:2: in fmt\n\n" + _excerpt("shop/cart.py", 3, 10, gutter)
    shown, anywhere, excerpted = _recall(text)
    assert shown == [True, True, False, False]
    assert anywhere == {"shop/cart.py": True, "shop/money.py": False}
    assert excerpted == anywhere


def test_a_duplicate_line_needs_its_neighbour() -> None:
    # "    return s" alone (line 13's text is also line 7's) does not show line 13 ...
    alone = _recall("### shop/cart.py\n 13 |     return s\n")[0]
    assert alone[2] is False
    # ... with its neighbour (line 12) it does
    assert _recall(_excerpt("shop/cart.py", 12, 13, "{n:>2} | "))[0][2] is True


def test_a_diff_shows_its_context_and_added_lines_not_its_removed_ones() -> None:
    diff = "\n".join([
        "diff --git a/shop/money.py b/shop/money.py", "--- a/shop/money.py", "+++ b/shop/money.py",
        "@@ -1,2 +1,2 @@", " def fmt(cents):", "-    return cents", "+    return f'{cents / 100:.2f}'"])
    shown, anywhere, excerpted = _recall(diff)
    assert shown == [False, False, False, True]
    assert anywhere["shop/money.py"] is True and excerpted["shop/money.py"] is False
    removed_only = diff.replace("+    return f'{cents / 100:.2f}'", "-    return f'{cents / 100:.2f}'")
    assert _recall(removed_only)[0][3] is False


def test_a_line_naming_another_file_inside_an_excerpt_does_not_switch_file() -> None:
    files = {"main.c": ['#include "include/x.h"', "int main(void) { return x(); }"],
             "include/x.h": ["int x(void);"]}
    text = '### main.c\n1 | #include "include/x.h"\n2 | int main(void) { return x(); }\n'
    found = passages(text, files)
    assert [(p.path, len(p.lines)) for p in found] == [("main.c", 2)]


def test_shows_wants_the_whole_text_after_a_short_gutter() -> None:
    assert shows(" 6 |         s += item.price", "        s += item.price")
    assert not shows(" 6 |     s += item.price", "        s += item.price")  # indentation differs
    assert not shows("total_price = 1", "price = 1")  # the gutter runs into the text
    assert not shows("x" * 30 + " = 1", " = 1")


def test_a_created_file_has_no_targets_and_an_insertion_at_the_top_anchors_to_line_one() -> None:
    diff = ("--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x = 1\n"
            "--- a/shop/money.py\n+++ b/shop/money.py\n@@ -0,0 +1 @@\n+import math\n")
    shape = fix_shape(diff, BROKEN)
    assert shape.created == ["new.py"]
    assert [(t.path, t.line, t.kind) for t in shape.targets] == [("shop/money.py", 1, "anchor")]


def test_tokens_are_estimated_as_a_quarter_of_the_bytes() -> None:
    assert estimate_tokens(0) == 0 and estimate_tokens(1) == 1 and estimate_tokens(4000) == 1000
