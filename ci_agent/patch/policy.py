"""Deterministic path and size rules, checked before git sees a patch.

Every rejection says what was wrong and what to do instead, in words meant for the model that
wrote the patch: the message goes back to it within the same attempt.

Glob semantics (deny and allow lists), like .gitignore: a glob without a `/` matches the file
name at any depth (`*.pem`, `.env*`); a glob with a `/` is anchored at the repository root
(`.github/**`), and `**` matches any number of directories (`**/secrets/**`). Deny
globs match case-insensitively, because the same repository is also checked out on Windows and
macOS where `.GitHub/Workflows/ci.yml` *is* the workflow file; allow globs match exactly, so
neither list can be widened by playing with case.
"""

from __future__ import annotations

import fnmatch
import os
import re
import unicodedata
from pathlib import Path

from ci_agent.config import CONFIG_FILE, DEFAULT_DENY, PatchSettings
from ci_agent.patch.diff import FilePatch, Patch, Rejection
from ci_agent.patch.invisible import HIDDEN
from ci_agent.patch.protected import WHY_DENIED, WHY_INCLUDED, include_matches, is_disguised, skeleton

_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:([/\\]|$)")
_SYMLINK_MODE = "120000"
_GITLINK_MODE = "160000"


_MAX_SEGMENT_BYTES = 255  # NAME_MAX on Linux, macOS and Windows file systems
_MAX_PATH_BYTES = 4096  # PATH_MAX on Linux


def glob_match(path: str, glob: str, *, fold_case: bool) -> bool:
    if fold_case:
        path, glob = path.casefold(), glob.casefold()
    glob = glob.strip("/") if glob.startswith("/") else glob
    if "/" not in glob:
        return fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], glob)
    return _match_parts(path.split("/"), glob.split("/"))


def _match_parts(parts: list[str], pats: list[str]) -> bool:
    if not pats:
        return not parts
    if pats[0] == "**":
        return any(_match_parts(parts[k:], pats[1:]) for k in range(len(parts) + 1))
    return bool(parts) and fnmatch.fnmatchcase(parts[0], pats[0]) and _match_parts(parts[1:], pats[1:])


def _is_git_dir_name(segment: str) -> bool:
    """`.git` as Windows and macOS see it too: any case, trailing dots/spaces, the 8.3 short name
    GIT~1, and invisible characters HFS+ ignores (zero-width joiners and the like)."""
    visible = "".join(c for c in segment if unicodedata.category(c) != "Cf")
    name = visible.casefold().rstrip(". ")
    return name == ".git" or name.startswith("git~")


def path_rejections(path: str) -> list[Rejection]:
    """Rules on the path string alone: repo-relative, no traversal, nothing under .git."""
    if not path:
        return [Rejection("path.invalid", path, "A file header has an empty path. Name every file "
                          "by its path from the repository root, e.g. `src/App/Program.cs`.")]
    if path.startswith(("/", "~")) or _WINDOWS_DRIVE.match(path):
        return [Rejection("path.absolute", path, f"`{path}` is an absolute path. Patches may only "
                          "touch files inside the repository: write the path relative to the "
                          "repository root, e.g. `src/App/Program.cs`.")]
    if "\\" in path:
        return [Rejection("path.invalid", path, f"`{path}` contains a backslash. Use forward slashes "
                          "(`/`) between directories, relative to the repository root.")]
    if any(ord(c) < 0x20 or ord(c) == 0x7F or 0xD800 <= ord(c) <= 0xDFFF for c in path):
        return [Rejection("path.invalid", path, f"{path!r} contains control characters or bytes that "
                          "are not UTF-8. Use the file's real path from the repository root.")]
    segments = path.split("/")
    if ".." in segments:
        return [Rejection("path.traversal", path, f"`{path}` contains a `..` segment, which could "
                          "reach outside the repository. Write the file's path from the repository "
                          "root without `..`.")]
    if any(s in ("", ".") for s in segments):
        return [Rejection("path.invalid", path, f"`{path}` has an empty or `.` segment. Write the "
                          "file's plain path from the repository root, e.g. `src/App/Program.cs`.")]
    if any(len(s.encode("utf-8", "surrogatepass")) > _MAX_SEGMENT_BYTES for s in segments) \
            or len(path.encode("utf-8", "surrogatepass")) > _MAX_PATH_BYTES:
        return [Rejection("path.too_long", path, f"`{path[:80]}...` is longer than file systems allow "
                          f"({_MAX_SEGMENT_BYTES} bytes per name, {_MAX_PATH_BYTES} per path). Use "
                          "the file's real path.")]
    if any(_is_git_dir_name(s) for s in segments):
        return [Rejection("path.git_dir", path, f"`{path}` is inside a `.git` directory, which holds "
                          "git's own data, configuration and hooks. Change the project's source "
                          "files only.")]
    hidden = sorted({c for c in path if ord(c) in HIDDEN})
    if hidden:
        return [Rejection("path.invisible", path, f"{path!r} contains U+{ord(hidden[0]):04X}, a "
                          "bidirectional control or invisible character, which makes a file name read "
                          "differently from what it is. Use the file's real, visible path.")]
    return []


