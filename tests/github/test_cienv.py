"""cienv: action inputs, GitHub context, triggers (fork refusal, ci-agent branches)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from ci_agent.engine.types import ActionInputs, split_list
from ci_agent.errors import UsageError
from ci_agent.platforms.github.env import (
    INPUT_NAMES,
    CommentEvent,
    GitHubContext,
    action_inputs,
    comment_event,
    github_context,
    input_env_name,
    is_actions_token,
    trigger,
)


def test_defaults_when_inputs_are_empty_strings() -> None:
    # The runner passes every declared input, the ones the workflow left out as "".
    env = {input_env_name(n): "" for n in INPUT_NAMES}
    assert action_inputs(env) == ActionInputs()
    assert ActionInputs().test_results == ("**/*.trx",)


def test_every_input_is_read() -> None:
    env = {
        "INPUT_ANTHROPIC_API_KEY": " sk-ant-x ", "INPUT_GITHUB_TOKEN": "ghs_abc",
        "INPUT_BUILD_LOGS": "build.log\nlogs/*.log, other.log\n\n", "INPUT_TEST_RESULTS": "a/*.trx,b/*.xml",
        "INPUT_VERIFY": "dotnet test", "INPUT_MODE": "propose", "INPUT_MAX_ATTEMPTS": "2",
        "INPUT_MODEL": "claude-x", "INPUT_CONFIG": "ci/agent.yml", "INPUT_CI_WORKFLOW": "ci.yml",
        "INPUT_DRAFT": "false", "INPUT_DRY_RUN": "True",
    }
    got = action_inputs(env)
    assert got == ActionInputs("sk-ant-x", "ghs_abc", ("build.log", "logs/*.log", "other.log"),
                               ("a/*.trx", "b/*.xml"), "dotnet test", "propose", 2, "claude-x",
                               "ci/agent.yml", "ci.yml", False, True)
    assert got.secrets() == ("sk-ant-x", "ghs_abc")
    # one field per input; `github_token` fills the forge-neutral `token` field
    assert {f for f in ActionInputs.__dataclass_fields__} == set(INPUT_NAMES) - {"github_token"} | {"token"}


@pytest.mark.parametrize(("name", "value"), [("mode", "yolo"), ("max_attempts", "0"),
                                             ("max_attempts", "three"), ("draft", "yes"),
                                             ("dry_run", "1"), ("job_status", "green")])
def test_bad_input_is_a_usage_error_naming_it(name: str, value: str) -> None:
    with pytest.raises(UsageError, match=name):
        action_inputs({input_env_name(name): value})


def test_split_list_dedupes_and_keeps_order() -> None:
    assert split_list(" b ,a\nb\r\n,,c") == ("b", "a", "c")


def test_actions_token_heuristic() -> None:
    assert is_actions_token("abc123", {"GITHUB_TOKEN": "abc123"})
    assert is_actions_token("ghs_xyz", {})
    assert not is_actions_token("ghp_personal", {"GITHUB_TOKEN": "other"})
    assert not is_actions_token("", {"GITHUB_TOKEN": ""})


def _env(tmp_path: Path, event_name: str, payload: Mapping[str, object], **extra: str) -> dict[str, str]:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    return {"GITHUB_EVENT_NAME": event_name, "GITHUB_EVENT_PATH": str(path), "GITHUB_REPOSITORY": "octo/app",
            "GITHUB_RUN_ID": "77", "GITHUB_SHA": "a" * 40, "GITHUB_ACTOR": "alice", **extra}


def _run(branch: str, conclusion: str = "failure", head_repo: str = "octo/app",
         pulls: list[dict[str, object]] | None = None) -> dict[str, object]:
    return {"repository": {"full_name": "octo/app"},
            "workflow_run": {"id": 9001, "run_attempt": 2, "head_branch": branch, "head_sha": "b" * 40,
                             "conclusion": conclusion, "head_repository": {"full_name": head_repo},
                             "pull_requests": pulls or [], "triggering_actor": {"login": "bob"}}}


def test_inline_push(tmp_path: Path) -> None:
    found = trigger(github_context(_env(tmp_path, "push", {}, GITHUB_REF_NAME="main")))
    assert (found.kind, found.branch, found.run_id, found.actor, found.refused, found.skipped) == \
        ("inline", "main", "77", "alice", "", "")


def test_inline_pull_request_from_same_repo(tmp_path: Path) -> None:
    payload = {"pull_request": {"number": 5, "head": {"repo": {"full_name": "octo/app"}}}}
    ctx = github_context(_env(tmp_path, "pull_request", payload, GITHUB_HEAD_REF="feature/x",
                              GITHUB_REF_NAME="5/merge"))
    found = trigger(ctx)
    assert (found.branch, found.pr_number, found.fork, found.refused) == ("feature/x", 5, False, "")


def test_inline_pull_request_from_fork_is_refused(tmp_path: Path) -> None:
    payload = {"pull_request": {"number": 5, "head": {"repo": {"full_name": "mallory/app"}}}}
    found = trigger(github_context(_env(tmp_path, "pull_request", payload, GITHUB_HEAD_REF="main")))
    assert found.fork and "mallory/app" in found.refused and "fork" in found.refused


def test_workflow_run_failure(tmp_path: Path) -> None:
    pulls: list[dict[str, object]] = [{"number": 12}]
    found = trigger(github_context(_env(tmp_path, "workflow_run", _run("feature/y", pulls=pulls))))
    assert (found.kind, found.branch, found.sha, found.run_id, found.run_attempt, found.pr_number,
            found.actor, found.failed) == \
        ("workflow_run", "feature/y", "b" * 40, "9001", "2", 12, "bob", True)
    assert not found.refused and not found.skipped


def test_workflow_run_from_fork_with_empty_pull_requests_is_refused(tmp_path: Path) -> None:
    found = trigger(github_context(_env(tmp_path, "workflow_run", _run("main", head_repo="mallory/app"))))
    assert found.fork and found.refused


def test_workflow_run_success_on_a_source_branch_is_skipped(tmp_path: Path) -> None:
    found = trigger(github_context(_env(tmp_path, "workflow_run", _run("main", conclusion="success"))))
    assert "success" in found.skipped


def test_workflow_run_on_our_fix_branch_is_its_verification(tmp_path: Path) -> None:
    for conclusion in ("success", "failure"):
        found = trigger(github_context(_env(tmp_path, "workflow_run",
                                            _run("ci-agent/fix/main", conclusion=conclusion))))
        assert found.on_fix_branch and not found.skipped and not found.refused


def test_other_ci_agent_branches_are_never_fixed(tmp_path: Path) -> None:
    found = trigger(github_context(_env(tmp_path, "push", {}, GITHUB_REF_NAME="ci-agent/other")))
    assert "never fixes" in found.skipped


def test_bad_context_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="GITHUB_REPOSITORY"):
        github_context({"GITHUB_REPOSITORY": "nope"})
    (tmp_path / "e.json").write_text("[1]", encoding="utf-8")
    with pytest.raises(UsageError, match="JSON object"):
        github_context({"GITHUB_REPOSITORY": "o/r", "GITHUB_EVENT_PATH": str(tmp_path / "e.json")})
    with pytest.raises(UsageError, match="workflow_run object"):
        trigger(github_context(_env(tmp_path, "workflow_run", {})))


# --- comment events (slash commands) ----------------------------------------------------------------
# Shapes trimmed from octokit/webhooks' recorded payloads (payload-examples/api.github.com/
# issue_comment/created.1.payload.json and pull_request_review_comment/created.payload.json): only
# the keys a consumer reads, with their real names, nesting and values. A pull request's
# conversation comment arrives as `issue_comment` whose issue carries a `pull_request` object
# (the REST/webhook docs: "pull_request": {url, html_url, diff_url, patch_url, merged_at}).

CODERTOCAT = {"login": "Codertocat", "id": 21031067, "type": "User", "site_admin": False}


def _issue_comment(action: str = "created", on_pr: bool = True, **comment: object) -> dict[str, object]:
    issue: dict[str, object] = {"url": "https://api.github.com/repos/Codertocat/Hello-World/issues/1",
                                "number": 1, "state": "open", "user": CODERTOCAT,
                                "author_association": "OWNER"}
    if on_pr:
        issue["pull_request"] = {"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/1",
                                 "html_url": "https://github.com/Codertocat/Hello-World/pull/1",
                                 "diff_url": "https://github.com/Codertocat/Hello-World/pull/1.diff",
                                 "patch_url": "https://github.com/Codertocat/Hello-World/pull/1.patch",
                                 "merged_at": None}
    return {"action": action, "issue": issue,
            "comment": {"url": "https://api.github.com/repos/Codertocat/Hello-World/issues/comments/492700400",
                        "issue_url": "https://api.github.com/repos/Codertocat/Hello-World/issues/1",
                        "id": 492700400, "user": CODERTOCAT, "created_at": "2019-05-15T15:20:21Z",
                        "author_association": "OWNER",
                        "body": "You are totally right! I'll get this fixed right away.", **comment},
            "repository": {"full_name": "Codertocat/Hello-World"}, "sender": CODERTOCAT}


def _review_comment(action: str = "created", **comment: object) -> dict[str, object]:
    return {"action": action,
            "comment": {"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/comments/284312630",
                        "pull_request_review_id": 237895671, "id": 284312630, "path": "README.md",
                        "user": CODERTOCAT, "body": "Maybe you should use more emojji on this line.",
                        "created_at": "2019-05-15T15:20:37Z", "author_association": "OWNER",
                        "pull_request_url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/2",
                        **comment},
            "pull_request": {"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/2",
                             "number": 2, "state": "open",
                             "head": {"label": "Codertocat:changes", "ref": "changes",
                                      "sha": "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
                                      "repo": {"full_name": "Codertocat/Hello-World"}},
                             "base": {"label": "Codertocat:master", "ref": "master",
                                      "sha": "f95f852bd8fca8fcc58a9a2d6c842781e32a215e",
                                      "repo": {"full_name": "Codertocat/Hello-World"}}},
            "repository": {"full_name": "Codertocat/Hello-World"}, "sender": CODERTOCAT}


def _comment_ctx(tmp_path: Path, event_name: str, payload: dict[str, object]) -> GitHubContext:
    return github_context(_env(tmp_path, event_name, payload))


def test_issue_comment_on_a_pull_request(tmp_path: Path) -> None:
    got = comment_event(_comment_ctx(tmp_path, "issue_comment", _issue_comment(body="/ci-agent fix")))
    assert got == CommentEvent("created", 492700400, "/ci-agent fix", "Codertocat", False, "OWNER", 1,
                               on_pull_request=True, review=False)


def test_issue_comment_on_a_plain_issue_is_not_on_a_pull_request(tmp_path: Path) -> None:
    got = comment_event(_comment_ctx(tmp_path, "issue_comment", _issue_comment(on_pr=False)))
    assert got.on_pull_request is False and got.number == 1
    assert got.body == "You are totally right! I'll get this fixed right away."


def test_review_comment(tmp_path: Path) -> None:
    got = comment_event(_comment_ctx(tmp_path, "pull_request_review_comment", _review_comment()))
    assert got == CommentEvent("created", 284312630, "Maybe you should use more emojji on this line.",
                               "Codertocat", False, "OWNER", 2, on_pull_request=True, review=True)


def test_edited_comment_keeps_its_action_for_the_gate(tmp_path: Path) -> None:
    assert comment_event(_comment_ctx(tmp_path, "issue_comment", _issue_comment("edited"))).action == "edited"
    edited = _review_comment("edited")
    assert comment_event(_comment_ctx(tmp_path, "pull_request_review_comment", edited)).action == "edited"


def test_a_bot_comment_says_so(tmp_path: Path) -> None:
    bot = {"login": "dependabot[bot]", "id": 49699333, "type": "Bot", "site_admin": False}
    payload = _issue_comment(user=bot, author_association="NONE")
    got = comment_event(_comment_ctx(tmp_path, "issue_comment", payload))
    assert (got.author, got.author_is_bot, got.association) == ("dependabot[bot]", True, "NONE")


def test_a_deleted_account_and_a_null_body_are_empty_not_errors(tmp_path: Path) -> None:
    got = comment_event(_comment_ctx(tmp_path, "issue_comment", _issue_comment(user=None, body=None)))
    assert (got.author, got.author_is_bot, got.body) == ("", False, "")


@pytest.mark.parametrize("event_name", ["push", "pull_request", "workflow_run", "pull_request_review", ""])
def test_other_events_are_usage_errors(tmp_path: Path, event_name: str) -> None:
    with pytest.raises(UsageError, match="issue_comment or pull_request_review_comment"):
        comment_event(_comment_ctx(tmp_path, event_name, _issue_comment()))


@pytest.mark.parametrize(("event_name", "payload"), [
    ("issue_comment", {"action": "created"}),
    ("issue_comment", {**_issue_comment(), "issue": None}),
    ("issue_comment", {**_issue_comment(), "comment": "text"}),
    ("issue_comment", _issue_comment(id="492700400")),
    ("issue_comment", _issue_comment(id=True)),
    ("issue_comment", {**_issue_comment(), "issue": {"number": 0}}),
    ("pull_request_review_comment", {**_review_comment(), "pull_request": {"number": "2"}}),
    ("pull_request_review_comment", _issue_comment()),  # an issue payload under the review event
])
def test_malformed_payloads_are_usage_errors(tmp_path: Path, event_name: str,
                                            payload: dict[str, object]) -> None:
    with pytest.raises(UsageError, match=event_name):
        comment_event(_comment_ctx(tmp_path, event_name, payload))
