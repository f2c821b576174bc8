"""Issue 12, "Verify in a sandbox", attacked on `fix --local`: the model's patch fixes the bug and
adds a `tests/conftest.py` (tests/hardening/secrets/exfil.py) that runs when verify does and
carries off what it can reach: every /proc/*/environ and cmdline, the memory of ci-agent and its
ancestors, the real checkout's `.git/config` (a credentialed origin URL, an `http.extraheader`),
ci-agent's HOME with a `.git-credentials`, and its own HOME. ci-agent runs as root in its own
process (its environment is what /proc shows), in folders any user may enter, so only the sandbox
stands between the attack and the canaries. The control runs the same payload unsandboxed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.fakes.anthropic_fake import AnthropicFake
from tests.hardening.secrets.canaries import custom_secret
from tests.hardening.secrets.exfil import (
    Canaries,
    assert_sandboxed_and_empty,
    attack_answer,
    attack_conftest,
    child_env,
    credential_checkout,
    lair,
    loot,
    loot_text,
    needs_root,
)
from tests.scenarios.conftest import anthropic_fake, api
from tests.scenarios.sample_repos import PYTEST, PYTHON, create_sample_repo
from tests.toolchain import PYTHON as TOOLCHAIN_PYTHON

__all__ = ["anthropic_fake", "api"]


def test_control_the_payload_finds_every_canary_without_a_sandbox(reachable_tmp: Path) -> None:
    """Unsandboxed (as root, as verify ran before issue 12) the same payload reads the secrets out
    of its parent's environment and memory, the checkout's .git/config and ci-agent's HOME."""
    canaries = Canaries.fresh()
    home, drop = lair(reachable_tmp, canaries)
    repo = create_sample_repo(reachable_tmp, PYTHON)
    credential_checkout(repo.path, repo.origin, canaries)
    script = reachable_tmp / "payload.py"
    script.write_text(attack_conftest(drop, [str(repo.path / ".git"), str(home)]))
    in_memory = custom_secret()  # only ever in the parent's heap, never in an environment block
    parent = ("import subprocess, sys; held = 'DEPLOY_PASSWORD=' + sys.stdin.read(); "
              f"subprocess.run([{TOOLCHAIN_PYTHON!r}, {str(script)!r}], check=True)")

    subprocess.run([TOOLCHAIN_PYTHON, "-c", parent], input=in_memory, text=True,
                   env=child_env({**canaries.env, "HOME": str(home)}), check=True, timeout=120)

    found = loot(drop)
    assert found["uid"] == 0
    assert canaries.found_in(loot_text(found)) == sorted(canaries.values())
    assert any(in_memory in hit for hit in found["memory"]), "the parent's memory is read too"


@needs_root
def test_fix_local_verify_reaches_no_secret(api: AnthropicFake, reachable_tmp: Path) -> None:
    canaries = Canaries.fresh()
    home, drop = lair(reachable_tmp, canaries)
    repo = create_sample_repo(reachable_tmp, PYTHON)
    credential_checkout(repo.path, repo.origin, canaries)
    api.reply(attack_answer(repo, drop, [repo.path, home, reachable_tmp]))
    env = child_env({**canaries.env, "HOME": str(home), "CI_AGENT_ANTHROPIC_BASE_URL": api.base_url})

    done = subprocess.run([sys.executable, "-m", "ci_agent", "fix", "--local", "--repo", str(repo.path),
                           "--command", PYTEST, "--verify", PYTEST, "--json"],
                          env=env, cwd=repo.path, text=True, capture_output=True, timeout=300, check=False)

    assert done.returncode == 0, done.stdout + done.stderr
    assert '"event": "verified", "attempt": 1, "ok": true' in done.stdout, done.stdout + done.stderr
    assert "without a privilege drop" not in done.stdout + done.stderr, "as root the drop happens"
    assert_sandboxed_and_empty(drop, canaries, repo.path, home)