def _symlink_rejections(path: str, repo: Path) -> list[Rejection]:
    """A path must not lead through a symlink: git refuses, and one pointing out would escape."""
    root = Path(os.path.realpath(repo))
    parts = path.split("/")
    for depth in range(1, len(parts) + 1):
        here = repo.joinpath(*parts[:depth])
        try:
            linked = here.is_symlink()
        except OSError as error:  # a name the file system refuses (too long, ...)
            return [Rejection("path.invalid", path, f"`{path[:80]}` cannot be a file here "
                              f"({error.strerror or error}). Use the file's real path.")]
        if not linked:
            continue
        target = Path(os.path.realpath(here))
        inside = target == root or root in target.parents
        where = "the directory" if depth < len(parts) else "the file"
        link = "/".join(parts[:depth])
        if not inside:
            return [Rejection("path.symlink_escape", path, f"`{path}` goes through {where} `{link}`, "
                              "a symbolic link that points outside the repository. Patches may not "
                              "write through it; change files that really live in the repository.")]
        real = target.relative_to(root).as_posix()
        return [Rejection("path.symlink", path, f"`{path}` goes through {where} `{link}`, a symbolic "
                          f"link to `{real}`. Patch the real path instead (`{real}`"
                          + (f"/{'/'.join(parts[depth:])}`)." if depth < len(parts) else "`)."))]
    return []


def _file_rejections(fp: FilePatch, settings: PatchSettings) -> list[Rejection]:
    p = fp.path
    out: list[Rejection] = []
    if _SYMLINK_MODE in fp.modes:
        out.append(Rejection("file.symlink", p, f"The patch makes `{p}` a symbolic link (mode "
                             "120000). Symbolic links are not allowed; change file contents instead."))
    if _GITLINK_MODE in fp.modes:
        out.append(Rejection("file.submodule", p, f"The patch changes `{p}` as a submodule (gitlink, "
                             "mode 160000). Submodules may not be added or moved; change regular files."))
    if fp.binary:
        out.append(Rejection("file.binary", p, f"The patch has a binary change for `{p}`. Only text "
                             "changes as unified diff hunks are allowed."))
    if fp.old_mode and fp.new_mode and fp.old_mode != fp.new_mode and not out:
        out.append(Rejection("file.mode_change", p, f"The patch changes the mode of `{p}` from "
                             f"{fp.old_mode} to {fp.new_mode}. Leave file permissions as they are; "
                             "remove the `old mode`/`new mode` lines and change contents only."))
    if fp.is_new and fp.new_mode and fp.new_mode not in ("100644", _SYMLINK_MODE, _GITLINK_MODE):
        out.append(Rejection("file.mode_change", p, f"The patch creates `{p}` with mode {fp.new_mode}. "
                             "New files must be plain files: use `new file mode 100644`."))
    if fp.copy:
        out.append(Rejection("file.copy", p, f"The patch copies a file to `{p}`. Copies are not "
                             "allowed; write the new file's contents in full as a new-file diff."))
    elif fp.rename and not settings.allow_renames:
        out.append(Rejection("file.rename", p, f"The patch renames `{fp.old_path}` to `{fp.new_path}`, "
                             "but renames are turned off (patch.allow_renames). Edit the file where "
                             "it is."))
    if fp.is_deleted and not settings.allow_deletions:
        out.append(Rejection("file.deletion", p, f"The patch deletes `{p}`, but deletions are turned "
                             "off (patch.allow_deletions). Change the file's contents instead of "
                             "deleting it."))
    return out


def _denied(path: str, settings: PatchSettings, included: tuple[str, ...]) -> tuple[str, str] | None:
    """The first deny glob (or pipeline include) `path` matches, and why it is denied."""
    # the agent's own policy file stays denied even with use_default_deny: false, or one
    # patch could raise the limits every later patch is checked against
    own = (CONFIG_FILE, *settings.config_paths)
    for glob in dict.fromkeys((*own, *settings.deny_globs)):
        if glob_match(path, glob, fold_case=True):
            why = WHY_DENIED.get(glob, "the configuration denies it") if glob in DEFAULT_DENY else (
                WHY_DENIED[CONFIG_FILE] if glob in own else
                "the repository's configuration denies it (patch.deny)")
            return glob, why
    if settings.use_default_deny:
        for pattern in included:
            if include_matches(path, pattern):
                return pattern, WHY_INCLUDED
    return None


