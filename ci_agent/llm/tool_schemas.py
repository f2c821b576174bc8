"""The tools offered to the model, as data: `ci_agent/templates/tools.json`, loaded and checked once.

The file is the Messages API `tools` list exactly as sent (names, descriptions, JSON Schemas of
the inputs, in that order: the request's bytes and its prompt cache depend on it). Every
argument has a description, and the read-only tools' descriptions state their limits (the
numbers are `ci_agent.llm.tools`' constants; tests/llm/test_tool_schemas.py keeps them equal).
The read-only tools' argument checks (`RepoTools.call`) are derived from the same schemas, so
what the model is told a tool takes and what the tool accepts cannot drift apart.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ci_agent.render.prose import template_json

SCHEMA_FILE = "tools.json"
ANSWER_TOOLS = ("submit_patch", "give_up")  # the tools that end a conversation
_PYTHON_TYPES: dict[str, type] = {"string": str, "integer": int, "boolean": bool}
_JSON_TYPES = {"string", "integer", "number", "boolean", "array"}


class ToolSchemaError(ValueError):
    """tools.json is not a list of tools the Messages API and `RepoTools` can use."""


def _check_tool(tool: object) -> str:
    if not isinstance(tool, Mapping) or set(tool) != {"name", "description", "input_schema"}:
        raise ToolSchemaError(f"a tool needs exactly name, description and input_schema: {tool!r}")
    name, schema = tool["name"], tool["input_schema"]
    if not isinstance(name, str) or not isinstance(tool["description"], str) or not tool["description"]:
        raise ToolSchemaError(f"tool {name!r}: name and description must be non-empty text")
    if (not isinstance(schema, Mapping) or schema.get("type") != "object"
            or schema.get("additionalProperties") is not False
            or not isinstance(schema.get("properties"), Mapping)):
        raise ToolSchemaError(f"tool {name}: input_schema must be a closed object with properties")
    for prop, spec in schema["properties"].items():
        if not isinstance(spec, Mapping) or spec.get("type") not in _JSON_TYPES:
            raise ToolSchemaError(f"tool {name}: property {prop!r} has no known type")
        if not isinstance(spec.get("description"), str) or not spec["description"].strip():
            # what the model is not told it guesses: every argument says what it means
            raise ToolSchemaError(f"tool {name}: property {prop!r} has no description")
    if not set(schema.get("required", ())) <= set(schema["properties"]):
        raise ToolSchemaError(f"tool {name}: a required property is not defined")
    return name


def checked(tools: object) -> tuple[dict[str, Any], ...]:
    """`tools` as loaded from the file, or ToolSchemaError naming what is wrong with it."""
    if not isinstance(tools, list) or not tools:
        raise ToolSchemaError(f"{SCHEMA_FILE} must hold a non-empty list of tools")
    names = [_check_tool(tool) for tool in tools]
    if len(set(names)) != len(names) or not set(ANSWER_TOOLS) <= set(names):
        raise ToolSchemaError(f"tool names must be unique and include {', '.join(ANSWER_TOOLS)}: {names}")
    return tuple(tools)


_TOOLS = checked(template_json(SCHEMA_FILE))
_BY_NAME = {tool["name"]: tool for tool in _TOOLS}
READ_ONLY_TOOLS = tuple(tool["name"] for tool in _TOOLS if tool["name"] not in ANSWER_TOOLS)


def tool_definitions() -> list[dict[str, Any]]:
    """The `tools` of a request: a fresh copy (a caller may change its copy, never the schemas)."""
    return copy.deepcopy(list(_TOOLS))


def parameter_types(name: str) -> dict[str, type]:
    """A read-only tool's arguments and their Python types, in the schema's order."""
    properties = _BY_NAME[name]["input_schema"]["properties"]
    return {prop: _PYTHON_TYPES[spec["type"]] for prop, spec in properties.items()}


def required_parameters(name: str) -> tuple[str, ...]:
    return tuple(_BY_NAME[name]["input_schema"].get("required", ()))
