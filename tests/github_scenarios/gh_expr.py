"""A small evaluator of GitHub Actions `if:` expressions, for the workflow templates' conditions.

Enough of the documented language for our templates: literals (`'text'`, numbers, true, false,
null), context paths (`github.event.workflow_run.conclusion`), `!`, `==`, `!=`, `&&`, `||`,
parentheses, and the functions `startsWith`, `endsWith`, `contains`, `success()`, `failure()`,
`always()`, `cancelled()`. As GitHub does: string comparison ignores case, a missing property is
null, `&&`/`||` return an operand, and an `if:` without a status function means `success() && (...)`.
https://docs.github.com/actions/learn-github-actions/expressions
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||[!(),])"
                    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_*][A-Za-z0-9_-]*)*))")
_STATUS = {"success", "failure", "always", "cancelled"}


def _tokens(text: str) -> list[tuple[str, str]]:
    text = text.strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2]
    found, pos = [], 0
    while pos < len(text.rstrip()):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ValueError(f"cannot read expression at {text[pos:pos + 20]!r}")
        kind = match.lastgroup or ""
        found.append((kind, match.group(kind)))
        pos = match.end()
    return found


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    return bool(a == b)


class _Parser:
    def __init__(self, text: str, context: Mapping[str, Any], status: str) -> None:
        self.tokens = _tokens(text)
        self.pos = 0
        self.context = context
        self.status = status  # "success" | "failure" | "cancelled": how the job's steps went

    def parse(self) -> Any:
        value = self._or()
        if self.pos != len(self.tokens):
            raise ValueError(f"unexpected {self.tokens[self.pos][1]!r}")
        return value

    def _peek(self) -> str:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else ""

    def _take(self, expected: str | None = None) -> tuple[str, str]:
        token = self.tokens[self.pos]
        if expected is not None and token[1] != expected:
            raise ValueError(f"expected {expected!r}, got {token[1]!r}")
        self.pos += 1
        return token

    def _or(self) -> Any:
        value = self._and()
        while self._peek() == "||":
            self._take()
            right = self._and()
            value = value or right
        return value

    def _and(self) -> Any:
        value = self._not()
        while self._peek() == "&&":
            self._take()
            right = self._not()
            value = value and right
        return value

    def _not(self) -> Any:
        if self._peek() == "!":
            self._take()
            return not self._not()
        left = self._primary()
        if self._peek() in ("==", "!="):
            op = self._take()[1]
            right = self._primary()
            return _equal(left, right) if op == "==" else not _equal(left, right)
        return left

    def _primary(self) -> Any:
        kind, text = self._take()
        if text == "(":
            value = self._or()
            self._take(")")
            return value
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return float(text)
        if text in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[text]
        if self._peek() == "(":
            return self._call(text)
        return self._lookup(text)

    def _call(self, name: str) -> Any:
        self._take("(")
        args: list[Any] = []
        while self._peek() != ")":
            args.append(self._or())
            if self._peek() == ",":
                self._take()
        self._take(")")
        low = name.lower()
        if low in _STATUS:
            return {"success": self.status == "success", "failure": self.status == "failure",
                    "always": True, "cancelled": self.status == "cancelled"}[low]
        a, b = (str(x if x is not None else "").lower() for x in args[:2])
        if low == "startswith":
            return a.startswith(b)
        if low == "endswith":
            return a.endswith(b)
        if low == "contains":
            return b in a
        raise ValueError(f"function {name} is not supported here")

    def _lookup(self, path: str) -> Any:
        value: Any = self.context
        for key in path.split("."):
            value = value.get(key) if isinstance(value, Mapping) else None
        return value


def evaluate_if(condition: str | bool | None, context: Mapping[str, Any], status: str = "success") -> bool:
    """Whether a job or step with this `if:` runs, given the contexts and how earlier steps went."""
    if condition is None:
        return status == "success"
    if isinstance(condition, bool):
        return condition and status == "success"
    value = _Parser(condition, context, status).parse()
    if not re.search(r"\b(success|failure|always|cancelled)\s*\(", condition):
        return status == "success" and bool(value)
    return bool(value)
