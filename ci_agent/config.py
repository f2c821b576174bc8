"""Settings from `.ci-agent.yml` at the repository root, validated before anything runs.

Only what the patch engine needs for now (`patch:` and `commit:`). Each top-level section is
one frozen dataclass with its own loader registered in `_SECTIONS`, so a later section (model,
budget, notes, ...) is one dataclass, one loader and one registry line. Unknown keys are errors
(with a "did you mean" hint): a misspelt `allow_test_skip` silently ignored would be worse.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

import yaml

from ci_agent.errors import ConfigError

CONFIG_FILE = ".ci-agent.yml"

DEFAULT_DENY: tuple[str, ...] = (
    ".github/workflows/**",
    ".gitlab-ci.yml",
    ".gitlab/**",
    ".ci-agent.yml",
    ".env*",
    "*.pem",
    "*.key",
    "**/secrets/**",
)


@dataclass(frozen=True, slots=True)
class GateSettings:
    """Fake-fix gates; each flag opts in to what is rejected by default."""

    allow_test_deletion: bool = False
    allow_test_skips: bool = False
    allow_assertion_changes: bool = False
    allow_warning_suppression: bool = False
    allow_strictness_changes: bool = False
    allow_empty_catch: bool = False


@dataclass(frozen=True, slots=True)
class PatchSettings:
    max_files: int = 10
    max_changed_lines: int = 200
    max_patch_bytes: int = 1_000_000
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    use_default_deny: bool = True
    allow_renames: bool = False
    allow_deletions: bool = False
    gates: GateSettings = field(default_factory=GateSettings)

    @property
    def deny_globs(self) -> tuple[str, ...]:
        return (DEFAULT_DENY if self.use_default_deny else ()) + self.deny


@dataclass(frozen=True, slots=True)
class CommitSettings:
    author_name: str = "ci-agent"
    author_email: str = "ci-agent@users.noreply.github.com"
    no_verify: bool = False


@dataclass(frozen=True, slots=True)
class Settings:
    patch: PatchSettings = field(default_factory=PatchSettings)
    commit: CommitSettings = field(default_factory=CommitSettings)


T = TypeVar("T")


def _unknown(key: str, where: str, known: list[str]) -> ConfigError:
    hint = difflib.get_close_matches(key, known, n=1)
    suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
    return ConfigError(
        f"{CONFIG_FILE}: unknown key {where + key!r}{suggestion}; known keys: {', '.join(sorted(known))}"
    )


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{CONFIG_FILE}: {where or 'the file'} must be a mapping, got {_kind(value)}")
    for key in value:
        if not isinstance(key, str):
            raise ConfigError(f"{CONFIG_FILE}: key {key!r} under {where or 'the top level'} must be a string")
    return value


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _build(cls: type[T], raw: object, where: str, nested: Mapping[str, Callable[[object, str], object]]) -> T:
    """Validate `raw` against the dataclass `cls` field by field (type from its default)."""
    data = _mapping(raw, where)
    known = {f.name: f for f in fields(cls)}  # type: ignore[arg-type]
    defaults = cls()
    values: dict[str, object] = {}
    for key, value in data.items():
        if key not in known:
            raise _unknown(key, f"{where}." if where else "", list(known))
        path = f"{where}.{key}" if where else key
        if key in nested:
            values[key] = nested[key](value, path)
        else:
            values[key] = _coerce(value, getattr(defaults, key), path)
    return cls(**values)


def _coerce(value: object, default: object, path: str) -> object:
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{CONFIG_FILE}: {path} must be true or false, got {_kind(value)} {value!r}")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"{CONFIG_FILE}: {path} must be a positive integer, got {value!r}")
        return value
    if isinstance(default, str):
        if not isinstance(value, str) or not value.strip() or "\n" in value:
            raise ConfigError(f"{CONFIG_FILE}: {path} must be a non-empty one-line string, got {value!r}")
        return value
    if isinstance(default, tuple):
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise ConfigError(f"{CONFIG_FILE}: {path} must be a list of glob strings, got {value!r}")
        return tuple(value)
    raise ConfigError(f"{CONFIG_FILE}: {path} cannot be set")  # pragma: no cover - no such field yet


def _gates(raw: object, where: str) -> GateSettings:
    return _build(GateSettings, raw, where, {})


def _patch(raw: object, where: str) -> PatchSettings:
    return _build(PatchSettings, raw, where, {"gates": _gates})


def _commit(raw: object, where: str) -> CommitSettings:
    settings = _build(CommitSettings, raw, where, {})
    if "@" not in settings.author_email or any(c in settings.author_email for c in "<> "):
        raise ConfigError(
            f"{CONFIG_FILE}: {where}.author_email must be a plain address like bot@example.com, "
            f"got {settings.author_email!r}"
        )
    if any(c in settings.author_name for c in "<>"):
        raise ConfigError(f"{CONFIG_FILE}: {where}.author_name must not contain < or >")
    return settings


_SECTIONS: dict[str, Callable[[object, str], object]] = {"patch": _patch, "commit": _commit}


def settings_from_mapping(raw: object) -> Settings:
    """Settings from already-parsed YAML (a mapping, or None for an empty file)."""
    return _build(Settings, raw, "", _SECTIONS)


def parse_settings(text: str) -> Settings:
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{CONFIG_FILE}: not valid YAML: {exc}") from exc
    return settings_from_mapping(raw)


def load_settings(repo_root: str | Path) -> Settings:
    """Settings from `<repo_root>/.ci-agent.yml`; the defaults when there is no such file."""
    path = Path(repo_root) / CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Settings()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{CONFIG_FILE}: cannot read {path}: {exc}") from exc
    return parse_settings(text)
