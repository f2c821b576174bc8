"""Fuzz targets for what ci-agent reads from CI: every log and XML parser (through the registry),
the envelope, and the patch pipeline against a real repository."""

from __future__ import annotations

import contextlib
import io
import tempfile
from collections.abc import Iterator
from pathlib import Path

from hypothesis import strategies as st

from ci_agent.config import PatchSettings
from ci_agent.envelope import HEAD_BYTES, MAX_LINE_CHARS, EnvelopeInfo, decode_head, iter_log_lines
from ci_agent.parsers import LOG_PARSERS, XML_PARSERS, parse_stream
from ci_agent.patch.engine import apply_patch, review
from ci_agent.report import ParseResult
from tests.hardening.fuzz import corpus
from tests.hardening.fuzz.harness import Runner, Target, Violation, stateless
from tests.hardening.fuzz.mutate import any_input, mutated

SOURCE = "fuzz-input"


def check_result(result: ParseResult) -> None:
    """The contract every parser keeps for any input: a ParseResult of well-typed values."""
    if not isinstance(result, ParseResult):
        raise Violation(f"parse returned {type(result).__name__}, not a ParseResult")
    counts = result.counts
    if counts is not None and min(counts.total, counts.passed, counts.failed, counts.skipped) < 0:
        raise Violation(f"negative test counts {counts}")
    for error in result.run_errors:
        if error.source != SOURCE or not isinstance(error.message, str) or not error.message:
            raise Violation(f"run error without our source or a message: {error!r:.120}")
    for diagnostic in result.diagnostics:
        if not isinstance(diagnostic.message, str):
            raise Violation("a diagnostic message that is not text")
    for case in result.failures:
        if not isinstance(case.name, str):
            raise Violation("a failure whose name is not text")


def _parser_runner(forced: str | None) -> Runner:
    def run(data: bytes) -> None:
        check_result(parse_stream(io.BytesIO(data), SOURCE, forced))
    return run


def _log_target(name: str | None) -> Target:
    label = name or "sniffed"
    return Target(f"log.{label}", stateless(_parser_runner(name)), lambda: any_input(corpus.log_seeds()),
                  corpus.log_seeds, what=f"parse_stream(forced={name!r})")


def _all_seeds() -> tuple[bytes, ...]:
    return corpus.log_seeds() + tuple(s for group in corpus.xml_seeds().values() for s in group)


def _xml_target(name: str) -> Target:
    roots = XML_PARSERS[name].root_names

    def seeds() -> tuple[bytes, ...]:
        return corpus.xml_seeds_for(roots)
    return Target(f"xml.{name}", stateless(_parser_runner(name)), lambda: any_input(seeds()), seeds,
                  what=f"parse_stream(forced={name!r})")


def run_envelope(data: bytes) -> None:
    info = EnvelopeInfo()
    for line in iter_log_lines(io.BytesIO(data), info):
        if "\n" in line or len(line) > MAX_LINE_CHARS:
            raise Violation(f"envelope produced a line of {len(line)} chars / with a newline")
    for line in decode_head(data[:HEAD_BYTES]):
        if "\n" in line:
            raise Violation("decode_head produced a line with a newline")


# --- the patch pipeline -----------------------------------------------------------------------------

CHECK_TREE_EVERY = 20


@contextlib.contextmanager
def patch_session() -> Iterator[Runner]:
    with tempfile.TemporaryDirectory(prefix="ci-agent-fuzz-") as tmp:
        repo = corpus.make_repo(Path(tmp) / "repo")
        before = corpus.tree_state(repo)
        settings = PatchSettings()
        calls = [0]

        def run(data: bytes) -> None:
            verdict = review(data.decode("utf-8", "surrogateescape"), repo, settings)
            if verdict.ok == bool(verdict.rejections):
                raise Violation(f"verdict ok={verdict.ok} with {len(verdict.rejections)} rejection(s)")
            if verdict.ok and not verdict.patch_text:
                raise Violation("an approved patch without the text to apply")
            if not isinstance(verdict.messages(), str):
                raise Violation("rejection messages are not text")
            calls[0] += 1
            if calls[0] % CHECK_TREE_EVERY == 0 and corpus.tree_state(repo) != before:
                raise Violation("review changed the repository (HEAD, index or work tree)")
        yield run
        if corpus.tree_state(repo) != before:
            raise Violation("review changed the repository (HEAD, index or work tree)")


@contextlib.contextmanager
def apply_session() -> Iterator[Runner]:
    """apply_patch is all or nothing: a rejected patch leaves HEAD, index and work tree as they were;
    an applied one is undone (reset, clean) before the next input."""
    with tempfile.TemporaryDirectory(prefix="ci-agent-fuzz-") as tmp:
        repo = corpus.make_repo(Path(tmp) / "repo")
        before = corpus.tree_state(repo)
        settings = PatchSettings()

        def run(data: bytes) -> None:
            try:
                verdict = apply_patch(data.decode("utf-8", "surrogateescape"), repo, settings)
            finally:
                changed = corpus.tree_state(repo) != before
                corpus.reset(repo)
            if not verdict.ok and changed:
                raise Violation("a rejected patch changed the repository")
            if verdict.ok and not changed:
                raise Violation("an applied patch changed nothing")
        yield run


_DIFFS: list[tuple[bytes, ...]] = []


def diff_seeds() -> tuple[bytes, ...]:
    if not _DIFFS:
        with tempfile.TemporaryDirectory(prefix="ci-agent-fuzz-seed-") as tmp:
            repo = corpus.make_repo(Path(tmp) / "repo")
            # Fenced as a model would answer, and bare.
            diffs = corpus.real_diffs(repo)
            _DIFFS.append(tuple(d.encode() for d in diffs)
                          + tuple(f"Here is the fix:\n```diff\n{d}```\n".encode() for d in diffs[:2]))
    return _DIFFS[0]


def _patch_strategy() -> st.SearchStrategy[bytes]:
    seeds = diff_seeds()
    return st.one_of(mutated(seeds, max_edits=2), mutated(seeds), st.binary(max_size=2048))


def input_targets() -> list[Target]:
    targets = [_log_target(name) for name in LOG_PARSERS] + [_log_target(None)]
    targets += [_xml_target(name) for name in XML_PARSERS]
    targets.append(Target("envelope", stateless(run_envelope), lambda: any_input(_all_seeds()), _all_seeds,
                          what="iter_log_lines, decode_head"))
    targets.append(Target("patch.review", patch_session, _patch_strategy, diff_seeds,
                          what="patch.engine.review against a real temp repository"))
    targets.append(Target("patch.apply", apply_session, _patch_strategy, diff_seeds,
                          what="patch.engine.apply_patch (all or nothing) against a real temp repository"))
    return targets
