"""How GitLab names things, in every sentence a person reads on it."""

from __future__ import annotations

from ci_agent.engine.platform import Words

GITLAB_WORDS = Words("GitLab", "merge request", "!", "pipeline", "the `verify` input (CI_AGENT_INPUT_VERIFY)")
