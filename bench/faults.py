"""The service-fault figure for SECURITY.md: fault points exercised, per target and kind.

Runs `pytest tests/hardening/faults` (or the `--tests` given) with a JUnit XML report, then
counts every fault point (one parametrized test = one fault injected into one job, then a rerun)
by target (GitHub / GitLab / model / GitHub escalation) and kind, with its outcome: passed (all
invariants held), xfailed (a known ci-agent bug, see the test's reason), failed. The reference
(clean-run) tests are not fault points and are counted apart. Prints a Markdown table; nothing
asserts a time.

    python bench/faults.py            # ~4 min on 2 busy cores
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"test_github_faults": "GitHub fix job", "test_gitlab_faults": "GitLab fix job",
           "test_model_faults": "Anthropic (model) requests",
           "test_escalation_faults": "GitHub escalation job"}
# test_forge_faults.py runs the fix job's matrix on both forges: its parameter names the platform.
PLATFORM_MODULES = {"test_forge_faults": {"github": "test_github_faults", "gitlab": "test_gitlab_faults"}}
Counts = collections.Counter[str]
KINDS = ("storm429", "5xx", "529", "timeout", "drop", "partial")


def outcome(case: ET.Element) -> str:
    if case.find("failure") is not None or case.find("error") is not None:
        return "failed"
    skipped = case.find("skipped")
    if skipped is not None:
        return "xfailed" if "xfail" in (skipped.get("type", "") + skipped.get("message", "")) else "skipped"
    return "passed"


def count(report: Path) -> tuple[dict[tuple[str, str], collections.Counter[str]], collections.Counter[str]]:
    points: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(collections.Counter)
    references: collections.Counter[str] = collections.Counter()
    for case in ET.parse(report).iter("testcase"):
        module = case.get("classname", "").rsplit(".", 1)[-1]
        param = re.search(r"\[(.*)\]$", case.get("name", ""))
        point = param.group(1) if param else None
        if module in PLATFORM_MODULES and point is not None:
            platform, _, rest = point.partition("-")
            module, point = PLATFORM_MODULES[module].get(platform, module), rest or None
        if module not in TARGETS:
            continue
        if point is None:
            references[outcome(case)] += 1
            continue
        kind = next((k for k in KINDS if point.endswith(k)), "?")
        points[(TARGETS[module], kind)][outcome(case)] += 1
    return points, references


def table(points: dict[tuple[str, str], Counts], references: Counts) -> str:
    lines = ["| target | " + " | ".join(KINDS) + " | points | passed | xfailed | failed |",
             "|---|" + "---:|" * (len(KINDS) + 4)]
    total: collections.Counter[str] = collections.Counter()
    for target in TARGETS.values():
        row = [sum(points[(target, k)].values()) for k in KINDS]
        outcomes: collections.Counter[str] = collections.Counter()
        for k in KINDS:
            outcomes.update(points[(target, k)])
        total.update(outcomes)
        lines.append(f"| {target} | " + " | ".join(str(n) for n in row) + f" | {sum(row)} | "
                     + " | ".join(str(outcomes[o]) for o in ("passed", "xfailed", "failed")) + " |")
    per_kind = [sum(sum(points[(t, k)].values()) for t in TARGETS.values()) for k in KINDS]
    lines.append("| **all** | " + " | ".join(str(n) for n in per_kind) + f" | **{sum(total.values())}** | "
                 + " | ".join(str(total[o]) for o in ("passed", "xfailed", "failed")) + " |")
    lines.append(f"\nReference (clean) runs: {sum(references.values())} ({dict(references)}).")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", default="tests/hardening/faults")
    parser.add_argument("--report", type=Path, help="read this JUnit XML instead of running pytest")
    args = parser.parse_args(argv)
    report = args.report
    if report is None:
        report = Path(tempfile.mkdtemp(prefix="ci-agent-faults-")) / "faults.xml"
        done = subprocess.run([sys.executable, "-m", "pytest", args.tests, "-q", "-p", "no:cacheprovider",
                               f"--junitxml={report}"], cwd=ROOT, check=False)
        if done.returncode not in (0, 1):
            return done.returncode
    print(table(*count(report)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
