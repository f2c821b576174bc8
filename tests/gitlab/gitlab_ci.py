"""What GitLab does with an include file before it runs anything, as far as our files need it:
split the `spec:` header from the body, interpolate `$[[ inputs.name ]]`, and evaluate `rules: if:`.

Interpolation (https://docs.gitlab.com/ci/inputs/): every input without a `default` must be
given; a given input the header does not declare is an error ("unknown input arguments"), so is
a body reference to an undeclared one ("unknown interpolation key"); `type: number`/`boolean`
values are checked, so are `options`. A node that is exactly one interpolation block takes the
input's typed value (gitlab-org/gitlab!144065); inside a longer string the value is written as
text. Keys are interpolated like values.

Rules (https://docs.gitlab.com/ci/jobs/job_rules/): the first rule whose `if` holds (or that has
no `if`) decides, its `when` defaulting to on_success; no rule matching leaves the job out. The
expression subset: `$VAR` (true when set and not empty), `==`/`!=` against "strings", null or
another `$VAR` (an unset variable is null), `=~`/`!~` against /regex/ (an unset variable matches
nothing), `&&` binding tighter than `||`, parentheses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

_BLOCK = re.compile(r"\$\[\[\s*(.*?)\s*\]\]")
_INPUT_REF = re.compile(r"inputs\.([A-Za-z0-9_-]+)")


class CiConfigError(ValueError):
    """The pipeline could not be created: GitLab shows this message instead."""


def split(text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(header, body): the two YAML documents of an include file with a `spec:` header."""
    docs = list(yaml.safe_load_all(text))
    if len(docs) != 2 or not isinstance(docs[0], dict) or set(docs[0]) != {"spec"}:
        raise CiConfigError("expected a `spec:` header, `---`, then the configuration")
    if not isinstance(docs[1], dict):
        raise CiConfigError("the configuration is not a mapping")
    return docs[0], docs[1]


def _check_value(name: str, spec: Mapping[str, Any], value: Any) -> Any:
    kind = spec.get("type", "string")
    if kind == "number" and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise CiConfigError(f"`{name}` input: provided value is not a number")
    if kind == "boolean" and not isinstance(value, bool):
        raise CiConfigError(f"`{name}` input: provided value is not a boolean")
    if kind == "string" and not isinstance(value, str):
        raise CiConfigError(f"`{name}` input: provided value is not a string")
    if "options" in spec and value not in spec["options"]:
        raise CiConfigError(f"`{name}` input: `{value}` cannot be used because it is not in the list of "
                            "allowed options")
    return value


def resolve_inputs(header: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    specs: Mapping[str, Any] = header["spec"].get("inputs") or {}
    unknown = sorted(set(given) - set(specs))
    if unknown:
        raise CiConfigError(f"unknown input arguments: {', '.join(unknown)}")
    values: dict[str, Any] = {}
    for name, spec in specs.items():
        spec = spec or {}
        if name in given:
            values[name] = _check_value(name, spec, given[name])
        elif "default" in spec:
            values[name] = _check_value(name, spec, spec["default"])
        else:
            raise CiConfigError(f"`{name}` input: required value has not been provided")
    return values


def variable_text(value: Any) -> str:
    """What a job sees in its environment for a YAML value (GitLab writes booleans in lower case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _interpolate(node: Any, values: Mapping[str, Any]) -> Any:
    if isinstance(node, dict):
        return {_interpolate(k, values): _interpolate(v, values) for k, v in node.items()}
    if isinstance(node, list):
        return [_interpolate(item, values) for item in node]
    if not isinstance(node, str) or "$[[" not in node:
        return node

    def lookup(expression: str) -> Any:
        match = _INPUT_REF.fullmatch(expression)
        if match is None or match.group(1) not in values:
            raise CiConfigError(f"unknown interpolation key: `{expression}`")
        return values[match.group(1)]

    whole = _BLOCK.fullmatch(node)
    if whole is not None:
        return lookup(whole.group(1))
    return _BLOCK.sub(lambda m: variable_text(lookup(m.group(1))), node)


def render(text: str, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The configuration GitLab gets from including `text` with `inputs: given`."""
    header, body = split(text)
    rendered = _interpolate(body, resolve_inputs(header, given or {}))
    assert isinstance(rendered, dict)
    return rendered


# --------------------------------------------------------------------------- rules


_TOKEN = re.compile(r"\s*(?:(?P<var>\$[A-Za-z_][A-Za-z0-9_]*)|(?P<str>\"[^\"]*\"|'[^']*')"
                    r"|(?P<re>/(?:\\.|[^/\\])*/)|(?P<null>null\b)|(?P<op>==|!=|=~|!~|&&|\|\||[()]))")


def _tokens(text: str) -> list[tuple[str, str]]:
    found, pos, end = [], 0, len(text.rstrip())
    while pos < end:
        match = _TOKEN.match(text, pos)
        if match is None:
            raise CiConfigError(f"cannot read rules expression at {text[pos:pos + 20]!r}")
        kind = match.lastgroup
        assert kind is not None
        found.append((kind, match.group(kind)))
        pos = match.end()
    return found


class _Parser:
    def __init__(self, text: str, env: Mapping[str, str]) -> None:
        self.tokens = _tokens(text)
        self.pos = 0
        self.env = env

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise CiConfigError("rules expression ends too early")
        self.pos += 1
        return token

    def parse(self) -> bool:
        value = self.or_()
        if self.peek() is not None:
            raise CiConfigError(f"unexpected {self.peek()} in rules expression")
        return value

    def or_(self) -> bool:
        value = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            right = self.and_()
            value = value or right
        return value

    def and_(self) -> bool:
        value = self.atom()
        while self.peek() == ("op", "&&"):
            self.take()
            right = self.atom()
            value = value and right
        return value

    def operand(self) -> str | None:
        kind, text = self.take()
        if kind == "var":
            return self.env.get(text[1:])
        if kind == "str":
            return text[1:-1]
        if kind == "null":
            return None
        raise CiConfigError(f"expected a value, got {text!r}")

    def atom(self) -> bool:
        if self.peek() == ("op", "("):
            self.take()
            value = self.or_()
            if self.take() != ("op", ")"):
                raise CiConfigError("missing )")
            return value
        left = self.operand()
        token = self.peek()
        if token is None or token[0] != "op" or token[1] not in ("==", "!=", "=~", "!~"):
            return bool(left)  # a lone variable: set and not empty
        op = self.take()[1]
        if op in ("==", "!="):
            right = self.operand()
            return (left == right) if op == "==" else (left != right)
        kind, pattern = self.take()
        if kind != "re":
            raise CiConfigError(f"{op} needs a /regex/, got {pattern!r}")
        matched = left is not None and re.search(pattern[1:-1].replace("\\/", "/"), left) is not None
        return matched if op == "=~" else not matched


def holds(expression: str, env: Mapping[str, str]) -> bool:
    return _Parser(expression, env).parse()


def job_when(job: Mapping[str, Any], env: Mapping[str, str]) -> str:
    """`never` when the job is not added to the pipeline, else its `when` for these variables."""
    rules = job.get("rules")
    if rules is None:
        return str(job.get("when", "on_success"))
    for rule in rules:
        if "if" not in rule or holds(str(rule["if"]), env):
            return str(rule.get("when", "on_success"))
    return "never"
