"""How GitHub names things, in every sentence a person reads on it."""

from __future__ import annotations

from ci_agent.engine.platform import Words

GITHUB_WORDS = Words("GitHub", "pull request", "#", "run")
