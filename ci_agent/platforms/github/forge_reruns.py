"""Re-running a workflow run's failed jobs on GitHub, and reading where the run is (issue 16).

`POST /repos/{o}/{r}/actions/runs/{id}/rerun-failed-jobs` answers 201 with an empty object and
starts a new attempt of the run (`run_attempt` + 1) that runs the failed jobs and their dependents
again; each job of the new attempt is a new job with a new id. GitHub refuses with 403 "This
workflow is already running" while any attempt is still running, and with 403 "Unable to retry
this workflow run because it was created over a month ago" after 30 days; a token without
`actions: write` gets 403 "Resource not accessible by integration". PyGithub's
`WorkflowRun.rerun_failed_jobs` hides the status (it returns a bool), so the request goes through
its requester, which raises on an error answer.
"""

from __future__ import annotations

from ci_agent.engine.forge import Rerun, RunState, RunStatus
from ci_agent.errors import ForgeError, StatusForgeError, status_of
from ci_agent.platforms.github.forge_calls import GitHubCalls
from ci_agent.platforms.github.forge_runs import FAILED_CONCLUSIONS

_STATUSES: dict[str, RunStatus] = {"completed": "completed", "in_progress": "in_progress"}


class GitHubReruns:
    """The re-run half of `GitHubForge` (a base of it): every request goes through `_api`."""

    _api: GitHubCalls

    def rerun_failed_jobs(self, run_id: int) -> Rerun:
        """The attempt is read BEFORE asking: once GitHub has started the re-run, no failure of
        ours may say it did not (the new attempt is the run's attempt + 1)."""
        before = self._api.call(f"read run {run_id}", "actions: read",
                                lambda: int(self._api.repo.get_workflow_run(run_id).run_attempt or 1))
        url = f"{self._run_url(run_id)}/rerun-failed-jobs"
        what = f"re-run the failed jobs of run {run_id}"
        try:
            # Not retried after a lost answer: the re-run may have started, and a second request
            # would only be refused as "already running".
            self._api.call(what, "actions: write",
                           lambda: self._api.gh.requester.requestJsonAndCheck("POST", url),
                           idempotent=False)
        except ForgeError as error:
            raise _refusal(error, run_id) from error
        return Rerun(run_id, before + 1)

    def run_state(self, run_id: int) -> RunState:
        def fetch() -> RunState:
            run = self._api.repo.get_workflow_run(run_id)
            failed = tuple(j.id for j in run.jobs("latest") if j.conclusion in FAILED_CONCLUSIONS)
            status = _STATUSES.get(run.status or "", "queued")  # requested, waiting, pending: not started
            conclusion = run.conclusion if status == "completed" else None
            return RunState(status, conclusion or None, int(run.run_attempt or 1), failed)
        return self._api.call(f"read run {run_id}", "actions: read", fetch)

    def _run_url(self, run_id: int) -> str:
        return f"{self._api.repo.url}/actions/runs/{int(run_id)}"


def _refusal(error: ForgeError, run_id: int) -> ForgeError:
    """The sentence for GitHub's refusals that are not about permissions: a 403 naming a run that
    is still running or too old would otherwise read as a missing `actions: write`."""
    if status_of(error) != 403:
        return error
    said = _message(error)
    if "already running" in said.lower():
        return StatusForgeError(403, f"GitHub will not re-run the failed jobs of run {run_id} while it "
                                     f"is still running (403 {said}); wait until it has finished.")
    if "month ago" in said.lower():
        return StatusForgeError(403, f"GitHub will not re-run the failed jobs of run {run_id}: it is "
                                     f"older than 30 days (403 {said}); push a commit to run CI again.")
    return error


def _message(error: ForgeError) -> str:
    """GitHub's own message, from the PyGithub exception the ForgeError was raised from."""
    data = getattr(error.__cause__, "data", None)
    message = data.get("message") if isinstance(data, dict) else None
    return str(message or "").strip().rstrip(".")
