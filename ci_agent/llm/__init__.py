"""Talking to Claude (DESIGN.md §4.5).

`anthropic_client` is the only module that imports the SDK; it is not imported here, so
`--dry-run` and the tests of the loop never load it. Import `AnthropicClient` and
`DEFAULT_MODEL` from `ci_agent.llm.anthropic_client`.
"""

from ci_agent.llm.client import ModelClient
from ci_agent.llm.loop import ask_for_patch, confidence_cap, first_request
from ci_agent.llm.prompt import initial_request, system_blocks, tool_definitions, user_text
from ci_agent.llm.tools import RepoTools, ToolError
from ci_agent.llm.types import AskResult, GiveUp, ModelSettings, PatchProposal, Usage

__all__ = [
    "AskResult",
    "GiveUp",
    "ModelClient",
    "ModelSettings",
    "PatchProposal",
    "RepoTools",
    "ToolError",
    "Usage",
    "ask_for_patch",
    "confidence_cap",
    "first_request",
    "initial_request",
    "system_blocks",
    "tool_definitions",
    "user_text",
]
