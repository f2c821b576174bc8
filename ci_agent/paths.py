"""Where the repository is, and what a printed path means relative to it.

Build logs print paths in the namespace of the machine that built (a Windows dev box, a
Docker `/app`, a runner's `/home/runner/work/x/x`), which is often not the machine running
ci-agent. So the repo root is a string in the log's namespace: `--repo-root`, else the git
top level when the log's paths lie under it, else inferred from the paths the log printed.
Windows paths compare case-insensitively and with either separator.
"""

from __future__ import annotations

import functools
import ntpath
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_NOT_A_ROOT = frozenset({"users", "home", "documents and settings", "tmp", "var", "opt", "mnt"})
_SOLUTION_SUFFIXES = (".sln", ".slnx", ".slnf")
_WIN_ABS_RE = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")
# Reproducible builds map the source root to `/_/`; `~/` shows up in some runners' traces.
_DETERMINISTIC_PREFIXES = ("/_/", "~/")
# Conventional folders below a checkout root: the root is the parent of the first one.
# (Not `source`: Visual Studio puts every checkout under `%USERPROFILE%\\source\\repos`.)
_BELOW_ROOT_DIRS = frozenset({"src", "test", "tests", "node_modules", "bin", "obj"})
# Toolchain and package-cache locations: never the repository, never evidence for its root.
_OUTSIDE_REPO_RE = re.compile(
    r"[\\/](?:program files(?: \(x86\))?|\.nuget[\\/]packages|nuget[\\/]packages|hostedtoolcache"
    r"|microsoft visual studio|site-packages|dist-packages)[\\/]"
    r"|^/usr/(?:share|lib|local/share|local/lib)/dotnet/|^/opt/dotnet/"
    r"|[\\/]dotnet[\\/](?:sdk|packs|shared)[\\/]|^/root/\.nuget/"
    r"|^(?:/home/runner/work|/Users/runner/work|/__w|[a-z]:[\\/]a)[\\/]_(?:temp|actions|tool)[\\/]",
    re.IGNORECASE,
)
# GitHub-hosted runners (Linux, macOS, container jobs, Windows) check a repository out into
# `<work>/<repo>/<repo>` (GITHUB_WORKSPACE); `_temp`, `_actions`, `_tool` beside it are the runner's.
_RUNNER_WORKSPACE_RE = re.compile(
    r"(?:/home/runner/work|/Users/runner/work|/__w|[a-z]:[\\/]a)[\\/](?!_)[^\\/]+[\\/][^\\/]+", re.IGNORECASE
)


def is_windows_path(path: str) -> bool:
    return bool(_WIN_ABS_RE.match(path)) or ("\\" in path and "/" not in path)


def is_absolute(path: str) -> bool:
    return bool(_WIN_ABS_RE.match(path)) or path.startswith("/")


def is_toolchain_path(path: str) -> bool:
    """SDK `.targets`, NuGet caches, Visual Studio: printed paths that are never repo files."""
    return bool(_OUTSIDE_REPO_RE.search(path))


def _normpath(path: str) -> str:
    return ntpath.normpath(path) if is_windows_path(path) else posixpath.normpath(path)


def _parts(path: str) -> list[str]:
    """Components of an absolute path; the first is the anchor (`C:`, `\\\\server`, `/`)."""
    if is_windows_path(path):
        drive, rest = ntpath.splitdrive(path.replace("/", "\\"))
        return [drive, *[p for p in rest.split("\\") if p]]
    return ["/", *[p for p in path.split("/") if p]]


def _fold(part: str, windows: bool) -> str:
    return part.casefold() if windows else part


def relative_to(path: str, root: str) -> str | None:
    """`path` relative to `root` as POSIX text, or None when it is not inside `root`."""
    if not (is_absolute(path) and is_absolute(root)):
        return None
    windows = is_windows_path(root)
    if windows != is_windows_path(path):
        return None
    p, r = _parts(_normpath(path)), _parts(_normpath(root))
    if len(p) < len(r) or [_fold(x, windows) for x in p[: len(r)]] != [_fold(x, windows) for x in r]:
        return None
    return "/".join(p[len(r):])


