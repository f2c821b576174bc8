"""Gates against silenced diagnostics: a warning or error hidden instead of fixed, and
warnings-as-errors or analyzers turned down.

All of these are gates, not flags, the line-scoped ones (`# noqa`, `# type: ignore`,
`#pragma warning disable`) included: when the red build is a diagnostic, silencing exactly that
diagnostic is the fake fix, and a reviewer skimming a green PR does not see it. A project that
accepts them opts in with `patch.gates.allow_warning_suppression` / `allow_strictness_changes`.
"""

from __future__ import annotations

import re

from ci_agent.patch import lines
from ci_agent.patch.diff import FilePatch, Rejection
from ci_agent.patch.lines import Line

_SUPPRESSION = re.compile(
    r"#\s*pragma\s+warning\s+disable|#\s*pragma\s+warning\s*\(\s*disable|<\s*NoWarn\s*>|\bNoWarn\s*=|"
    r"[-/]nowarn:|\[\s*(assembly\s*:\s*|module\s*:\s*)?(System\.Diagnostics\.CodeAnalysis\.)?"
    r"(SuppressMessage|UnconditionalSuppressMessage)|"
    r"#\s*noqa\b|#\s*type:\s*ignore|#\s*(pyright|mypy|ruff|flake8|pylint)\s*:\s*(ignore|noqa|disable)|"
    r"eslint-disable|@ts-(ignore|nocheck|expect-error)|#!?\[\s*allow\s*\(|//\s*nolint\b|"
    r"@SuppressWarnings\b|#\s*pylint:\s*disable|"
    r"\bdotnet_(analyzer_)?diagnostic\.[\w.-]+\.severity\s*=\s*(none|silent|suggestion|default)\b|"
    r"\bgenerated_code\s*=\s*true\b|"
    r"^\s*(extend-|per-file-)?ignore(s)?\s*=|^\s*(ignore_errors|ignore_missing_imports)\s*=\s*(true|1)|"
    r"^\s*(disable_error_code|disable)\s*=|\bfilterwarnings\b.*\bignore\b|^\s*[\"']?ignore:",
    re.I,
)
_CONFIG_ONLY = re.compile(r"^\s*(extend-|per-file-)?ignores?\s*=|^\s*(ignore_errors|ignore_missing_imports)"
                          r"|^\s*(disable_error_code|disable)\s*=|^\s*[\"']?ignore:", re.I)
_LINT_CONFIG = re.compile(r"(^|/)(pyproject\.toml|setup\.cfg|tox\.ini|\.flake8|\.?ruff\.toml|mypy\.ini|"
                          r"\.mypy\.ini|\.pylintrc|pylintrc|pytest\.ini)$", re.I)
_STRICTNESS_OFF = re.compile(
    r"<\s*(MSBuild|CodeAnalysis)?TreatWarningsAsErrors\b[^>]*>\s*(?!true\s*<)|"  # false, $(X), split
    r"<\s*(MSBuild|CodeAnalysis)?TreatWarningsAsErrors\b[^>]*\bCondition\b|"  # only sometimes
    r"<\s*(MSBuild)?WarningsNotAsErrors\b|\bWarningsNotAsErrors\s*=|[-/]warnaserror-|"
    r"<\s*Nullable\s*>\s*(disable|annotations)|#\s*nullable\s+(disable|restore)|<\s*WarningLevel\s*>\s*[0-3]\b|"
    r"<\s*EnableNETAnalyzers\s*>\s*false|<\s*RunAnalyzers\w*\s*>\s*false|<\s*AnalysisLevel\s*>\s*none|"
    r"<\s*AnalysisMode\s*>\s*None|<\s*EnforceCodeStyleInBuild\s*>\s*false|"
    r"\bTreatWarningsAsErrors\s*=\s*[\"']?(?!true)",
    re.I,
)
_STRICTNESS_ON = re.compile(
    r"<\s*TreatWarningsAsErrors\s*>\s*true|<\s*Nullable\s*>\s*enable|<\s*WarningsAsErrors\s*>|"
    r"#\s*nullable\s+enable|\bseverity\s*=\s*error\b|<\s*EnforceCodeStyleInBuild\s*>\s*true|"
    r"^\s*strict\s*=\s*true|^\s*warn_unused_ignores\s*=\s*true",
    re.I,
)


def _suppressions(fp: FilePatch) -> Line | None:
    lint_config = bool(_LINT_CONFIG.search(fp.path))
    for line in lines.added(fp):
        match = _SUPPRESSION.search(line.text)
        if match and (lint_config or not _CONFIG_ONLY.match(match[0])):
            return line
    return None


def suppression_rejections(fp: FilePatch) -> list[Rejection]:
    hit = _suppressions(fp)
    if hit is None:
        return []
    return [Rejection("gate.warning_suppressed", fp.path, lines.message(
        fp, hit, "the patch suppresses a warning or error", "Fix the code the diagnostic is about "
        "instead of silencing it."))]


def strictness_rejections(fp: FilePatch) -> list[Rejection]:
    """Warnings-as-errors, nullable checks or analyzers turned off, made conditional, or
    removed; also when the setting is written over several lines."""
    added = lines.added(fp)
    hit = lines.first(added, _STRICTNESS_OFF)
    if hit is None:
        hit = next((b for b in lines.blocks(fp) if _STRICTNESS_OFF.search(" ".join(b.text.split()))), None)
    on_removed = [r for r in lines.removed(fp) if _STRICTNESS_ON.search(r.text)]
    if hit is None and len(on_removed) > sum(1 for a in added if _STRICTNESS_ON.search(a.text)):
        hit = on_removed[0]
    if hit is None:
        return []
    return [Rejection("gate.strictness_lowered", fp.path, lines.message(
        fp, hit, "the patch lowers the compiler's or analyzers' strictness", "Keep "
        "TreatWarningsAsErrors (unconditional, literally `true`), nullable checks and analyzers as "
        "they are, and fix the code they report."))]
