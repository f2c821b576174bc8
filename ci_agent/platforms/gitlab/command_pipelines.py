"""What slash commands need from GitLab (`CommandForge`, issue 7), mixed into `GitLabForge`.

Kept apart so `forge.py` stays readable; every call still goes through the forge's `GitLabCalls`
(retries, one-sentence errors, token masked). GitLab facts this relies on:

- Award emoji (`POST .../notes/:id/award_emoji`): a second award of the same emoji by the same
  user is refused with 404 "Award Emoji Name has already been taken" (lib/api/award_emoji.rb,
  `not_found!("Award Emoji #{service[:message]}")`). That refusal is the atomic "already
  claimed" answer; any other 404 (the note is gone) stays an error.
- A new note touches its merge request (`Note#touch_noteable`), so `updated_after` on the merge
  request list finds every merge request with a note newer than the cursor.
- Project CI/CD variables (`/projects/:id/variables[/:key]`) need the Maintainer role; an unknown
  key answers 404 "Variable Not Found"; creating an existing one answers 400 "has already been taken".
"""

from __future__ import annotations

from gitlab.v4.objects import ProjectMergeRequest

from ci_agent.engine.forge import ChangeRequest, Comment
from ci_agent.errors import ForgeError, status_of
from ci_agent.platforms.gitlab.forge_calls import GitLabCalls
from ci_agent.platforms.gitlab.http import change_request, comment
from ci_agent.relay import CURSOR_VARIABLE, parse_time

CLAIM_EMOJI = "eyes"
_TAKEN = "has already been taken"


class GitLabCommands:
    """The `CommandForge` methods, the poller's listing and its cursor: a base of `GitLabForge`,
    whose `GitLabCalls` (`_api`) makes every request."""

    _api: GitLabCalls

    def _mr(self, number: int) -> ProjectMergeRequest:
        return self._api.project.mergerequests.get(number, lazy=True)

    # -- CommandForge ------------------------------------------------------------------------

    def get_change_request(self, number: int) -> ChangeRequest:
        return self._api.call(f"read merge request !{number}", "Reporter",
                              lambda: change_request(self._api.project.mergerequests.get(number).attributes))

    def get_comment(self, number: int, comment_id: int, review: bool = False) -> Comment | None:
        """The note as it is now; None when deleted (GitLab has no separate review comments)."""
        try:
            return self._api.call(f"read note {comment_id} of merge request !{number}", "Reporter",
                                  lambda: comment(self._mr(number).notes.get(comment_id).attributes))
        except ForgeError as error:
            if status_of(error) == 404:
                return None
            raise

    def claim(self, number: int, comment_id: int, review: bool = False) -> bool:
        """Award 👀 to the note: True when this call awarded it, False when we already had."""
        note = self._mr(number).notes.get(comment_id, lazy=True)
        try:
            self._api.call(f"award emoji on note {comment_id} of merge request !{number}", "Reporter",
                           lambda: note.awardemojis.create({"name": CLAIM_EMOJI}), idempotent=False)
        except ForgeError as error:
            if status_of(error) == 404 and _TAKEN in str(error):
                return False
            raise
        return True

    def latest_failed_run(self, branch: str, sha: str) -> int | None:
        pipelines = self._api.project.pipelines
        found = self._api.call(f"list the failed pipelines of {branch!r}", "Reporter",
                               lambda: pipelines.list(ref=branch, sha=sha, status="failed", order_by="id",
                                                      sort="desc", per_page=1, get_all=False))
        return int(found[0].id) if found else None

    def project_identity(self) -> tuple[int, str]:
        """(numeric id, path_with_namespace) of the project as GitLab names it: what the relay's
        `--project` resolves to, so a pipeline is only ever created for that id."""
        def fetch() -> tuple[int, str]:
            project = self._api.gl.projects.get(self._api.ident)
            return int(project.id), str(project.path_with_namespace)
        return self._api.call("read the project", "Guest", fetch)

    # -- the poller --------------------------------------------------------------------------

    def open_change_requests(self, updated_after: str) -> list[ChangeRequest]:
        """Open merge requests updated after the time `updated_after` (a new note updates one)."""
        requests = self._api.project.mergerequests
        return self._api.call("list the open merge requests", "Reporter",
                              lambda: [change_request(m.attributes) for m in requests.list(
                                  state="opened", updated_after=updated_after, order_by="updated_at",
                                  sort="desc", get_all=True)])

    def notes_since(self, number: int, since: str) -> list[Comment]:
        """The people's notes of merge request `number` created after `since`, oldest first.
        Read newest first and stop at the first older one, so a long thread costs one page."""
        after = parse_time(since)

        def fetch() -> list[Comment]:
            found: list[Comment] = []
            for note in self._mr(number).notes.list(sort="desc", order_by="created_at", iterator=True):
                data = note.attributes
                created = parse_time(str(data.get("created_at") or ""))
                if after is not None and created is not None and created <= after:
                    break
                if not data.get("system"):
                    found.append(comment(data))
            return found[::-1]
        return self._api.call(f"read the notes of merge request !{number}", "Reporter", fetch)

    def claimed_by(self, number: int, comment_id: int, username: str) -> bool:
        """Whether `username` has already awarded 👀 to the note (the command was taken)."""
        def fetch() -> bool:
            awards = self._mr(number).notes.get(comment_id, lazy=True).awardemojis.list(get_all=True)
            return any(a.name == CLAIM_EMOJI and str((a.user or {}).get("username", "")).lower()
                       == username.lower() for a in awards)
        return self._api.call(f"read the award emoji of note {comment_id}", "Reporter", fetch)

    def read_cursor(self, name: str = CURSOR_VARIABLE) -> str | None:
        """The project CI/CD variable `name`; None when it does not exist yet."""
        try:
            return self._api.call(f"read the CI/CD variable {name}", "Maintainer",
                                  lambda: str(self._api.project.variables.get(name).value))
        except ForgeError as error:
            if status_of(error) == 404:
                return None
            raise

    def write_cursor(self, name: str, value: str) -> None:
        """Update the variable, or create it (unprotected, unmasked, not expanded) when missing."""
        what, role = f"write the CI/CD variable {name}", "Maintainer"
        try:
            self._api.call(what, role, lambda: self._api.project.variables.update(name, {"value": value}))
            return
        except ForgeError as error:
            if status_of(error) != 404:
                raise
        data = {"key": name, "value": value, "protected": False, "masked": False, "raw": True}
        try:
            self._api.call(what, role, lambda: self._api.project.variables.create(data), idempotent=False)
        except ForgeError as error:
            if status_of(error) != 400 or _TAKEN not in str(error):
                raise
            # another poller created it between our two calls: write ours over it
            self._api.call(what, role, lambda: self._api.project.variables.update(name, {"value": value}))
