"""Settings from `.ci-agent.yml`, `CI_AGENT_*` environment variables and command-line flags.

Precedence: flags > environment > file > defaults. Each layer is flattened into dotted leaf
paths (`budget.max_attempts`) tagged with where the value came from, the layers are merged, and
the frozen dataclass tree of `ci_agent.config` is built once from the merged leaves, so every
value is validated the same way whatever its source and every error names the key *and* its
source. Unknown keys are errors (with a "did you mean" hint): a misspelt `allow_test_skip`
silently ignored would be worse.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
from collections.abc import Callable, Iterator, Mapping
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml

from ci_agent.config import (
    CONFIG_FILE,
    PRICE_KEYS,
    CommitSettings,
    ModelConfig,
    ModelPrice,
    Settings,
    thinking_budget_problem,
    thinking_mode_problem,
)
from ci_agent.errors import ConfigError

ENV_PREFIX = "CI_AGENT_"
COMMAND_LINE = "command line"

T = TypeVar("T")
Leaves = dict[str, tuple[object, str]]  # dotted path -> (raw value, source label)

# A section that may be given as its one list field directly.
_SHORTHAND = {"results": "globs"}
_LANGUAGE_RE = re.compile(r"match|[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*")


# --------------------------------------------------------------------------- schema


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _leaf_paths(cls: type[Any], where: str = "") -> Iterator[tuple[str, Any, Mapping[str, Any]]]:
    """(dotted path, default, field metadata) of every leaf setting, in declaration order."""
    defaults = cls()
    for f in fields(cls):
        if f.metadata.get("internal"):  # set by the program, never by a file or variable
            continue
        default = getattr(defaults, f.name)
        path = _join(where, f.name)
        if is_dataclass(default):
            yield from _leaf_paths(type(default), path)
        else:
            yield path, default, f.metadata


_LEAVES = {path: (default, meta) for path, default, meta in _leaf_paths(Settings)}
_SECTION_NAMES = tuple(f.name for f in fields(Settings) if is_dataclass(getattr(Settings(), f.name)))


def env_name(path: str) -> str:
    """`budget.max_attempts` -> `CI_AGENT_BUDGET_MAX_ATTEMPTS`."""
    return ENV_PREFIX + path.replace(".", "_").upper()


_ENV_NAMES = {env_name(path): path for path in _LEAVES}


# --------------------------------------------------------------------------- layers


def _unknown(key: str, where: str, known: list[str], source: str = CONFIG_FILE) -> ConfigError:
    hint = difflib.get_close_matches(key, known, n=1)
    suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
    return ConfigError(
        f"{source}: unknown key {where + key!r}{suggestion}; known keys: {', '.join(sorted(known))}"
    )


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{CONFIG_FILE}: {where or 'the file'} must be a mapping, got {_kind(value)}")
    for key in value:
        if not isinstance(key, str):
            raise ConfigError(f"{CONFIG_FILE}: key {key!r} under {where or 'the top level'} must be a string")
    return value


def _file_leaves(raw: object, cls: type[Any], where: str, out: Leaves) -> None:
    """Flatten the parsed YAML of one section into `out`, refusing unknown keys."""
    data = _mapping(raw, where)
    defaults = cls()
    known = [f.name for f in fields(cls) if not f.metadata.get("internal")]
    for key, value in data.items():
        if key not in known:
            raise _unknown(key, f"{where}." if where else "", known)
        path = _join(where, key)
        default = getattr(defaults, key)
        if not is_dataclass(default):
            out[path] = (value, CONFIG_FILE)
        elif path in _SHORTHAND and isinstance(value, (list, str)):
            out[_join(path, _SHORTHAND[path])] = (value, CONFIG_FILE)
        else:
            _file_leaves(value, type(default), path, out)


def _env_value(text: str, default: object, kind: str | None) -> object:
    """An environment string as the YAML value it stands for (validation happens later)."""
    text = text.strip()
    if kind == "prices":  # a mapping, written in YAML (or JSON) in the variable
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError:
            return text
    if isinstance(default, bool):
        lowered = text.lower()
        if lowered in ("true", "1", "yes", "on"):
            return True
        if lowered in ("false", "0", "no", "off"):
            return False
        return text
    if isinstance(default, float):
        return float(text) if re.fullmatch(r"[+-]?\d{1,9}(\.\d{1,9})?", text) else text
    if isinstance(default, int):
        return int(text) if re.fullmatch(r"[+-]?\d{1,18}", text) else text
    if isinstance(default, tuple) and kind == "text":
        return [line for line in text.splitlines() if line.strip()]
    if isinstance(default, tuple) and kind != "argv":  # globs: comma or newline separated
        return [part.strip() for part in re.split(r"[,\n]", text) if part.strip()]
    return text


def _env_leaves(env: Mapping[str, str], out: Leaves) -> None:
    """`CI_AGENT_<SECTION>_<KEY>` variables. Empty values count as unset (CI systems pass empty
    inputs). A name under a known section that names no key is an error (a typo would otherwise
    be silently ignored); other `CI_AGENT_*` names (e.g. `CI_AGENT_ANTHROPIC_BASE_URL`) are not
    settings and are left alone."""
    for name in sorted(env):
        if not name.startswith(ENV_PREFIX) or not env[name].strip():
            continue
        path = _ENV_NAMES.get(name)
        if path is None:
            section = next((s for s in _SECTION_NAMES if name.startswith(env_name(s) + "_")), None)
            if section is not None:
                raise _unknown(name, "", [n for n in _ENV_NAMES if n.startswith(env_name(section))],
                               "environment")
            continue
        default, meta = _LEAVES[path]
        out[path] = (_env_value(env[name], default, meta.get("kind")), f"environment variable {name}")


def _override_leaves(overrides: Mapping[str, object], out: Leaves) -> None:
    """Flags the CLI maps onto dotted paths (`{"budget.max_attempts": 2}`); None = flag not given."""
    for path, value in overrides.items():
        if path not in _LEAVES:
            raise _unknown(path, "", list(_LEAVES), COMMAND_LINE)
        if value is None:
            continue
        default, meta = _LEAVES[path]
        if isinstance(value, str) and not isinstance(default, str | type(None)):
            value = _env_value(value, default, meta.get("kind"))
        out[path] = (value, COMMAND_LINE)


# --------------------------------------------------------------------------- validation


def _coerce(value: object, default: object, meta: Mapping[str, Any], path: str, source: str) -> object:
    kind = meta.get("kind")
    where = f"{source}: {path}"
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, got {_kind(value)} {value!r}")
        return value
    if isinstance(default, float):
        # money: a finite amount >= 0 (0: no cap); YAML's .inf and .nan are neither
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1e9:
            raise ConfigError(f"{where} must be an amount >= 0 (0: no cap), got {value!r}")
        return float(value)
    if isinstance(default, int):
        least = int(meta.get("min", 1))
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            what = "a positive integer" if least == 1 else f"an integer >= {least}"
            raise ConfigError(f"{where} must be {what}, got {value!r}")
        return value
    if kind == "language":
        if not isinstance(value, str) or not _LANGUAGE_RE.fullmatch(value):
            raise ConfigError(f"{where} must be a language code such as 'en', 'es', 'pt-BR' or 'match', "
                              f"got {value!r}")
        return value
    if kind == "prices":
        return _prices(value, where)
    if isinstance(default, str) or (default is None and value is not None):
        if not isinstance(value, str) or not value.strip() or "\n" in value:
            raise ConfigError(f"{where} must be a non-empty one-line string, got {value!r}")
        return value
    if default is None:
        return None
    if kind == "argv":
        return _argv(value, where)
    if isinstance(value, str):
        value = [value]
    if kind == "text":
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise ConfigError(f"{where} must be a string or a list of non-empty strings, got {value!r}")
        return tuple(v.strip() for v in value)
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f"{where} must be a list of glob strings, got {value!r}")
    return tuple(value)


_MAX_PRICE = 1e6  # USD per million tokens; far above any model's, far below overflow


def _amount(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and 0 <= value < _MAX_PRICE


def _prices(value: object, where: str) -> tuple[ModelPrice, ...]:
    """`prices:`: a mapping of model ids to their four rates in USD per million tokens, each
    given, each a finite amount >= 0; any other key is an error naming it."""
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a mapping of model ids to prices, got {_kind(value)}")
    found: list[ModelPrice] = []
    for model, rates in value.items():
        if not isinstance(model, str) or not model.strip() or "\n" in model:
            raise ConfigError(f"{where}: {model!r} is not a model id")
        at = f"{where}.{model}"
        if not isinstance(rates, Mapping):
            raise ConfigError(f"{at} must be a mapping with {', '.join(PRICE_KEYS)}, got {_kind(rates)}")
        for key in rates:
            if key not in PRICE_KEYS:
                raise ConfigError(f"{at}: unknown key {key!r}; a price has {', '.join(PRICE_KEYS)}")
        for key in PRICE_KEYS:
            if key not in rates:
                raise ConfigError(f"{at}.{key} is missing (every price names {', '.join(PRICE_KEYS)})")
            if not _amount(rates[key]):
                raise ConfigError(f"{at}.{key} must be an amount in USD per million tokens >= 0, "
                                  f"got {rates[key]!r}")
        found.append(ModelPrice(model.strip(), *(float(rates[key]) for key in PRICE_KEYS)))
    return tuple(found)


def _argv(value: object, where: str) -> tuple[str, ...]:
    """A command: a string split like a POSIX shell would (quotes kept together, nothing
    expanded, never run by a shell) or an explicit argv list."""
    if isinstance(value, str):
        try:
            argv = shlex.split(value)
        except ValueError as exc:
            raise ConfigError(f"{where} is not a valid command line ({exc}): {value!r}") from exc
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        argv = list(value)
    else:
        raise ConfigError(f"{where} must be a command string or a list of arguments, got {value!r}")
    if not argv or not argv[0].strip():
        raise ConfigError(f"{where} must name a program to run, got {value!r}")
    return tuple(argv)


def _check_commit(settings: CommitSettings, where: str, leaves: Leaves) -> None:
    def source(key: str) -> str:
        return leaves.get(_join(where, key), (None, "default"))[1]

    email = settings.author_email
    if "@" not in email or any(c in email for c in "<> "):
        raise ConfigError(f"{source('author_email')}: {where}.author_email must be a plain address like "
                          f"bot@example.com, got {email!r}")
    if any(c in settings.author_name for c in "<>"):
        raise ConfigError(f"{source('author_name')}: {where}.author_name must not contain < or >")


def _check_model(settings: ModelConfig, where: str, leaves: Leaves) -> None:
    """The thinking budget against the API's rules, checked when the configuration is read, so
    a bad budget is a usage error naming its key, not a 400 from the API mid-run. The default, 0,
    is always valid, so a problem names where `thinking_tokens` was set."""
    problem = thinking_budget_problem(settings.thinking_tokens, settings.max_tokens)
    if problem:
        source = leaves.get(_join(where, "thinking_tokens"), (None, "default"))[1]
        raise ConfigError(f"{source}: {where}.{problem}")
    problem = thinking_mode_problem(settings.thinking, settings.thinking_tokens, settings.effort)
    if problem:
        key = problem.split(" ", 1)[0].rstrip(":")
        source = leaves.get(_join(where, key), (None, "default"))[1]
        raise ConfigError(f"{source}: {where}.{problem}")


_CHECKS: dict[str, Callable[[Any, str, Leaves], None]] = {"commit": _check_commit, "model": _check_model}


def _assemble(cls: type[T], where: str, leaves: Leaves) -> T:
    defaults = cls()
    values: dict[str, object] = {}
    for f in fields(cls):  # type: ignore[arg-type]
        if f.metadata.get("internal"):
            continue  # keeps its default
        default = getattr(defaults, f.name)
        path = _join(where, f.name)
        if is_dataclass(default):
            values[f.name] = _assemble(type(default), path, leaves)
        elif path in leaves:
            value, source = leaves[path]
            values[f.name] = _coerce(value, default, f.metadata, path, source)
    result = cls(**values)
    check = _CHECKS.get(where)
    if check is not None:
        check(result, where, leaves)
    return result


# --------------------------------------------------------------------------- entry points


def settings_from_layers(file_raw: object, env: Mapping[str, str] | None = None,
                         overrides: Mapping[str, object] | None = None) -> Settings:
    """Parsed YAML (a mapping, or None for an empty file), then env, then flags on top."""
    leaves: Leaves = {}
    _file_leaves(file_raw, Settings, "", leaves)
    _env_leaves(env or {}, leaves)
    _override_leaves(overrides or {}, leaves)
    return _assemble(Settings, "", leaves)


def settings_from_mapping(raw: object) -> Settings:
    """Settings from already-parsed YAML alone (a mapping, or None for an empty file)."""
    return settings_from_layers(raw)


def parse_yaml(text: str) -> object:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{CONFIG_FILE}: not valid YAML: {exc}") from exc


def parse_settings(text: str) -> Settings:
    return settings_from_mapping(parse_yaml(text))


def load_settings(repo_root: str | Path, env: Mapping[str, str] | None = None,
                  overrides: Mapping[str, object] | None = None) -> Settings:
    """Settings from `<repo_root>/.ci-agent.yml` (defaults when absent), then `CI_AGENT_*`
    variables of `env` (default: the process environment), then `overrides` from flags."""
    path = Path(repo_root) / CONFIG_FILE
    try:
        raw = parse_yaml(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raw = None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{CONFIG_FILE}: cannot read {path}: {exc}") from exc
    return settings_from_layers(raw, os.environ if env is None else env, overrides)
