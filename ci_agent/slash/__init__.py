"""Slash commands in PR/MR comments (`/ci-agent fix ...`): parsing, gating, help. Pure."""

from ci_agent.slash.gate import CommentFacts, Decision, decide, is_bot
from ci_agent.slash.help import help_text
from ci_agent.slash.parse import COMMANDS, SlashCommand, parse_command

__all__ = ["COMMANDS", "CommentFacts", "Decision", "SlashCommand", "decide", "help_text", "is_bot",
           "parse_command"]
