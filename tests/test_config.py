"""`.ci-agent.yml` loading and validation: clear errors naming the key, exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_agent.config import (
    DEFAULT_DENY,
    CommitSettings,
    GateSettings,
    PatchSettings,
    Settings,
    load_settings,
    parse_settings,
)
from ci_agent.errors import ConfigError, ExitCode


def test_no_file_gives_defaults(tmp_path: Path) -> None:
    assert load_settings(tmp_path) == Settings()
    assert Settings().patch.max_files == 10
    assert Settings().patch.max_changed_lines == 200
    assert Settings().patch.deny_globs == DEFAULT_DENY
    assert not Settings().commit.no_verify


def test_empty_file_gives_defaults() -> None:
    assert parse_settings("") == Settings()
    assert parse_settings("# only a comment\n") == Settings()


def test_full_file(tmp_path: Path) -> None:
    (tmp_path / ".ci-agent.yml").write_text(
        "patch:\n"
        "  max_files: 3\n"
        "  max_changed_lines: 50\n"
        "  allow: [src/**, tests/**]\n"
        "  deny: docs/**\n"
        "  allow_renames: true\n"
        "  allow_deletions: true\n"
        "  gates:\n"
        "    allow_test_skips: true\n"
        "commit:\n"
        "  author_name: Build Bot\n"
        "  author_email: bot@example.com\n"
        "  no_verify: true\n"
    )
    settings = load_settings(tmp_path)
    assert settings.patch == PatchSettings(
        max_files=3, max_changed_lines=50, allow=("src/**", "tests/**"), deny=("docs/**",),
        allow_renames=True, allow_deletions=True, gates=GateSettings(allow_test_skips=True),
    )
    assert settings.patch.deny_globs == (*DEFAULT_DENY, "docs/**")
    assert settings.commit == CommitSettings("Build Bot", "bot@example.com", True)


def test_settings_are_frozen() -> None:
    with pytest.raises(AttributeError):
        Settings().patch.max_files = 99  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("patch:\n  max_file: 3\n", "'patch.max_file' (did you mean 'max_files'?)"),
        ("patchh: {}\n", "'patchh' (did you mean 'patch'?)"),
        ("patch:\n  gates:\n    allow_test_skip: true\n", "'patch.gates.allow_test_skip'"),
        ("patch:\n  max_files: ten\n", "patch.max_files must be a positive integer"),
        ("patch:\n  max_files: 0\n", "patch.max_files must be a positive integer"),
        ("patch:\n  max_files: true\n", "patch.max_files must be a positive integer"),
        ("patch:\n  allow_renames: yes please\n", "patch.allow_renames must be true or false"),
        ("patch:\n  deny: [1, 2]\n", "patch.deny must be a list of glob strings"),
        ("patch: [1]\n", "patch must be a mapping"),
        ("- a\n- b\n", "the file must be a mapping"),
        ("commit:\n  author_email: not-an-address\n", "commit.author_email"),
        ("commit:\n  author_name: 'Eve <eve@x>'\n", "commit.author_name"),
        ("commit:\n  author_name: \"a\\nb\"\n", "commit.author_name must be a non-empty one-line string"),
        ("patch: {max_files: [\n", "not valid YAML"),
        ("1: 2\n", "must be a string"),
    ],
)
def test_invalid_config_names_the_key(text: str, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_settings(text)
    assert needle in str(info.value)
    assert ".ci-agent.yml" in str(info.value)
    assert info.value.exit_code == ExitCode.USAGE


def test_safe_load_refuses_python_tags() -> None:
    with pytest.raises(ConfigError, match="not valid YAML"):
        parse_settings("patch: !!python/object/apply:os.system ['echo hi']\n")