def _glob_rejections(path: str, settings: PatchSettings, hooks_dir: str | None,
                     included: tuple[str, ...] = ()) -> list[Rejection]:
    if hooks_dir and (path == hooks_dir or path.startswith(hooks_dir.rstrip("/") + "/")):
        return [Rejection("path.hooks", path, f"`{path}` is in `{hooks_dir}`, the repository's git "
                          "hooks directory (core.hooksPath): its scripts run on every commit. "
                          "Change the project's source files only.")]
    hit = _denied(path, settings, included)
    if hit is not None:
        glob, why = hit
        return [Rejection("path.denied", path, f"`{path}` may not be changed: it matches `{glob}` "
                          f"and {why}. Fix the failure in the project's source or test code "
                          "instead.")]
    if is_disguised(path) and (hit := _denied(skeleton(path), settings, included)) is not None:
        return [Rejection("path.lookalike", path, f"`{path}` uses non-Latin letters that read as "
                          f"`{skeleton(path)}`, which may not be changed ({hit[1]}). Use the "
                          "project's real file names, and fix the failure in its source or test "
                          "code instead.")]
    if settings.allow and not any(glob_match(path, g, fold_case=False) for g in settings.allow):
        return [Rejection("path.not_allowed", path, f"`{path}` is outside the paths ci-agent may "
                          f"change (patch.allow: {', '.join(settings.allow)}). Fix the failure "
                          "within those paths.")]
    return []


def _size_rejections(patch: Patch, settings: PatchSettings) -> list[Rejection]:
    out: list[Rejection] = []
    if len(patch.files) > settings.max_files:
        out.append(Rejection("size.files", "", f"The patch touches {len(patch.files)} files; the "
                             f"limit is {settings.max_files} (patch.max_files). Send a minimal patch "
                             "that changes only what the reported failure needs."))
    changed = patch.added + patch.removed
    if changed > settings.max_changed_lines:
        out.append(Rejection("size.lines", "", f"The patch changes {changed} lines ({patch.added} "
                             f"added, {patch.removed} removed); the limit is "
                             f"{settings.max_changed_lines} (patch.max_changed_lines). Send a "
                             "minimal patch: no reformatting, no unrelated clean-ups."))
    return out


def hooks_dir_of(repo: Path, hooks_path: str | None) -> str | None:
    """core.hooksPath as a repo-relative path when it points inside the work tree."""
    if not hooks_path:
        return None
    root = Path(os.path.realpath(repo))
    target = Path(os.path.realpath(repo / hooks_path))
    if target == root or root not in target.parents:
        return None
    return target.relative_to(root).as_posix()


def police(patch: Patch, settings: PatchSettings, repo: Path | None = None,
           hooks_dir: str | None = None, included: tuple[str, ...] = ()) -> list[Rejection]:
    """Every policy rejection for `patch`; file-system rules only when `repo` is given;
    `included`: patterns of the files the GitLab pipeline includes (denied like it)."""
    if not patch.files:
        return [Rejection("patch.empty", "", "No unified diff was found. Send the change as a "
                          "unified diff: `--- a/path`, `+++ b/path` and `@@ -l,n +l,n @@` hunks, "
                          "paths relative to the repository root.")]
    out: list[Rejection] = []
    seen: set[str] = set()
    for fp in patch.files:
        names = list(dict.fromkeys([*fp.mentioned, *(p for p in (fp.old_path, fp.new_path) if p)]))
        bad = [r for name in names for r in path_rejections(name)]
        if not bad and repo is not None:
            bad = [r for name in names for r in _symlink_rejections(name, repo)]
        if not bad:
            bad = [r for name in names for r in _glob_rejections(name, settings, hooks_dir, included)]
        out += bad
        out += _file_rejections(fp, settings)
        for name in (fp.old_path, fp.new_path):
            if name is not None and name in seen and not bad:
                out.append(Rejection("patch.duplicate_file", name, f"`{name}` appears in more than "
                                     "one file diff. Put all changes to a file in one diff with "
                                     "several hunks."))
        seen.update(p for p in (fp.old_path, fp.new_path) if p is not None)
    out += _size_rejections(patch, settings)
    return _unique(out)


def _unique(rejections: list[Rejection]) -> list[Rejection]:
    return list(dict.fromkeys(rejections))
