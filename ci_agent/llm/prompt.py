"""The request we send: one cached system block, the tools, the first user turn.

The system block is identical for every attempt on a repository (rules, team notes, language)
so it is cached with one `cache_control` breakpoint; with tools rendered before the system
block, that one breakpoint caches the tool definitions too. Everything that changes — the
report and context — goes into the user turn.
"""

from __future__ import annotations

from typing import Any

import jinja2

from ci_agent.llm.types import ModelSettings

EPHEMERAL = {"type": "ephemeral"}
UNVERIFIED_PREFIX = "unverified:"
READ_ONLY_TOOLS = ("read_file", "search_code", "list_files")
_LANGUAGES = {"en": "English", "es": "Spanish", "fr": "French", "de": "German", "pt": "Portuguese",
              "it": "Italian", "nl": "Dutch", "pl": "Polish", "ja": "Japanese", "zh": "Chinese",
              "ko": "Korean", "ru": "Russian", "uk": "Ukrainian", "tr": "Turkish", "sv": "Swedish"}

_env = jinja2.Environment(
    loader=jinja2.PackageLoader("ci_agent", "templates"),
    autoescape=False,  # Markdown for a model, not HTML
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)


def language_rule(language: str) -> str:
    code = language.strip()
    if code.casefold() == "match":
        return ("Write `summary`, `root_cause`, `assumptions`, `open_questions` and `give_up` "
                "reasons in the language the repository's own comments and messages are written "
                "in. Code, identifiers and diff stay as they are.")
    name = _LANGUAGES.get(code.casefold(), code)
    return (f"Write `summary`, `root_cause`, `assumptions`, `open_questions` and `give_up` "
            f"reasons in {name}. Code, identifiers and diff stay as they are.")


def system_text(settings: ModelSettings) -> str:
    return _env.get_template("system.md.j2").render(
        notes=[" ".join(n.split()) for n in settings.notes if n.strip()],  # one bullet each
        language_rule=language_rule(settings.language),
    )


def system_blocks(settings: ModelSettings) -> list[dict[str, Any]]:
    return [{"type": "text", "text": system_text(settings), "cache_control": dict(EPHEMERAL)}]


def user_text(report: str, context: str = "", previous_attempts: str = "") -> str:
    """The first user turn: previous attempts (if any) first, then the report and context.

    All three must already be redacted and sanitised by the caller."""
    return _env.get_template("user.md.j2").render(
        report=report.rstrip(), context=context.rstrip(), previous_attempts=previous_attempts.rstrip()
    )


def _string_list(description: str) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}, "description": description}


def tool_definitions() -> list[dict[str, Any]]:
    return [
        {
            "name": "read_file",
            "description": "Read a text file of the repository. Lines come numbered (number, tab, "
                           "text); the numbers are not part of the file. At most 400 lines per call.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Path from the repository root."},
                    "start_line": {"type": "integer", "minimum": 1},
                    "end_line": {"type": "integer", "minimum": 1},
                },
                "required": ["path"],
                "additionalProperties": False,
            },
        },
        {
            "name": "search_code",
            "description": "Search the repository's text files line by line; prints path:line: text "
                           "for up to 100 matches.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Literal text, or a Python regex "
                                "when regex is true."},
                    "glob": {"type": "string", "description": "Only files matching this glob, "
                             "e.g. *.cs or src/**/*.py."},
                    "regex": {"type": "boolean", "default": False},
                },
                "required": ["pattern"],
                "additionalProperties": False,
            },
        },
        {
            "name": "list_files",
            "description": "List the files under a directory (recursively), optionally filtered "
                           "by a glob.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "dir": {"type": "string", "description": "Directory from the repository root; "
                            "default: the root."},
                    "glob": {"type": "string"},
                },
                "additionalProperties": False,
            },
        },
        {
            "name": "submit_patch",
            "description": "Submit the fix. The patch is checked by policy and `git apply --check`; "
                           "if rejected you get the reasons and may submit again.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "diff": {"type": "string", "description": "A unified diff with paths relative "
                             "to the repository root."},
                    "summary": {"type": "string", "description": "What the patch changes, one "
                                "or two sentences."},
                    "root_cause": {"type": "string", "description": "Why the build or tests failed."},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                    "assumptions": _string_list('What you assumed; prefix with "unverified:" what '
                                                "you did not confirm by reading the code."),
                    "open_questions": _string_list("What you could not decide."),
                },
                "required": ["diff", "summary", "root_cause", "confidence", "assumptions",
                             "open_questions"],
                "additionalProperties": False,
            },
        },
        {
            "name": "give_up",
            "description": "Stop without a patch, when no safe fix exists or the failure is not "
                           "caused by the code.",
            "input_schema": {
                "type": "object",
                "properties": {"reason": {"type": "string"}},
                "required": ["reason"],
                "additionalProperties": False,
            },
        },
    ]


def initial_request(settings: ModelSettings, system: list[dict[str, Any]], user_text: str) -> dict[str, Any]:
    """The first Messages API body, exactly as the loop sends it (so `--dry-run` prints the
    truth): `tool_choice: any` makes every turn end in a tool call, and the user turn carries
    the conversation's moving cache breakpoint (see `loop.move_cache_breakpoint`)."""
    return {
        "model": settings.model,
        "max_tokens": settings.max_tokens,
        "system": system,
        "tools": tool_definitions(),
        "tool_choice": {"type": "any"},
        "messages": [{"role": "user", "content": [{"type": "text", "text": user_text,
                                                   "cache_control": dict(EPHEMERAL)}]}],
    }