def join_dir(base_dir: str, relative: str) -> str:
    """Resolve a path printed relative to `base_dir` (e.g. a project directory)."""
    if is_windows_path(base_dir):
        return ntpath.normpath(ntpath.join(base_dir, relative.replace("/", "\\")))
    return posixpath.normpath(posixpath.join(base_dir, relative.replace("\\", "/")))


@functools.lru_cache(maxsize=16384)
def dirname(path: str) -> str:
    return ntpath.dirname(path) if is_windows_path(path) else posixpath.dirname(path)


def to_posix_relative(path: str) -> str:
    return posixpath.normpath(path.replace("\\", "/")).removeprefix("./")


@dataclass(frozen=True, slots=True)
class Located:
    """A printed path made repo-relative when possible."""

    path: str
    in_repo: bool


@dataclass(frozen=True, slots=True)
class RepoPaths:
    """Repo-relative path resolution against one root in the log's namespace (None: unknown)."""

    root: str | None

    def locate(self, printed: str, base_dir: str | None = None) -> Located:
        """`printed` as repo-relative POSIX (in_repo) or as printed (not in the repo).

        A relative path is resolved against `base_dir` (MSBuild prints compiler paths relative
        to the project directory) when it is absolute, else taken as relative to the root.
        """
        return _locate(self.root, printed, base_dir)


@functools.lru_cache(maxsize=16384)  # a big log names the same few hundred files thousands of times
def _locate(root: str | None, printed: str, base_dir: str | None) -> Located:
    path = printed.strip()
    for prefix in _DETERMINISTIC_PREFIXES:
        if path.startswith(prefix):
            return Located(to_posix_relative(path[len(prefix):]), True)
    if not is_absolute(path) and base_dir:
        path = join_dir(base_dir, path)
    if not is_absolute(path):
        rel = to_posix_relative(path)
        return Located(rel, not rel.startswith("../") and rel != "..")
    if is_toolchain_path(path):
        return Located(printed, False)
    inside = relative_to(path, root) if root is not None else None
    if inside:
        return Located(inside, True)
    return Located(printed, False)


# --------------------------------------------------------------------------- repo root


def common_dir(paths: Iterable[str]) -> str | None:
    """Deepest directory containing every absolute path (all in one namespace), or None."""
    first: list[str] | None = None
    common: list[str] = []
    windows = False
    for path in paths:
        parts = _parts(_normpath(path))
        if first is None:
            first, common, windows = parts, parts, is_windows_path(path)
            continue
        if is_windows_path(path) != windows:
            return None
        n = 0
        for a, b in zip(common, parts, strict=False):
            if _fold(a, windows) != _fold(b, windows):
                break
            n += 1
        common = common[:n]
    if not common:
        return None
    return _join_parts(common, windows)


def _join_parts(parts: list[str], windows: bool) -> str:
    if windows:
        anchor = parts[0] + "\\"
        return anchor + "\\".join(parts[1:])
    return "/" + "/".join(parts[1:])


def infer_repo_root(files: Iterable[str], projects: Iterable[str] = ()) -> str | None:
    """Guess the checkout root from the absolute paths a log printed.

    Deepest common directory of in-repo-looking files and project directories, then moved up
    to the parent of a conventional folder (`src`, `tests`, `node_modules`...) and, for the
    Visual Studio layout `Product\\Product.Api\\Product.Api.csproj`, to the solution folder
    whose name prefixes the project folder's. A `.sln` marker above every path is taken as the
    root; a directory on this disk with `.git` wins over everything.
    """
    files, projects = list(dict.fromkeys(files)), list(dict.fromkeys(projects))  # big logs repeat them
    project_dirs = [dirname(p) for p in projects if is_absolute(p) and not is_toolchain_path(p)
                    and not p.casefold().endswith(_SOLUTION_SUFFIXES)]
    file_dirs = [dirname(p) for p in files if is_absolute(p) and not is_toolchain_path(p)]
    candidates = [p for p in (*file_dirs, *project_dirs) if not p.startswith(_DETERMINISTIC_PREFIXES)]
    found = common_dir(candidates)
    # A solution file (NuGet lines carry it as their marker) sits at or near the root.
    solutions = sorted((dirname(p) for p in projects if is_absolute(p)
                        and p.casefold().endswith(_SOLUTION_SUFFIXES) and not is_toolchain_path(p)), key=len)
    if solutions and all(relative_to(c, solutions[0]) is not None for c in candidates):
        found = solutions[0]
    if found is None:
        return None
    windows = is_windows_path(found)
    parts = _parts(found)
    workspace = _runner_workspace_parts(found)
    start = workspace or 2  # `C:\\Tests\\Repo\\src`: not the drive; `/home/runner/work/src/src`: not the repo
    for i, part in enumerate(parts[start:], start=start):
        if part.casefold() in _BELOW_ROOT_DIRS:
            parts = parts[:i]
            break
    else:
        if workspace:
            parts = parts[:workspace]
        folded_projects = {_fold(d.rstrip("\\/"), windows) for d in project_dirs}
        if (len(parts) > 2 and _fold(_join_parts(parts, windows), windows) in folded_projects
                and parts[-1].casefold().startswith(parts[-2].casefold())):
            parts = parts[:-1]
    if len(parts) < 2 or (len(parts) == 2 and parts[1].casefold() in _NOT_A_ROOT):
        return None  # paths from unrelated machines or folders: no common checkout to speak of
    root = _join_parts(parts, windows)
    return _git_dir_above(root) or root


