"""One patch through the whole police station: extract, parse, policy, gates, fit, git check.

`review` never writes; `apply_patch` applies what `review` approved, all or nothing. Both return
a Verdict whose rejections are messages for the model (or the person) that sent the patch.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from ci_agent import git
from ci_agent.config import PatchSettings
from ci_agent.patch.apply import ApplyError, apply_atomically, check
from ci_agent.patch.buildtime import build_changes
from ci_agent.patch.diff import Patch, Rejection
from ci_agent.patch.extract import extract_diff, fit_to_repo
from ci_agent.patch.gates import run_gates
from ci_agent.patch.invisible import rejections as invisible_rejections
from ci_agent.patch.markers import unmark_patch
from ci_agent.patch.parse import PatchParseError, parse_patch
from ci_agent.patch.policy import hooks_dir_of, police
from ci_agent.patch.protected import GITLAB_CI, included_files
from ci_agent.patch.render import render_patch


@dataclass(frozen=True, slots=True)
class Verdict:
    ok: bool
    files: tuple[str, ...] = ()
    added: int = 0
    removed: int = 0
    rejections: tuple[Rejection, ...] = ()
    # The canonical text git checks and applies (empty when rejected before rendering)
    patch_text: str = ""
    # Every path the patch names (old and new sides), for saving and restoring
    touched: tuple[str, ...] = ()
    # `path: why` for each change to code that runs at build time: allowed, but flagged
    build_change: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "files": list(self.files),
            "added": self.added,
            "removed": self.removed,
            "rejections": [r.to_json() for r in self.rejections],
            "build_change": list(self.build_change),
        }

    def messages(self) -> str:
        """All rejections as one text for the model's next turn."""
        return "\n".join(f"- [{r.rule}] {r.message}" for r in self.rejections)


def _rejected(rejections: list[Rejection], patch: Patch | None = None) -> Verdict:
    if patch is None:
        return Verdict(ok=False, rejections=tuple(rejections))
    return Verdict(False, patch.paths, patch.added, patch.removed, tuple(rejections))


def _has_surrogates(line: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in line)


def _touched(patch: Patch) -> tuple[str, ...]:
    names = [p for fp in patch.files for p in (fp.old_path, fp.new_path) if p is not None]
    return tuple(dict.fromkeys(names))


def _apply_rejection(complaint: str, patch: Patch) -> Rejection:
    path = next((p for p in patch.paths if p in complaint), "")
    return Rejection(
        "apply.check",
        path,
        "git apply --check refused the patch, so nothing was changed:\n"
        f"{complaint}\n"
        "Context and removed lines must match the current file exactly (whitespace included), "
        "and a new file must not exist yet. Re-read the file(s) and send the whole diff again.",
    )


TRUSTED_REFS = "refs/ci-agent/trusted/"


def _text_at(repo: Path, rev: str, path: str) -> str | None:
    """A file's text in the index (`rev` empty) or at `rev`; None when it is not there."""
    result = git.git(repo, ["cat-file", "blob", f"{rev}:{path}"])
    return result.stdout if result.ok else None


def pipeline_includes(repo: Path) -> tuple[str, ...]:
    """Every file `.gitlab-ci.yml` includes locally, on this branch and on the default branch
    (`origin/HEAD`, or the copy a CI cycle fetched to read its configuration): the fix branch's
    pipeline runs the first, and the second is what the project trusts."""
    patterns: list[str] = []
    revs = [""]
    if git.git(repo, ["rev-parse", "--verify", "-q", "refs/remotes/origin/HEAD"]).ok:
        revs.append("refs/remotes/origin/HEAD")
    # where a CI cycle fetched the default branch to read its configuration (fixcycle/trusted.py)
    trusted = git.git(repo, ["for-each-ref", "--format=%(refname)", TRUSTED_REFS])
    revs += [ref for ref in trusted.stdout.splitlines() if ref] if trusted.ok else []
    for rev in revs:
        if _text_at(repo, rev, GITLAB_CI) is None:
            continue
        found = included_files(functools.partial(_text_at, repo, rev))
        patterns += [p for p in found if p not in patterns]
    return tuple(patterns)


def review(answer: str, repo: Path, settings: PatchSettings) -> Verdict:
    """Police `answer` (a diff, or text containing one) against `repo` without writing."""
    size = len(answer.encode("utf-8", errors="surrogateescape"))
    if size > settings.max_patch_bytes:
        return _rejected([Rejection("patch.too_large", "", f"The patch is {size} bytes; the limit is "
                                    f"{settings.max_patch_bytes} (patch.max_patch_bytes). Send a "
                                    "minimal patch.")])
    try:
        patch = unmark_patch(parse_patch(extract_diff(answer)))
    except PatchParseError as exc:
        return _rejected([Rejection("patch.malformed", exc.path, f"The diff could not be read: {exc}. "
                                    "Send a unified diff: `--- a/path`, `+++ b/path`, then hunks "
                                    "starting with `@@ -start,count +start,count @@`, every line "
                                    "prefixed with a space, `+` or `-`.")])
    if any(_has_surrogates(line) for fp in patch.files for h in fp.hunks for line in (*h.lines, h.section)):
        return _rejected([Rejection("patch.encoding", "", "The diff contains bytes that are not "
                                    "UTF-8. Send the patch as UTF-8 text.")], patch)
    hooks_dir = hooks_dir_of(repo, git.config_get(repo, "core.hooksPath"))
    rejections = (police(patch, settings, repo, hooks_dir, pipeline_includes(repo))
                  + invisible_rejections(patch, lambda path: _text_at(repo, "", path))
                  + run_gates(patch, settings.gates))
    if rejections:
        return _rejected(rejections, patch)
    fitted = fit_to_repo(patch, lambda path: git.index_blob(repo, path))
    modes = {fp.old_path: m for fp in fitted.files if fp.is_deleted and fp.old_path
             and (m := git.index_mode(repo, fp.old_path))}
    text = render_patch(fitted, modes)
    complaint = check(repo, text)
    if complaint is not None:
        return _rejected([_apply_rejection(complaint, fitted)], fitted)
    return Verdict(True, fitted.paths, fitted.added, fitted.removed, (), text, _touched(fitted),
                   build_changes(fitted))


def apply_patch(answer: str, repo: Path, settings: PatchSettings) -> Verdict:
    """Review `answer` and, when it passes, apply exactly it to the work tree and the index."""
    verdict = review(answer, repo, settings)
    if not verdict.ok:
        return verdict
    try:
        apply_atomically(repo, verdict.patch_text, verdict.touched)
    except ApplyError as exc:
        rejection = Rejection("apply.failed", "", f"git apply failed, and the tree was restored: {exc}")
        return Verdict(False, verdict.files, verdict.added, verdict.removed, (rejection,))
    return verdict
