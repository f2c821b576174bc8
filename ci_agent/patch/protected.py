"""What a patch may never change by default, and why: everything that decides what CI or a
reviewer runs or trusts (DESIGN §4.4).

Three things live here because the deny list alone cannot express them:
- the reason each default glob is denied, so the model's rejection says why;
- `.gitlab-ci.yml`'s local includes: a file the pipeline includes is pipeline configuration
  whatever its name, so the engine reads the pipeline file (from the branch being fixed and the
  default branch when git knows it) and denies every file it includes, at any depth;
- look-alike names: `.gіthub/workflows/ci.yml` with a Cyrillic `і` is not GitHub's workflow
  directory, but a reviewer reads it as one; a non-ASCII name whose Latin skeleton is a denied
  path is refused as a disguise.
"""

from __future__ import annotations

import fnmatch
import re
import unicodedata
from collections.abc import Callable, Iterator
from typing import Any

import yaml

_CI = "it is CI configuration: it decides what the pipeline runs"
_HOOK = "it is a git hook setting: its scripts run on every commit or push"
_FEED = "it configures where packages are downloaded from: one line can point a restore at any feed"
_SECRET = "it may hold secrets"
WHY_DENIED: dict[str, str] = {
    ".github/**": "it is GitHub configuration (workflows, composite actions, CODEOWNERS, "
                  "dependabot): it decides what CI runs and who reviews",
    ".gitlab-ci.yml": _CI,
    ".gitlab/**": _CI,
    "CODEOWNERS": "it decides who must review changes",
    ".gitmodules": "it decides where submodules are fetched from",
    ".gitattributes": "it decides how git filters, diffs and merges files",
    **{g: _HOOK for g in ("**/.husky/**", "**/.githooks/**", "**/.git-hooks/**", "**/.lefthook/**",
                          "lefthook.yml", "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml",
                          "lefthook-local.yml", "lefthook-local.yaml")},
    **{g: _HOOK + " (and CI runs it as a check)" for g in (".pre-commit-config.yaml",
                                                            ".pre-commit-config.yml")},
    **{g: _FEED for g in ("nuget.config", ".npmrc", ".yarnrc", ".yarnrc.yml", "pip.conf", "pip.ini",
                          ".pypirc")},
    ".ci-agent.yml": "it is ci-agent's own configuration",
    ".env*": _SECRET,
    "*.pem": "it may hold a private key or certificate",
    "*.key": "it may hold a private key",
    "**/secrets/**": _SECRET,
}
GITLAB_CI = ".gitlab-ci.yml"
WHY_INCLUDED = "`.gitlab-ci.yml` includes it, so it is CI configuration"

# Letters from other scripts that render like Latin ones (Unicode's confusables, the subset that
# can spell the names we deny); NFKD folds full-width and styled letters on its own.
_CONFUSABLE = str.maketrans({
    "а": "a", "в": "b", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i", "ј": "j", "к": "k",
    "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s",
    "ԁ": "d", "ԛ": "q", "ԝ": "w", "ɡ": "g", "ı": "i", "ℓ": "l", "α": "a", "β": "b", "ε": "e",
    "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x",
    "ꓲ": "i", "Ι": "i", "Ο": "o", "Ѕ": "s", "І": "i", "Ј": "j", "–": "-", "‐": "-", "‑": "-",
    "․": ".", "﹒": ".", "．": ".", "∕": "/", "⁄": "/",
})


def skeleton(path: str) -> str:
    """`path` as a reader sees it: compatibility forms folded, marks and invisibles dropped,
    look-alike letters mapped to Latin, case folded."""
    decomposed = unicodedata.normalize("NFKD", path)
    kept = "".join(c for c in decomposed if unicodedata.category(c) not in ("Mn", "Me", "Cf"))
    return kept.translate(_CONFUSABLE).casefold()


def is_disguised(path: str) -> bool:
    """True when `path` is not ASCII but reads like an ASCII name (so a match on its skeleton is
    a disguise, not a file of its own in another language)."""
    if path.isascii():
        return False
    look = skeleton(path)
    return look.isascii() and look != path.casefold()


# ---- GitLab's local includes ----------------------------------------------------------------

class _TolerantLoader(yaml.SafeLoader):
    """GitLab's YAML: custom tags (`!reference [.job, script]`) are read as plain values."""


def _any_tag(loader: _TolerantLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_scalar(node)  # type: ignore[arg-type]


_TolerantLoader.add_multi_constructor("!", _any_tag)

_MAX_PIPELINE_BYTES = 2_000_000
_MAX_FILES = 100  # included files read while following includes (GitLab's own limit is 150)
_VARIABLE = re.compile(r"\$\{?\w+\}?")


def parse_pipeline(text: str) -> object:
    """The pipeline file as data; None when it is not YAML (GitLab would reject it anyway)."""
    if len(text) > _MAX_PIPELINE_BYTES:
        return None
    try:
        return yaml.load(text, Loader=_TolerantLoader)  # a SafeLoader subclass: no objects
    except (yaml.YAMLError, RecursionError, ValueError):
        return None


def _include_entries(value: object, depth: int = 0) -> Iterator[str]:
    """Local paths of one `include:` value, in each form GitLab accepts: a string (a path, or a
    URL which is remote), a list of strings and mappings, a mapping with `local:`. YAML anchors
    can make a list contain itself: nesting deeper than GitLab's forms is not followed."""
    if isinstance(value, str):
        if not re.match(r"^[a-z][a-z0-9+.-]*://", value, re.I):
            yield value
    elif isinstance(value, list) and depth < 3:
        for item in value:
            yield from _include_entries(item, depth + 1)
    elif isinstance(value, dict):
        local = value.get("local")
        if isinstance(local, str):
            yield local
        # `remote:`, `template:`, `component:` and `project:` + `file:` name other repositories


def local_includes(document: object) -> list[str]:
    """Every local file `document` includes: top-level `include:` and child pipelines'
    `trigger: include:`, as repo-relative patterns (GitLab allows `*` and `**`; a `$VARIABLE`
    could be anything, so it becomes `*`)."""
    if not isinstance(document, dict):
        return []
    found = list(_include_entries(document.get("include")))
    for job in document.values():
        trigger = job.get("trigger") if isinstance(job, dict) else None
        if isinstance(trigger, dict):
            found += _include_entries(trigger.get("include"))
    out: list[str] = []
    for raw in found:
        pattern = _VARIABLE.sub("*", raw.strip()).lstrip("/")
        while pattern.startswith("./"):
            pattern = pattern[2:]
        if pattern and pattern not in out:
            out.append(pattern)
    return out


def included_files(read: Callable[[str], str | None], root: str = GITLAB_CI) -> list[str]:
    """Patterns of every file `root` includes, following includes of included files (a file a
    wildcard names is denied but not followed). `read` returns a file's text or None."""
    seen: list[str] = []
    queue = [root]
    reads = 0
    while queue and reads < _MAX_FILES:
        text = read(queue.pop(0))
        reads += 1
        for pattern in local_includes(parse_pipeline(text)) if text is not None else []:
            if pattern not in seen and pattern != root:
                seen.append(pattern)
                if not any(c in pattern for c in "*?["):
                    queue.append(pattern)
    return seen


def include_matches(path: str, pattern: str) -> bool:
    """Like GitLab's wildcard includes but wider: `*` may cross directories too (fnmatch), and
    case is folded, as for every denied path."""
    return fnmatch.fnmatchcase(path.casefold(), pattern.casefold())
