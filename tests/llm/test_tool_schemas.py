"""tools.json, the tools as data: loaded and checked once, and equal to what the tools implement."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ci_agent.llm import loop, tools
from ci_agent.llm.tool_schemas import (
    ANSWER_TOOLS,
    READ_ONLY_TOOLS,
    ToolSchemaError,
    checked,
    parameter_types,
    required_parameters,
    tool_definitions,
)
from ci_agent.llm.tools import RepoTools, ToolError

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "ci_agent" / "templates" / "tools.json"


def _file() -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return loaded


def _schema(name: str) -> dict[str, Any]:
    return next(t["input_schema"] for t in _file() if t["name"] == name)


def test_the_request_carries_the_file_as_it_is() -> None:
    assert tool_definitions() == _file()
    assert [t["name"] for t in _file()] == [*READ_ONLY_TOOLS, *ANSWER_TOOLS]


def test_a_caller_cannot_change_the_schemas_through_its_copy() -> None:
    mine = tool_definitions()
    mine[0]["input_schema"]["properties"].clear()
    assert tool_definitions() == _file()


@pytest.mark.parametrize("tool", [t["name"] for t in _file()])
def test_every_input_schema_is_a_json_schema(tool: str) -> None:
    jsonschema.Draft202012Validator.check_schema(_schema(tool))


@pytest.mark.parametrize("tool", READ_ONLY_TOOLS)
def test_a_read_only_tool_takes_what_its_schema_says(tool: str) -> None:
    """The method's parameters are the schema's properties, in order, with the schema's types;
    the ones without a default are the schema's required ones."""
    params = list(inspect.signature(getattr(RepoTools, tool)).parameters.values())[1:]
    properties = _schema(tool)["properties"]
    assert [p.name for p in params] == list(properties)
    required = [p.name for p in params if p.default is inspect.Parameter.empty]
    assert required == _schema(tool).get("required", [])
    for param in params:
        assert str(param.annotation).split(" | ")[0] == parameter_types(tool)[param.name].__name__


def test_the_answer_tools_take_what_the_loop_reads() -> None:
    fields = [f.name for f in dataclasses.fields(loop._Submission)]
    assert list(_schema("submit_patch")["properties"]) == fields == _schema("submit_patch")["required"]
    assert list(_schema("give_up")["properties"]) == ["reason"]


def test_call_checks_arguments_against_the_schema(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    tools = RepoTools(tmp_path)
    assert required_parameters("search_code") == ("pattern",)
    with pytest.raises(ToolError, match="search_code needs 'pattern'"):
        tools.call("search_code", {"glob": "*.py"})
    with pytest.raises(ToolError, match="read_file: start_line must be a int"):
        tools.call("read_file", {"path": "a.py", "start_line": "1"})
    with pytest.raises(ToolError, match="list_files has no parameter 'depth'"):
        tools.call("list_files", {"depth": 2})
    with pytest.raises(ToolError, match="There is no tool named 'submit_patch'"):
        tools.call("submit_patch", {})


def _broken(change: Any) -> list[dict[str, Any]]:
    tools = copy.deepcopy(_file())
    change(tools)
    return tools


@pytest.mark.parametrize("tools", [
    [],
    _broken(lambda t: t.append(copy.deepcopy(t[0]))),  # a name twice
    _broken(lambda t: t.pop()),  # no give_up
    _broken(lambda t: t[0]["input_schema"].pop("additionalProperties")),  # an open object
    _broken(lambda t: t[0]["input_schema"]["required"].append("nowhere")),
    _broken(lambda t: t[0]["input_schema"]["properties"]["path"].update(type="path")),
    _broken(lambda t: t[0].update(cache_control={"type": "ephemeral"})),  # not ours to set here
    _broken(lambda t: t[3]["input_schema"]["properties"]["confidence"].pop("description")),
])
def test_a_broken_schema_file_is_refused(tools: list[dict[str, Any]]) -> None:
    with pytest.raises(ToolSchemaError):
        checked(tools)


# --------------------------------------------------------------------------- issue 15: limits told


def _told(tool: str) -> str:
    """Everything the model reads about a tool: its description and its arguments'."""
    spec = next(t for t in _file() if t["name"] == tool)
    arguments = spec["input_schema"]["properties"].values()
    return " ".join([spec["description"], *(p["description"] for p in arguments)])


def _numbers(text: str) -> set[float]:
    return {float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", text)}


# Every number a read-only tool's description states is one of the limits `tools.py` enforces,
# and every limit that shapes its answer is stated.
LIMITS = {
    "read_file": {tools.MAX_READ_LINES, tools.MAX_OUTPUT_BYTES, tools.MAX_FILE_BYTES},
    "search_code": {tools.MAX_MATCHES, tools.MAX_OUTPUT_BYTES, tools.SEARCH_SECONDS, tools.MAX_FILE_BYTES,
                    tools.SEARCH_LINE_CHARS, tools.MAX_PATTERN},
    "list_files": {tools.MAX_LIST_ENTRIES, tools.MAX_OUTPUT_BYTES},
}


@pytest.mark.parametrize("tool", READ_ONLY_TOOLS)
def test_the_limits_in_a_description_are_the_tools_constants(tool: str) -> None:
    assert _numbers(_told(tool)) == {float(n) for n in LIMITS[tool]}


@pytest.mark.parametrize("tool", READ_ONLY_TOOLS)
def test_a_description_says_what_is_hidden_and_how_case_is_treated(tool: str) -> None:
    told = _told(tool)
    assert "`.git` and files excluded by the configuration" in told
    assert "case" in told
    if tool != "list_files":
        assert "Binary files" in told or "binary files" in told


def test_search_is_case_sensitive_as_described(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("Total = 1\n")
    (tmp_path / "B.PY").write_text("total = 2\n")
    repo = RepoTools(tmp_path)
    assert "case-sensitively" in _told("search_code") and "(?i)" in _told("search_code")
    assert repo.search_code("total") == "B.PY:1: total = 2\n"
    assert repo.search_code("(?i)total", regex=True) == "B.PY:1: total = 2\na.py:1: Total = 1\n"
    assert "No matches" in repo.search_code("total", glob="*.py")  # the glob is case-sensitive too


def test_every_argument_and_confidence_are_described() -> None:
    for tool in _file():
        for prop, spec in tool["input_schema"]["properties"].items():
            assert spec.get("description", "").strip(), f"{tool['name']}.{prop}"
    assert "0 to 1" in _schema("submit_patch")["properties"]["confidence"]["description"]