def _runner_workspace_parts(directory: str) -> int | None:
    """How many of `directory`'s parts are a GitHub runner's workspace (`/home/runner/work/r/r`)."""
    m = _RUNNER_WORKSPACE_RE.match(directory)
    if m is None or (len(directory) > m.end() and directory[m.end()] not in "\\/"):
        return None
    return len(_parts(m.group(0)))


def _git_dir_above(path: str) -> str | None:
    """When the inferred root exists here (same machine), the enclosing `.git` settles it."""
    try:
        here = Path(path)
        if not here.is_dir():
            return None
        for candidate in (here, *here.parents):
            if (candidate / ".git").exists():
                return str(candidate)
    except OSError:
        return None
    return None


def choose_repo_root(explicit: str | None, git_root: str | None, files: list[str],
                     projects: list[str]) -> str | None:
    """`--repo-root`, else the git root if the log's paths are under it, else inferred."""
    if explicit:
        return explicit
    files, projects = list(dict.fromkeys(files)), list(dict.fromkeys(projects))
    absolute = [p for p in (*files, *projects) if is_absolute(p) and not is_toolchain_path(p)]
    if git_root and (not absolute or any(relative_to(p, git_root) is not None for p in absolute)):
        return git_root
    return infer_repo_root(files, projects) or git_root


# --------------------------------------------------------------------------- stack frames

# The frame shapes, in the order they are tried, each with whether its file is a bare name
# (Java's `F.java`: which folder it lies in is unknown, so it is never located).
_FRAME_SHAPES: tuple[tuple[re.Pattern[str], bool], ...] = (
    # Python traceback: `File "f.py", line N, in m`
    (re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<method>.+))?\s*$'), False),
    # pytest's short traceback: `f.py:N: in m`
    (re.compile(r"^(?P<file>[^\s:]+\.py):(?P<line>\d+):\s*(?:in\s+(?P<method>\S+))?.*$"), False),
    # Java: `at pkg.C.m(C.java:N)`
    (re.compile(r"^\s*at\s+(?P<method>[\w$.<>/]+)\((?P<file>[^():]+\.\w+):(?P<line>\d+)\)\s*$"), True),
    # Node: `at fn (file:line:col)` or `at file:line:col`.
    (re.compile(r"^\s*at\s+(?:(?P<method>[^()]+?)\s+\()?(?P<file>(?:[A-Za-z]:)?[^():]+?):(?P<line>\d+):\d+\)?\s*$"),
     False),
    # .NET `at M() in F:line N` in any language: `bei ... in ...:Zeile N`, `à ... dans ...:ligne N`,
    # `en ... en ...:línea N`, `在 ... 位置 ...:行号 N`; MTP prints `in F:N` without the word.
    (re.compile(r"^\s*(?P<at>[^\W\d]\w*)\s+(?P<method>\S.*?)\s+(?P<in>[^\W\d]\w*)\s+"
                r"(?P<file>(?:[A-Za-z]:)?[^:]+?):(?:[^\W\d_]+\s?)?(?P<line>\d+)\s*$"), False),
)
# A .NET frame without a file (no PDB): `at M()` in any language.
_DOTNET_BARE_FRAME_RE = re.compile(r"^\s*(?P<at>[^\W\d]\w*)\s+(?P<method>[\w.`<>\[\],+$|]+\(.*\))\s*$")
# Vendored or runtime code that can sit inside the checkout or look like a relative path.
_VENDORED_RE = re.compile(r"(?:^|[\\/])node_modules[\\/]|^(?:node:|internal/)")
# Frames of test frameworks and the runtime are never the code under test, even with `/_/` paths.
_FRAMEWORK_PREFIXES = (
    "System.", "Microsoft.", "Xunit.", "NUnit.", "FluentAssertions.", "Shouldly.", "Moq.", "Castle.",
    "AwesomeAssertions.", "NSubstitute.", "MSTest.", "VerifyTests.", "VerifyXunit.", "VerifyNUnit.",
    "DiffEngine.", "TUnit.",
)


