"""`.ci-agent.yml` loading and validation: clear errors naming the key, exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_agent.config import (
    DEFAULT_DENY,
    SECRET_GLOBS,
    CommandSettings,
    CommitSettings,
    GateSettings,
    ModelConfig,
    PatchSettings,
    Settings,
)
from ci_agent.config.load import env_name, load_settings, parse_settings, settings_from_layers
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
        # the sections added later
        ("model:\n  max_turn: 3\n", "'model.max_turn' (did you mean 'max_turns'?)"),
        ("model:\n  name: ''\n", "model.name must be a non-empty one-line string"),
        ("budget:\n  max_attempts: 0\n", "budget.max_attempts must be a positive integer"),
        ("commands:\n  verify: \"make 'unterminated\"\n", "commands.verify is not a valid command line"),
        ("commands:\n  verify: ''\n", "commands.verify must name a program"),
        ("commands:\n  verify: {a: 1}\n", "commands.verify must be a command string or a list"),
        ("results: 3\n", "results must be a mapping"),
        ("context:\n  excerpt_lines: -1\n", "context.excerpt_lines must be an integer >= 0"),
        ("context:\n  max_bytes: 500\n", "context.max_bytes must be an integer >= 1000"),
        ("context:\n  exclude: [3]\n", "context.exclude must be a list of glob strings"),
        ("notes: [ok, '']\n", "notes must be a string or a list of non-empty strings"),
        ("language: english please\n", "language must be a language code"),
        ("languag: en\n", "'languag' (did you mean 'language'?)"),
    ],
)
def test_invalid_config_names_the_key(text: str, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_settings(text)
    assert needle in str(info.value)
    assert str(info.value).startswith(".ci-agent.yml: ")
    assert info.value.exit_code == ExitCode.USAGE


def test_safe_load_refuses_python_tags() -> None:
    with pytest.raises(ConfigError, match="not valid YAML"):
        parse_settings("patch: !!python/object/apply:os.system ['echo hi']\n")


# --------------------------------------------------------------------------- issue 4 sections


def test_new_section_defaults() -> None:
    s = Settings()
    assert s.model == ModelConfig(name=None, max_turns=8, max_tokens=8192, max_total_tokens=400_000,
                                  timeout_s=300)
    assert s.budget.max_attempts == 3
    assert s.commands == CommandSettings(build=(), test=(), verify=(), timeout_s=1800)
    assert s.results.globs == ()
    assert s.context.exclude == ()
    assert set(SECRET_GLOBS) <= set(s.context.exclude_globs)
    assert s.notes == ()
    assert s.language == "en"


def test_new_sections_from_file(tmp_path: Path) -> None:
    (tmp_path / ".ci-agent.yml").write_text(
        "model:\n"
        "  name: claude-opus-5\n"
        "  max_turns: 4\n"
        "  max_total_tokens: 100000\n"
        "budget:\n"
        "  max_attempts: 2\n"
        "commands:\n"
        "  build: dotnet build -c Release 'My App.sln'\n"
        "  test: [pytest, -q, tests/unit test.py]\n"
        "  verify: make check ARGS=\"-j 2\"\n"
        "  timeout_s: 600\n"
        "results: ['**/*.trx', 'junit/*.xml']\n"
        "context:\n"
        "  exclude: [vendor/**, '*.min.js']\n"
        "  excerpt_lines: 0\n"
        "  whole_file_bytes: 4096\n"
        "  max_bytes: 30000\n"
        "  base_ref: origin/main\n"
        "notes: |\n"
        "  CS1591 is noise; nullable warnings are real defects.\n"
        "language: es\n",
        encoding="utf-8",
    )
    s = load_settings(tmp_path, env={})
    assert s.model == ModelConfig("claude-opus-5", 4, 8192, 100_000, 300)
    assert s.budget.max_attempts == 2
    # shlex rules, never a shell: quotes group words, `ARGS="-j 2"` stays one argument.
    assert s.commands.build == ("dotnet", "build", "-c", "Release", "My App.sln")
    assert s.commands.test == ("pytest", "-q", "tests/unit test.py")
    assert s.commands.verify == ("make", "check", "ARGS=-j 2")
    assert s.commands.timeout_s == 600
    assert s.results.globs == ("**/*.trx", "junit/*.xml")
    assert s.context.exclude == ("vendor/**", "*.min.js")
    assert s.context.exclude_globs[-2:] == ("vendor/**", "*.min.js")
    assert (s.context.excerpt_lines, s.context.whole_file_bytes, s.context.max_bytes) == (0, 4096, 30000)
    assert s.context.base_ref == "origin/main"
    assert s.notes == ("CS1591 is noise; nullable warnings are real defects.",)
    assert s.language == "es"


def test_results_long_form_and_notes_list() -> None:
    s = parse_settings("results:\n  globs: TestResults/*.trx\nnotes: [a, b]\nlanguage: match\n")
    assert s.results.globs == ("TestResults/*.trx",)
    assert s.notes == ("a", "b")
    assert s.language == "match"


def test_env_overrides_file(tmp_path: Path) -> None:
    (tmp_path / ".ci-agent.yml").write_text("model:\n  name: from-file\nbudget:\n  max_attempts: 5\n")
    env = {
        "CI_AGENT_MODEL_NAME": "from-env",
        "CI_AGENT_PATCH_GATES_ALLOW_TEST_SKIPS": "yes",
        "CI_AGENT_COMMANDS_VERIFY": "pytest -q -k 'not slow'",
        "CI_AGENT_RESULTS_GLOBS": "a/*.trx, b/*.xml",
        "CI_AGENT_CONTEXT_EXCLUDE": "vendor/**\nthird_party/**",
        "CI_AGENT_NOTES": "first note\nsecond note",
        "CI_AGENT_LANGUAGE": "pt-BR",
        "CI_AGENT_BUDGET_MAX_ATTEMPTS": "",  # empty = unset (CI systems pass empty inputs)
        "CI_AGENT_ANTHROPIC_BASE_URL": "http://127.0.0.1:1",  # not a setting: left alone
        "CI_AGENT_SHARED": "/elsewhere",
    }
    s = load_settings(tmp_path, env=env)
    assert s.model.name == "from-env"
    assert s.budget.max_attempts == 5  # from the file: the empty variable did not count
    assert s.patch.gates.allow_test_skips is True
    assert s.commands.verify == ("pytest", "-q", "-k", "not slow")
    assert s.results.globs == ("a/*.trx", "b/*.xml")
    assert s.context.exclude == ("vendor/**", "third_party/**")
    assert s.notes == ("first note", "second note")
    assert s.language == "pt-BR"


def test_flags_beat_env_beat_file_beat_defaults(tmp_path: Path) -> None:
    (tmp_path / ".ci-agent.yml").write_text("budget:\n  max_attempts: 5\nmodel:\n  max_turns: 6\n")
    env = {"CI_AGENT_BUDGET_MAX_ATTEMPTS": "4", "CI_AGENT_MODEL_MAX_TURNS": "7"}
    flags: dict[str, object] = {"budget.max_attempts": 2, "model.name": None, "commands.verify": "make test"}
    s = load_settings(tmp_path, env=env, overrides=flags)
    assert s.budget.max_attempts == 2  # flag
    assert s.model.max_turns == 7  # env over file
    assert s.model.name is None  # a flag given as None was not given
    assert s.model.max_tokens == 8192  # default
    assert s.commands.verify == ("make", "test")
    assert load_settings(tmp_path, env=env).budget.max_attempts == 4
    assert load_settings(tmp_path, env={}).budget.max_attempts == 5


def test_env_none_reads_the_process_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI_AGENT_BUDGET_MAX_ATTEMPTS", "1")
    assert load_settings(tmp_path).budget.max_attempts == 1


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"CI_AGENT_BUDGET_MAX_ATTEMPTS": "three"},
         "environment variable CI_AGENT_BUDGET_MAX_ATTEMPTS: budget.max_attempts must be a positive integer, "
         "got 'three'"),
        ({"CI_AGENT_PATCH_ALLOW_RENAMES": "maybe"},
         "environment variable CI_AGENT_PATCH_ALLOW_RENAMES: patch.allow_renames must be true or false"),
        ({"CI_AGENT_COMMIT_AUTHOR_EMAIL": "nobody"},
         "environment variable CI_AGENT_COMMIT_AUTHOR_EMAIL: commit.author_email must be a plain address"),
        ({"CI_AGENT_MODEL_MAX_TURN": "3"},
         "environment: unknown key 'CI_AGENT_MODEL_MAX_TURN' (did you mean 'CI_AGENT_MODEL_MAX_TURNS'?)"),
    ],
)
def test_invalid_env_names_variable_and_key(tmp_path: Path, env: dict[str, str], needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, env=env)
    assert needle in str(info.value)
    assert info.value.exit_code == ExitCode.USAGE


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        ({"budget.max_attempts": 0}, "command line: budget.max_attempts must be a positive integer, got 0"),
        ({"budget.max_attempts": "x"}, "command line: budget.max_attempts must be a positive integer"),
        ({"budget.attempts": 2},
         "command line: unknown key 'budget.attempts' (did you mean 'budget.max_attempts'?)"),
        ({"commands.verify": "sh -c 'oops"}, "command line: commands.verify is not a valid command line"),
    ],
)
def test_invalid_flags_name_the_key(tmp_path: Path, flags: dict[str, object], needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, env={}, overrides=flags)
    assert needle in str(info.value)


def test_flag_strings_are_read_like_env_values(tmp_path: Path) -> None:
    s = load_settings(tmp_path, env={}, overrides={"budget.max_attempts": "2", "results.globs": ["x/*.trx"]})
    assert s.budget.max_attempts == 2
    assert s.results.globs == ("x/*.trx",)


def test_every_leaf_has_an_env_name() -> None:
    assert env_name("patch.gates.allow_empty_catch") == "CI_AGENT_PATCH_GATES_ALLOW_EMPTY_CATCH"
    assert env_name("language") == "CI_AGENT_LANGUAGE"


# --------------------------------------------------------------------------- issue 15: thinking


def test_thinking_is_off_by_default_and_set_by_file_or_environment() -> None:
    assert Settings().model.thinking_tokens == 0
    assert parse_settings("model: {max_tokens: 16000, thinking_tokens: 8000}\n").model.thinking_tokens == 8000
    from_env = settings_from_layers(None, {env_name("model.thinking_tokens"): "2048"})
    assert from_env.model.thinking_tokens == 2048 and env_name("model.thinking_tokens") == \
        "CI_AGENT_MODEL_THINKING_TOKENS"


@pytest.mark.parametrize(("text", "needle"), [
    ("model: {thinking_tokens: 512}\n",
     ".ci-agent.yml: model.thinking_tokens must be 0 (off) or at least 1024, got 512"),
    ("model: {max_tokens: 4096, thinking_tokens: 4096}\n",
     ".ci-agent.yml: model.thinking_tokens (4096) must be less than max_tokens (4096)"),
    ("model: {thinking_tokens: 8192}\n", "must be less than max_tokens (8192)"),  # the default
    ("model: {thinking_tokens: -1}\n", "model.thinking_tokens must be an integer >= 0"),
    ("model: {thinking_tokens: yes}\n", "model.thinking_tokens must be an integer >= 0"),
])
def test_a_thinking_budget_the_api_refuses_is_a_config_error(text: str, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_settings(text)
    assert needle in str(info.value) and info.value.exit_code == ExitCode.USAGE


@pytest.mark.parametrize(("text", "needle"), [
    ("model: {thinking: adaptive, thinking_tokens: 2048}\n",
     ".ci-agent.yml: model.thinking: adaptive lets the model choose its thinking budget; thinking_tokens "
     "must be 0 with it, got 2048"),
    ("model: {thinking: always}\n",
     ".ci-agent.yml: model.thinking must be one of off, adaptive, got 'always'"),
    ("model: {effort: extreme}\n",
     ".ci-agent.yml: model.effort must be one of low, medium, high, xhigh, max"),
])
def test_a_thinking_mode_the_api_refuses_is_a_config_error(text: str, needle: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_settings(text)
    assert needle in str(info.value) and info.value.exit_code == ExitCode.USAGE


def test_a_bad_thinking_budget_names_its_source() -> None:
    with pytest.raises(ConfigError, match=r"^environment variable CI_AGENT_MODEL_THINKING_TOKENS: "):
        settings_from_layers({"model": {"max_tokens": 2000}}, {"CI_AGENT_MODEL_THINKING_TOKENS": "3000"})


def test_the_history_section_is_small_by_default_and_can_be_turned_off() -> None:
    # issue 15: the history section (commit messages, ranked diff) defaults to a few KB, not 16 KB
    assert Settings().context.diff_bytes == 4000
    assert parse_settings("context:\n  diff_bytes: 0\n").context.diff_bytes == 0
    with pytest.raises(ConfigError, match="diff_bytes"):
        parse_settings("context:\n  diff_bytes: -1\n")
