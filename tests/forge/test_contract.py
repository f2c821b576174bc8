"""The `Forge` contract (ci_agent/engine/forge.py), one set of assertions run against every
implementation: the local forge, GitHub and GitLab (see conftest.py's `subject`).

What a caller above the protocol relies on is stated once here; where the forges legitimately
differ, the test says why next to the difference. Forge-specific behaviour (pagination, redirects,
retries, error sentences, token kinds) stays in test_github.py / test_gitlab.py / test_local.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_agent.engine.forge import CommandForge, Forge, Permission, render_marker
from ci_agent.errors import ForgeError
from tests.forge.forges import FIX, NOT_STARTABLE, STARTABLE, Subject, zip_bytes


def test_it_is_a_forge(subject: Subject) -> None:
    assert isinstance(subject.forge, Forge)
    assert isinstance(subject.forge, CommandForge) is (subject.name != "local")


def command_forge(subject: Subject) -> CommandForge:
    """The forge as a `CommandForge`. Slash commands arrive as a forge's comment events; the local
    forge (the dry run of `fix`) has none, so it need not answer them."""
    if not isinstance(subject.forge, CommandForge):
        pytest.skip("the local forge receives no comment events: no slash commands")
    return subject.forge


# -- change requests -------------------------------------------------------------------------

def test_a_change_request_is_opened_once_per_source_branch(subject: Subject) -> None:
    forge = subject.forge
    assert forge.find_change_request(FIX) is None
    first = forge.open_change_request(FIX, "main", "Fix the build", "body")
    again = forge.open_change_request(FIX, "main", "Another title", "another body")
    assert again.number == first.number
    assert (first.source_branch, first.target_branch, first.draft, first.state) == (FIX, "main", True, "open")
    found = forge.find_change_request(FIX)
    assert found is not None and found.number == first.number
    assert forge.find_change_request("ci-agent/fix/other") is None


def test_update_changes_draft_and_keeps_the_number(subject: Subject) -> None:
    forge = subject.forge
    number = forge.open_change_request(FIX, "main", "Fix", "body").number
    updated = forge.update_change_request(number, title="Fixed", body="new body", draft=False)
    assert (updated.number, updated.draft) == (number, False)
    assert forge.find_change_request(FIX).draft is False  # type: ignore[union-attr]
    with pytest.raises(ForgeError):
        forge.update_change_request(number + 100, title="nobody's")


def test_labels_are_added_and_removed_idempotently(subject: Subject) -> None:
    forge = subject.forge
    number = forge.open_change_request(FIX, "main", "Fix", "body").number
    forge.add_labels(number, ["ci-agent", "ci-agent:escalated"])
    forge.add_labels(number, ["ci-agent"])
    forge.add_labels(number, [])
    forge.remove_label(number, "ci-agent:escalated")
    forge.remove_label(number, "never-there")
    assert forge.find_change_request(FIX).labels == ("ci-agent",)  # type: ignore[union-attr]


# -- comments and the status marker ----------------------------------------------------------

def test_the_status_comment_is_created_once_then_edited_in_place(subject: Subject) -> None:
    forge = subject.forge
    number = forge.open_change_request(FIX, "main", "Fix", "body").number
    assert forge.read_status_state(number) is None
    first = forge.upsert_status_comment(number, {"attempt": 1}, "Attempt 1")
    same = forge.upsert_status_comment(number, {"attempt": 1}, "Attempt 1")
    second = forge.upsert_status_comment(number, {"attempt": 2}, "Attempt 2")
    assert first.id == same.id == second.id
    assert second.body == render_marker({"attempt": 2}) + "\nAttempt 2"
    assert second.author == forge.own_login()
    assert forge.read_status_state(number) == {"attempt": 2}
    assert [c.body for c in forge.list_comments(number)] == [second.body]


def test_someone_elses_marker_is_never_our_state(subject: Subject) -> None:
    forge = subject.forge
    number = forge.open_change_request(FIX, "main", "Fix", "body").number
    marker = render_marker({"attempt": 9})
    subject.comment_by(number, marker + "\nforged", "mallory")
    subject.comment_by(number, f"> {marker}\nquoted", "octocat")
    assert forge.read_status_state(number) is None
    ours = forge.upsert_status_comment(number, {"attempt": 1}, "mine")
    assert forge.read_status_state(number) == {"attempt": 1}
    assert [c.author for c in forge.list_comments(number)] == ["mallory", "octocat", ours.author]


def test_comments_are_posted_as_our_account_and_deleted(subject: Subject) -> None:
    forge = subject.forge
    number = forge.open_change_request(FIX, "main", "Fix", "body").number
    person = subject.comment_by(number, "/ci-agent fix", "octocat")
    posted = forge.post_comment(number, "Escalated: a person should look.")
    assert (posted.author, posted.body) == (forge.own_login(), "Escalated: a person should look.")
    listed = forge.list_comments(number)
    assert [(c.id, c.author) for c in listed] == [(person, "octocat"), (posted.id, forge.own_login())]
    forge.delete_comment(number, posted.id)
    forge.delete_comment(number, posted.id)  # already gone: the state we wanted
    assert [c.id for c in forge.list_comments(number)] == [person]


def test_a_reaction_is_put_once(subject: Subject) -> None:
    forge = subject.forge
    number = forge.open_change_request(FIX, "main", "Fix", "body").number
    person = subject.comment_by(number, "/ci-agent fix", "octocat")
    forge.add_reaction(number, person)
    forge.add_reaction(number, person)  # ours is there already: fine
    assert subject.reactions(number, person) == ["eyes"]


def test_commit_comments_are_ours_and_listed(subject: Subject) -> None:
    forge = subject.forge
    assert forge.commit_comments(subject.sha) == []
    posted = forge.post_commit_comment(subject.sha, "The build of main failed; see the log.")
    assert posted.author == forge.own_login()
    listed = forge.commit_comments(subject.sha)
    # GitLab's commit comments carry no id (its API gives none): 0 stands for it there.
    assert [(c.body, c.author) for c in listed] == [(posted.body, forge.own_login())]


# -- people and branches ---------------------------------------------------------------------

@pytest.mark.parametrize("permission", [Permission.READ, Permission.TRIAGE, Permission.WRITE,
                                        Permission.MAINTAIN, Permission.ADMIN])
def test_permission_is_the_role_granted(subject: Subject, permission: Permission) -> None:
    subject.grant("dev", permission)
    assert subject.forge.permission("dev") is permission


def test_a_stranger_has_no_permission(subject: Subject) -> None:
    assert subject.forge.permission("stranger") is Permission.NONE


def test_default_branch_and_protection(subject: Subject) -> None:
    forge = subject.forge
    assert forge.default_branch() == "main"
    assert forge.protected("main") is True
    assert forge.protected(FIX) is False
    assert forge.protected("does-not-exist") is False


# -- runs: failed jobs, logs, artifacts, starting CI -----------------------------------------

def test_failed_jobs_and_their_logs(subject: Subject, tmp_path: Path) -> None:
    run, job, log = subject.failed_run("build", "lint")
    jobs = subject.forge.failed_jobs(run)
    # The conclusion is each forge's own word ("failure", "failed"), shown to the model as is.
    assert [(j.id, j.name) for j in jobs] == [(job, "build")]
    got = subject.forge.download_job_log(job, tmp_path / "logs")
    assert (got.job_id, got.name, got.truncated) == (job, "build", False)
    assert got.text_path.parent == tmp_path / "logs" and got.text_path.read_bytes() == log


def test_artifacts_are_extracted_and_hostile_ones_refused(subject: Subject, tmp_path: Path) -> None:
    run = subject.run_with_artifacts({
        "results": zip_bytes(("r/a.trx", b"<TestRun/>")),
        "evil": zip_bytes(("../../outside.txt", b"x")),
        "links": zip_bytes(("ok.txt", b"ok"), symlink="passwd")})
    got = {a.name: a for a in subject.forge.download_artifacts(run, tmp_path / "artifacts")}
    assert sorted(got) == ["evil", "links", "results"]
    results = got["results"].path
    assert results is not None and (results / "r" / "a.trx").read_bytes() == b"<TestRun/>"
    assert results.is_relative_to(tmp_path / "artifacts")
    assert got["evil"].path is None and "escapes" in (got["evil"].problem or "")
    assert got["links"].path is None and "symbolic link" in (got["links"].problem or "")
    assert not (tmp_path / "outside.txt").exists()


def test_start_ci_on_a_branch(subject: Subject) -> None:
    started = subject.forge.start_ci(FIX, subject.sha, STARTABLE)
    assert started.kind == "started"
    assert subject.ci_started_on() == [FIX]


def test_ci_already_running_on_the_commit(subject: Subject) -> None:
    forge = subject.forge
    first = forge.start_ci(FIX, subject.sha, STARTABLE)
    again = forge.start_ci(FIX, subject.sha, STARTABLE)
    if subject.name == "gitlab":
        # GitLab lists pipelines by commit, so the second call finds the first pipeline.
        assert (again.kind, again.run_id) == ("already_running", first.run_id)
        assert subject.ci_started_on() == [FIX]
    else:
        # A workflow dispatch names no run to look for: each call starts one more.
        assert again.kind == "started" and subject.ci_started_on() == [FIX, FIX]


def test_a_workflow_that_cannot_be_started(subject: Subject) -> None:
    if subject.name == "gitlab":
        pytest.skip("a GitLab project has one pipeline definition, and it can run on any branch")
    assert subject.forge.start_ci(FIX, subject.sha, NOT_STARTABLE).kind == "not_startable"
    assert subject.ci_started_on() == []


# -- slash commands (CommandForge) ------------------------------------------------------------

def test_get_change_request_by_number(subject: Subject) -> None:
    forge = command_forge(subject)
    opened = subject.forge.open_change_request(FIX, "main", "Fix", "body")
    got = forge.get_change_request(opened.number)
    assert (got.number, got.source_branch, got.target_branch, got.fork, got.state) == (
        opened.number, FIX, "main", False, "open")
    with pytest.raises(ForgeError):
        forge.get_change_request(opened.number + 100)


def test_get_comment_is_the_comment_now_or_none(subject: Subject) -> None:
    forge = command_forge(subject)
    number = subject.forge.open_change_request(FIX, "main", "Fix", "body").number
    person = subject.comment_by(number, "/ci-agent fix", "octocat")
    got = forge.get_comment(number, person)
    assert got is not None and (got.id, got.body, got.author) == (person, "/ci-agent fix", "octocat")
    ours = subject.forge.post_comment(number, "answer")
    subject.forge.delete_comment(number, ours.id)
    assert forge.get_comment(number, ours.id) is None


def test_a_comment_is_claimed_once(subject: Subject) -> None:
    forge = command_forge(subject)
    number = subject.forge.open_change_request(FIX, "main", "Fix", "body").number
    person = subject.comment_by(number, "/ci-agent fix", "octocat")
    assert forge.claim(number, person) is True
    assert forge.claim(number, person) is False  # another delivery of the same comment
    assert subject.reactions(number, person) == ["eyes"]


def test_latest_failed_run_of_branch_and_commit(subject: Subject) -> None:
    forge = command_forge(subject)
    assert forge.latest_failed_run(FIX, subject.sha) is None
    run = subject.failed_run_of(FIX, subject.sha)
    assert forge.latest_failed_run(FIX, subject.sha) == run
    assert forge.latest_failed_run("main", subject.sha) is None
