"""How the local platform names things: it has no forge of its own, so its change requests are
the local forge's (`platforms/local/forge.py`), numbered like GitHub's."""

from __future__ import annotations

from ci_agent.engine.platform import Words

LOCAL_WORDS = Words("the local forge", "change request", "#", "run", "--verify")
