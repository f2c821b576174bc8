"""Write a large TRX file and a large JUnit file built from REAL result files (benchmark input).

TRX: the 804 `<UnitTestResult>` elements of `enricomi/trx/nunit/FluentValidation.Tests.trx`
(xUnit under VSTest) are replicated R times with fresh, deterministic executionId/testId values
and a per-replica namespace (`FluentValidation.Tests` -> `FluentValidation.Tests.R00042`), with
their `UnitTest` definitions and `TestEntry` rows. FluentValidation has no failure, so a seeded
fraction of slots (default 1%) is filled instead with one of the real Failed results (with its
real ErrorInfo and its real definition) of `dotnet-trx.trx`, `NUnit-netcoreapp3.1-sample.trx` and
`xUnit-netcoreapp3.1-sample.trx`. The layout is VSTest's: Times, TestSettings, Results,
TestDefinitions, TestEntries, TestLists, ResultSummary/Counters (recomputed).

JUnit: the 176 `<testsuite>` elements of dorny's `external/java/pulsar-test-report.xml` (Apache
Pulsar, 808 tests, 1 failure, 14 skipped) are replicated with a per-replica package
(`org.apache.pulsar.` -> `org.apache.pulsar.r00042.`); outcomes are the file's own (0.12% failing).

Everything is streamed to disk (the generator never holds the output) and deterministic for a
seed. Usage: python bench/gen_large_trx.py [--size-mb 100] [--out bench/out] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(os.environ.get("CI_AGENT_SHARED", REPO_ROOT.parent / "shared")).resolve() / "fixtures"
TRX_NS = "http://microsoft.com/schemas/VisualStudio/TeamTest/2010"
_NS_DECL = f' xmlns="{TRX_NS}"'
PASSING_TRX = FIXTURES / "enricomi/trx/nunit/FluentValidation.Tests.trx"
FAILING_TRX = (
    FIXTURES / "enricomi/trx/xunit/dotnet-trx.trx",
    FIXTURES / "enricomi/trx/nunit/NUnit-netcoreapp3.1-sample.trx",
    FIXTURES / "enricomi/trx/xunit/xUnit-netcoreapp3.1-sample.trx",
)
JUNIT_SOURCE = FIXTURES / "dorny/fixtures/external/java/pulsar-test-report.xml"
_ID_NAMESPACE = uuid.UUID("6f1c1f5e-8d0e-4d55-9b35-2b7a4c0e9a11")


def _q(tag: str) -> str:
    return f"{{{TRX_NS}}}{tag}"


def _xml(el: etree._Element) -> str:
    """An element as text without the repeated default-namespace declaration."""
    return etree.tostring(el, encoding="unicode").replace(_NS_DECL, "").rstrip() + "\n"


@dataclass(frozen=True)
class TrxTemplate:
    """One real result with its definition; ids are placeholders to substitute per copy."""

    result: str
    definition: str
    entry: str
    test_id: str
    execution_id: str
    outcome: str
    name_prefix: str | None  # namespace made unique per replica (None: display names only)


def _templates(path: Path, only_failed: bool) -> list[TrxTemplate]:
    root = etree.parse(str(path), etree.XMLParser(huge_tree=True)).getroot()
    defs = {ut.get("id"): ut for ut in root.iter(_q("UnitTest"))}
    entries = {e.get("executionId"): e for e in root.iter(_q("TestEntry"))}
    out: list[TrxTemplate] = []
    for res in root.iter(_q("UnitTestResult")):
        outcome = res.get("outcome", "")
        if only_failed and outcome != "Failed":
            continue
        test_id, exec_id = res.get("testId", ""), res.get("executionId", "")
        definition, entry = defs[test_id], entries.get(exec_id)
        method = definition.find(_q("TestMethod"))
        class_name = method.get("className", "") if method is not None else ""
        prefix = class_name.split(",")[0].rsplit(".", 1)[0] or None
        entry_xml = _xml(entry) if entry is not None else (
            f'<TestEntry testId="{test_id}" executionId="{exec_id}" '
            f'testListId="{res.get("testListId")}" />\n'
        )
        out.append(TrxTemplate(_xml(res), _xml(definition), entry_xml, test_id, exec_id, outcome, prefix))
    return out


def _trx_frame(path: Path) -> tuple[str, str, str]:
    """(header up to and including <Results>, TestLists block, RunInfos-free summary tail)."""
    root = etree.parse(str(path)).getroot()
    head = etree.tostring(root, encoding="unicode").split("<Results>", 1)[0]
    header = '<?xml version="1.0" encoding="utf-8"?>\n' + head.rstrip() + "\n  <Results>\n"
    lists = root.find(_q("TestLists"))
    assert lists is not None
    return header, _xml(lists), "</TestRun>\n"


def _uid(*parts: object) -> str:
    return str(uuid.uuid5(_ID_NAMESPACE, ":".join(map(str, parts))))


@dataclass(frozen=True)
class Slot:
    template: TrxTemplate
    replica: int
    copy_key: str  # keys the ids: equal for FluentValidation rows that share a testId


def _replica(replica: int, seed: int, passing: list[TrxTemplate], failing: list[TrxTemplate],
             fail_ratio: float) -> list[Slot]:
    rng = random.Random(f"{seed}:{replica}")
    slots = []
    for i, tpl in enumerate(passing):
        if rng.random() < fail_ratio:
            f = rng.randrange(len(failing))
            slots.append(Slot(failing[f], replica, f"fail:{i}"))
        else:
            slots.append(Slot(tpl, replica, f"pass:{tpl.test_id}"))
    return slots


def _render(slot: Slot, part: str) -> str:
    tpl = slot.template
    text = {"result": tpl.result, "definition": tpl.definition, "entry": tpl.entry}[part]
    text = text.replace(tpl.execution_id, _uid("exec", slot.replica, slot.copy_key, tpl.execution_id))
    text = text.replace(tpl.test_id, _uid("test", slot.replica, slot.copy_key, tpl.test_id))
    if tpl.name_prefix:  # only before a type name: `Ns.Tests.dll` paths stay as they were
        tagged = f"{tpl.name_prefix}.R{slot.replica:05d}."
        text = re.sub(re.escape(tpl.name_prefix) + r"\.(?=[A-Z])", tagged, text)
    return text


def _iter_slots(replicas: int, seed: int, passing: list[TrxTemplate], failing: list[TrxTemplate],
                fail_ratio: float) -> Iterator[Slot]:
    for r in range(replicas):
        yield from _replica(r, seed, passing, failing, fail_ratio)


_COUNTER_OUTCOMES = {"Passed": "passed", "Failed": "failed", "NotExecuted": "notExecuted"}


def write_trx(out: Path, size_mb: float, seed: int, fail_ratio: float) -> dict[str, int]:
    passing = _templates(PASSING_TRX, only_failed=False)
    failing = [t for p in FAILING_TRX for t in _templates(p, only_failed=True)]
    header, lists, tail = _trx_frame(PASSING_TRX)
    sample = list(_iter_slots(2, seed, passing, failing, fail_ratio))
    per_slot = sum(len(_render(s, "result")) + len(_render(s, "definition")) + len(_render(s, "entry"))
                   for s in sample) / len(sample)
    replicas = max(1, round(size_mb * 1_000_000 / per_slot / len(passing)))
    counts = {"total": 0, "executed": 0, "passed": 0, "failed": 0, "notExecuted": 0}
    with open(out, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(header)
        for slot in _iter_slots(replicas, seed, passing, failing, fail_ratio):
            fh.write("    " + _render(slot, "result"))
            counts["total"] += 1
            key = _COUNTER_OUTCOMES.get(slot.template.outcome)
            if key:
                counts[key] += 1
            if slot.template.outcome != "NotExecuted":
                counts["executed"] += 1
        fh.write("  </Results>\n  <TestDefinitions>\n")
        for r in range(replicas):
            seen: set[str] = set()
            for slot in _replica(r, seed, passing, failing, fail_ratio):
                if slot.copy_key not in seen:  # one UnitTest per distinct testId, as VSTest writes
                    seen.add(slot.copy_key)
                    fh.write("    " + _render(slot, "definition"))
        fh.write("  </TestDefinitions>\n  <TestEntries>\n")
        for slot in _iter_slots(replicas, seed, passing, failing, fail_ratio):
            fh.write("    " + _render(slot, "entry"))
        fh.write("  </TestEntries>\n  " + lists)
        attrs = " ".join(f'{k}="{counts.get(k, 0)}"' for k in (
            "total", "executed", "passed", "failed", "error", "timeout", "aborted", "inconclusive",
            "passedButRunAborted", "notRunnable", "notExecuted", "disconnected", "warning",
            "completed", "inProgress", "pending"))
        fh.write(f'  <ResultSummary outcome="Failed">\n    <Counters {attrs} />\n  </ResultSummary>\n')
        fh.write(tail)
    return {**counts, "replicas": replicas, "bytes": out.stat().st_size}


_PULSAR_PKG = "org.apache.pulsar."


def write_junit(out: Path, size_mb: float) -> dict[str, int]:
    root = etree.parse(str(JUNIT_SOURCE)).getroot()
    suites = [etree.tostring(s, encoding="unicode").rstrip() + "\n" for s in root.iter("testsuite")]
    block = "".join(suites)
    replicas = max(1, round(size_mb * 1_000_000 / len(block.encode())))
    tests = int(root.get("tests", "0")) * replicas
    failures = int(root.get("failures", "0")) * replicas
    skipped = int(root.get("skipped", "0")) * replicas
    with open(out, "w", encoding="utf-8", newline="\n") as fh:
        fh.write("<?xml version='1.0' encoding='utf-8'?>\n")
        fh.write(f'<testsuites tests="{tests}" failures="{failures}" errors="0" skipped="{skipped}">\n')
        for r in range(replicas):
            fh.write(block.replace(_PULSAR_PKG, f"{_PULSAR_PKG}r{r:05d}."))
        fh.write("</testsuites>\n")
    return {"tests": tests, "failures": failures, "skipped": skipped, "replicas": replicas,
            "bytes": out.stat().st_size}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--size-mb", type=float, default=100.0)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fail-ratio", type=float, default=0.01)
    ap.add_argument("--only", choices=("trx", "junit"))
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    tag = f"{args.size_mb:g}mb"
    if args.only in (None, "trx"):
        info = write_trx(args.out / f"large-{tag}.trx", args.size_mb, args.seed, args.fail_ratio)
        print(f"large-{tag}.trx: {info}")
    if args.only in (None, "junit"):
        info = write_junit(args.out / f"large-{tag}.junit.xml", args.size_mb)
        print(f"large-{tag}.junit.xml: {info}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
