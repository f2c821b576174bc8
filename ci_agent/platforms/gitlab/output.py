"""What a GitLab CI job of ci-agent leaves besides its exit code: the dotenv report
(`artifacts:reports:dotenv`), the Markdown summary artifact, and the lines of its trace.

Files are written next to the checkout, never through a symlink; the trace gets plain text only
(no control character: an ANSI sequence or a section marker in untrusted text would otherwise
reach the log as markup)."""

from __future__ import annotations

import errno
import os
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

from ci_agent.engine.dry_run import request_text, size_sentence
from ci_agent.engine.runner import Result
from ci_agent.platforms.gitlab.env import OUTPUT_ENV_FILE, SUMMARY_FILE
from ci_agent.redact import sanitize_untrusted

SUMMARY_BYTES = 1024 * 1024
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


def outputs(result: Result) -> dict[str, str]:
    """The dotenv variables. `CI_AGENT_VERDICT` is only the kind of a verdict before the model:
    GitLab refuses a dotenv report over 5 KB, and a verdict's evidence could fill it; the whole
    verdict (JSON) is in the summary artifact."""
    pr = result.pr
    return {"CI_AGENT_OUTCOME": result.outcome,
            "CI_AGENT_ATTEMPT": str(result.attempt) if result.attempt else "",
            "CI_AGENT_BRANCH": result.branch, "CI_AGENT_MR_IID": str(pr.number) if pr else "",
            "CI_AGENT_MR_URL": pr.url if pr else "", "CI_AGENT_TOKENS": str(result.tokens),
            "CI_AGENT_VERDICT": result.verdict.kind if result.verdict else "",
            "CI_AGENT_COST_USD": f"{result.cost_usd:.6f}"}


def dotenv_text(values: Mapping[str, str]) -> str:
    """`artifacts:reports:dotenv`: one `KEY=value` per line; GitLab takes no multi-line values,
    so anything that could break a line is dropped from the value."""
    lines = []
    for key, value in values.items():
        clean = "".join(ch for ch in value if ch.isprintable())
        lines.append(f"{key}={clean}\n")
    return "".join(lines)


def write_job_file(path: Path, text: str) -> str | None:
    """Write one of the files the job leaves in the checkout; the sentence saying why it could not
    be written, or None. Never through a symlink: the checkout is the branch's content, and a
    committed `ci-agent.env -> ~/.profile` must not make us write elsewhere."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        why = "it is a symbolic link" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
        return f"cannot write {path.name}: {why}"
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return None


def write_dotenv(path: Path, values: Mapping[str, str]) -> str | None:
    return write_job_file(path, dotenv_text(values))


def leave_job_files(workdir: Path, values: Mapping[str, str], summary_text: str) -> list[str]:
    """The dotenv report and the summary artifact. A file that cannot be written is a sentence
    for the log, never the job's outcome: the real outcome or error must still be what it says."""
    problems = [write_dotenv(workdir / OUTPUT_ENV_FILE, values),
                write_job_file(workdir / SUMMARY_FILE, summary_text)]
    return [p for p in problems if p]


def bounded(text: str) -> str:
    """The summary artifact cut at 1 MiB, with a note saying so."""
    data = text.encode("utf-8")
    if len(data) <= SUMMARY_BYTES:
        return text
    note = "\n\n(summary cut at 1 MiB)\n"
    return data[:SUMMARY_BYTES - len(note)].decode("utf-8", "ignore") + note


def print_request(request: Mapping[str, Any], redact: Callable[[str], str], out: TextIO) -> None:
    """A dry run's request in the trace, as data: no control character (ANSI, a section marker)."""
    print(_CONTROL.sub(" ", redact(request_text(request))), file=out)
    print(_CONTROL.sub(" ", redact(f"ci-agent: dry run: {size_sentence(request)}; nothing was sent")),
          file=out, flush=True)


def print_outcome(result: Result, redact: Callable[[str], str], out: TextIO) -> None:
    """The job's last line: the outcome and its sentence, on one line."""
    word = "skipped" if result.outcome == "skipped" else result.outcome
    print(" ".join(sanitize_untrusted(redact(f"ci-agent: {word}: {result.message}")).split()), file=out,
          flush=True)


def print_also(problems: list[str]) -> None:
    for problem in problems:
        print(f"ci-agent: also: {sanitize_untrusted(problem)}", file=sys.stderr, flush=True)
