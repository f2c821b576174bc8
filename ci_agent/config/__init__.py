"""What can be set in `.ci-agent.yml`: the sections, their defaults and what each leaf means.

Each top-level section is one frozen dataclass (a field whose default is a dataclass is a
section; anything else is a leaf), so a new section is one dataclass and one `Settings` field.
Field metadata `kind` says how a leaf is read when its default's type does not: `argv` (a
command: a string split with `shlex.split`, never a shell, or a list), `text` (free text lines:
team notes), `language` (`en`, `es`, `pt-BR`, ... or `match`); `min` is an integer's least value;
`internal` marks a field the program sets, never a file or variable. Reading and validating the
layers is `ci_agent.config.load`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CONFIG_FILE = ".ci-agent.yml"
# Repository guidance for coding agents, read from the trusted side into the system prompt
# (`ci_agent.engine.guidance`); a branch's own copies are never shown to the model.
GUIDANCE_FILES = ("AGENTS.md", "CLAUDE.md", ".github/copilot-instructions.md", ".gitlab/duo/chat-rules.md")

DEFAULT_DENY: tuple[str, ...] = (
    # what CI runs: GitHub (workflows, composite actions, dependabot), GitLab (the pipeline and
    # the files it includes, which the patch engine adds from the pipeline file itself)
    ".github/**",
    ".gitlab-ci.yml",
    ".gitlab/**",
    # who reviews, and how git treats files (filters, diff drivers, submodule URLs)
    "CODEOWNERS",
    ".gitmodules",
    ".gitattributes",
    # git hooks: they run on a developer's (or the CI job's) commit and push
    "**/.husky/**",
    "**/.githooks/**",
    "**/.git-hooks/**",
    "**/.lefthook/**",
    "lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yml",
    ".lefthook.yaml",
    "lefthook-local.yml",
    "lefthook-local.yaml",
    ".pre-commit-config.yaml",
    ".pre-commit-config.yml",
    # where packages come from: one line points a restore at an attacker's feed
    "nuget.config",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    "pip.conf",
    "pip.ini",
    ".pypirc",
    # ci-agent's own policy, and secrets
    ".ci-agent.yml",
    ".env*",
    "*.pem",
    "*.key",
    "**/secrets/**",
)
# Never shown to the model, whatever the config says: files that hold secrets by convention.
# Globs match like the patch deny list (`ci_agent.patch.policy.glob_match`): no `/` = any depth.
SECRET_GLOBS: tuple[str, ...] = (".env*", "*.pem", "*.key", "**/secrets/**")


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
    # Where this run's configuration was read from when it is not `.ci-agent.yml` (the action's
    # `config` input): denied like `.ci-agent.yml`, whatever `deny` says. Not a file setting.
    config_paths: tuple[str, ...] = field(default=(), metadata={"internal": True})

    @property
    def deny_globs(self) -> tuple[str, ...]:
        return (DEFAULT_DENY if self.use_default_deny else ()) + self.deny


@dataclass(frozen=True, slots=True)
class CommitSettings:
    author_name: str = "ci-agent"
    author_email: str = "ci-agent@users.noreply.github.com"
    no_verify: bool = False


MIN_THINKING_TOKENS = 1024  # the Messages API's least thinking `budget_tokens`


def thinking_budget_problem(thinking_tokens: int, max_tokens: int) -> str:
    """Why the Messages API would refuse this thinking budget, or "" (0, thinking off, is fine)."""
    if thinking_tokens == 0:
        return ""
    if thinking_tokens < MIN_THINKING_TOKENS:
        return f"thinking_tokens must be 0 (off) or at least {MIN_THINKING_TOKENS}, got {thinking_tokens}"
    if thinking_tokens >= max_tokens:
        return (f"thinking_tokens ({thinking_tokens}) must be less than max_tokens ({max_tokens}): "
                "thinking is part of each response's output")
    return ""


THINKING_MODES = ("off", "adaptive")
EFFORTS = ("", "low", "medium", "high", "xhigh", "max")  # "": the model's default (the API's `high`)


def thinking_mode_problem(thinking: str, thinking_tokens: int, effort: str) -> str:
    """Why `thinking` / `effort` are not a request the Messages API takes, or "". Adaptive
    thinking (the model decides how much to think; the only mode of the newest models) and a
    fixed `thinking_tokens` budget (the older models' only mode) exclude each other."""
    if thinking not in THINKING_MODES:
        return f"thinking must be one of {', '.join(THINKING_MODES)}, got {thinking!r}"
    if thinking == "adaptive" and thinking_tokens:
        return ("thinking: adaptive lets the model choose its thinking budget; "
                f"thinking_tokens must be 0 with it, got {thinking_tokens}")
    if effort not in EFFORTS:
        return f"effort must be one of {', '.join(e for e in EFFORTS if e)} (or unset), got {effort!r}"
    return ""


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """`model:`. `name` None means the client's default (a current Sonnet from the SDK's list):
    the SDK may only be imported by `ci_agent.llm.anthropic_client`, so the default lives there.
    `thinking_tokens` turns on extended thinking with that budget per response (0: off);
    `thinking: adaptive` turns on adaptive thinking instead, and `effort` is the API's
    `output_config.effort`; the loader checks them (`thinking_budget_problem`,
    `thinking_mode_problem`)."""

    name: str | None = None
    max_turns: int = 8
    max_tokens: int = 8192
    max_total_tokens: int = 400_000
    timeout_s: int = 300
    thinking_tokens: int = field(default=0, metadata={"min": 0})
    thinking: str = "off"
    effort: str = ""


@dataclass(frozen=True, slots=True)
class BudgetSettings:
    """`budget:`: consecutive failed attempts per fix branch, and money caps in US dollars (0: no
    cap). Each cap stops before the model call that could exceed it (issue 16): per attempt (the
    fixer's and the reviewer's calls of one attempt), per fix branch (every attempt on it), and
    per repository per UTC day."""

    max_attempts: int = 3
    max_cost_per_attempt_usd: float = 2.0
    max_cost_per_branch_usd: float = 10.0
    max_cost_per_day_usd: float = 50.0


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """One entry of `prices:` (issue 16): a model's rates in US dollars per million tokens, over
    the built-in table of `ci_agent.llm.pricing`. `model` is matched like the table's keys (a
    dated id continues its alias)."""

    model: str
    input: float
    cache_write: float  # 5-minute cache writes
    cache_read: float
    output: float


PRICE_KEYS = ("input", "cache_write", "cache_read", "output")


@dataclass(frozen=True, slots=True)
class TriageSettings:
    """`triage:`: verdicts made by code before any model call (issue 16). `flaky`: the failed
    tests are run once more (the forge re-runs the failed jobs in CI, the test command filtered to
    them locally); a failure that passes then is flaky, not patched. `pre_existing`: a failure the
    default branch's latest run shows too is not this change's. `infrastructure`: feed, network,
    disk, memory, cancelled or lost jobs get no model call. `quarantine_after`: flaky verdicts on
    one test before it is named a quarantine candidate. `rerun_timeout_s`: how long a re-run may
    take before its verdict is left to the next run."""

    flaky: bool = True
    pre_existing: bool = True
    infrastructure: bool = True
    quarantine_after: int = 2
    rerun_timeout_s: int = 1800


@dataclass(frozen=True, slots=True)
class ReviewSettings:
    """`review:`: the adversarial reviewer (issue 16), a separate model call that sees the failure
    report, the patch and the excerpts it touches, never the fixer's reasoning. `model` None: the
    fixer's model. `max_rounds`: reviews per attempt (a "revise" sends the critical issues back
    to the fixer until this many reviews were made)."""

    enabled: bool = True
    model: str | None = None
    max_rounds: int = 2


@dataclass(frozen=True, slots=True)
class CommandSettings:
    """Build/test/verify commands as argv tuples (empty: not configured)."""

    build: tuple[str, ...] = field(default=(), metadata={"kind": "argv"})
    test: tuple[str, ...] = field(default=(), metadata={"kind": "argv"})
    verify: tuple[str, ...] = field(default=(), metadata={"kind": "argv"})
    timeout_s: int = 1800


@dataclass(frozen=True, slots=True)
class ResultsSettings:
    """Test-result globs (`results: [...]` is shorthand for `results: {globs: [...]}`)."""

    globs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GuidanceFile:
    """A repository guidance file (`AGENTS.md`, `CLAUDE.md`, ...) as ci-agent read it from the
    trusted side (`ci_agent.engine.guidance`): its text within the byte budget, as read (not yet
    redacted), and what was left out."""

    path: str
    text: str
    size: int  # bytes of the whole file
    note: str = ""  # what was cut or skipped, in words ("" when shown whole)


@dataclass(frozen=True, slots=True)
class ContextSettings:
    """What the model is shown besides the report (see `ci_agent.context`)."""

    exclude: tuple[str, ...] = ()
    excerpt_lines: int = field(default=12, metadata={"min": 0})
    whole_file_bytes: int = field(default=8192, metadata={"min": 0})
    max_bytes: int = field(default=60_000, metadata={"min": 1000})
    # the history section (commit messages, changed files, diff); 0: none (`context.history`)
    diff_bytes: int = field(default=4000, metadata={"min": 0})
    base_ref: str | None = None
    # AGENTS.md, CLAUDE.md, .github/copilot-instructions.md and .gitlab/duo/chat-rules.md of the
    # trusted side (the default branch in CI) in the cached system prompt
    repository_guidance: bool = True
    # what was read of them; set by the program (`ci_agent.engine.guidance`), never by a file
    guidance: tuple[GuidanceFile, ...] = field(default=(), metadata={"internal": True})

    @property
    def exclude_globs(self) -> tuple[str, ...]:
        return SECRET_GLOBS + self.exclude


@dataclass(frozen=True, slots=True)
class Settings:
    patch: PatchSettings = field(default_factory=PatchSettings)
    commit: CommitSettings = field(default_factory=CommitSettings)
    model: ModelConfig = field(default_factory=ModelConfig)
    budget: BudgetSettings = field(default_factory=BudgetSettings)
    commands: CommandSettings = field(default_factory=CommandSettings)
    results: ResultsSettings = field(default_factory=ResultsSettings)
    context: ContextSettings = field(default_factory=ContextSettings)
    triage: TriageSettings = field(default_factory=TriageSettings)
    review: ReviewSettings = field(default_factory=ReviewSettings)
    # `prices: {model id: {input, cache_write, cache_read, output}}`, USD per million tokens
    prices: tuple[ModelPrice, ...] = field(default=(), metadata={"kind": "prices"})
    notes: tuple[str, ...] = field(default=(), metadata={"kind": "text"})
    language: str = field(default="en", metadata={"kind": "language"})
