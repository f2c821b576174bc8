"""Scripted model answers for the Python sample as it stands on the fix branch, the same on every
platform: the versions of shop/ratings.py a scenario's attempts move between, and the patch the
model answers with to get from one to the next."""

from __future__ import annotations

import difflib
from typing import Protocol

from tests.fakes.anthropic_fake import AnthropicFake
from tests.platform_scenarios.base import ROOT_CAUSE, SUMMARY
from tests.scenarios import model_scripts as model
from tests.scenarios.sample_repos import PYTHON, SampleRepo, apply_edit

RATINGS = PYTHON.fix.path
# Versions of `average_rating`'s last line, in the order the failing attempts try them: each
# fails on the fix branch's CI ("floor" and "floor_float" leave the same tests failing).
WRONG_ORDER = ("floor", "floor_float", "none")
WRONG_SUMMARIES = {"floor": "Divide with // and at least 1 in the denominator.",
                   "floor_float": "Convert the floored mean to float.",
                   "none": "Return None when a product has no ratings."}
# A test report a repository keeps as a sample (matched by `**/*.trx`): never a failure of a run.
SAMPLE_TRX = """<?xml version="1.0" encoding="utf-8"?>
<TestRun id="0b4c" name="sample" xmlns="http://microsoft.com/schemas/VisualStudio/TeamTest/2010">
  <Results>
    <UnitTestResult testId="1" testName="Samples.CommittedSample.NeverRunHere" outcome="Failed">
      <Output><ErrorInfo><Message>a sample failure kept in the repository</Message></ErrorInfo></Output>
    </UnitTestResult>
  </Results>
  <ResultSummary outcome="Failed"><Counters total="1" executed="1" passed="0" failed="1"/></ResultSummary>
</TestRun>
"""
# A build-time file a patch may add besides the fix: allowed, but flagged for the reviewer.
CONFTEST = "tests/conftest.py"
NEW_CONFTEST = ("--- /dev/null\n+++ b/tests/conftest.py\n@@ -0,0 +1,6 @@\n+import pytest\n+\n+\n"
                "+@pytest.fixture\n+def no_ratings():\n+    return []\n")


class ScriptedWorld(Protocol):
    """What the steps need of a scenario: its sample repository and the model fake."""

    @property
    def repo(self) -> SampleRepo: ...

    @property
    def api(self) -> AnthropicFake: ...


def version(world: ScriptedWorld, name: str) -> str:
    """shop/ratings.py as it is after the sample's edit `name` ("broken", "fix", or a wrong one)."""
    broken = world.repo.files[RATINGS]
    if name == "broken":
        return broken
    return apply_edit(broken, PYTHON.fix if name == "fix" else PYTHON.wrong[name])


def diff(before: str, after: str) -> str:
    """A model's unified diff of shop/ratings.py between two versions (3 lines of context)."""
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        f"a/{RATINGS}", f"b/{RATINGS}", n=3))


def answer(world: ScriptedWorld, current: str, target: str, summary: str = SUMMARY) -> None:
    """Queue the model's answer: a patch from the branch's `current` version to `target`."""
    world.api.reply(model.submit_patch(diff(version(world, current), version(world, target)),
                                       summary=summary, root_cause=ROOT_CAUSE))


def model_calls(world: ScriptedWorld) -> int:
    return len(world.api.message_requests)