@dataclass(frozen=True, slots=True)
class Frame:
    text: str  # the frame as printed (stripped), file made repo-relative when in the repo
    method: str | None
    file: str | None
    line: int | None
    in_repo: bool


def parse_frame(line: str, paths: RepoPaths) -> Frame | None:
    """One stack-trace line as a Frame, or None when it is not a frame (banners, `---`)."""
    stripped = line.strip()
    for regex, bare_file in _FRAME_SHAPES:
        m = regex.match(stripped)
        if m is None:
            continue
        method = m.groupdict().get("method")
        printed = m.group("file")
        if bare_file:
            return Frame(stripped, method, printed, int(m.group("line")), False)
        located = paths.locate(printed)
        # A file under the repo root is project code whatever its namespace. `/_/` and relative
        # paths only say "some repository": there the runtime and test frameworks are excluded.
        ambiguous = not is_absolute(printed) or printed.startswith(_DETERMINISTIC_PREFIXES)
        in_repo = (located.in_repo and not is_vendored_path(printed)
                   and not (ambiguous and is_framework_method(method)))
        text = stripped.replace(printed, located.path, 1) if located.in_repo else stripped
        file = located.path if located.in_repo else printed
        return Frame(text, method, file, int(m.group("line")), in_repo)
    m = _DOTNET_BARE_FRAME_RE.match(stripped)
    if m is not None:
        return Frame(stripped, m.group("method"), None, None, False)
    return None


def is_vendored_path(path: str) -> bool:
    """`node_modules`, Node internals: never the project's code even inside the checkout."""
    return bool(_VENDORED_RE.search(path))


def is_framework_method(method: str | None) -> bool:
    return method is not None and method.startswith(_FRAMEWORK_PREFIXES)


@dataclass(frozen=True, slots=True)
class ProjectFrames:
    frames: tuple[Frame, ...]  # every project frame, in stack order
    total: int  # every frame the stack had


def project_frames(stack: str | None, paths: RepoPaths, classname: str | None = None,
                   test_name: str | None = None) -> ProjectFrames:
    """The frames of a stack trace that point into the project.

    A frame is a project frame when its file lies in the repository. When no frame has a file
    (no PDBs), frames whose method lies in the failing test's own namespace are kept instead;
    Java frames (bare file names) are kept when they are in the test class's package.
    """
    if not stack:
        return ProjectFrames((), 0)
    frames = [f for f in (parse_frame(line, paths) for line in stack.splitlines()) if f is not None]
    kept = [f for f in frames if f.in_repo]
    if not kept:
        namespace = _namespace_of(classname, test_name)
        if namespace:
            kept = [f for f in frames if f.method is not None and f.method.startswith(namespace + ".")
                    and (f.file is None or not is_absolute(f.file))]
    return ProjectFrames(tuple(kept), len(frames))


def _namespace_of(classname: str | None, test_name: str | None) -> str | None:
    """The test's namespace (Java: package): the class name minus its last component."""
    if classname and "." in classname:
        return classname.rsplit(".", 1)[0]
    if test_name and test_name.count(".") >= 2:
        return test_name.split("(", 1)[0].rsplit(".", 2)[0]
    return None
