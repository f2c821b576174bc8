"""Check a fixbench case green → red → green and store the real toolchain output of the red run.

    python bench/fixbench/capture.py bench/fixbench/cases/python-foo [more case dirs...]
    python bench/fixbench/capture.py --check bench/fixbench/cases/*     # verify only, write nothing

For each case, in a fresh temp copy each time: before/ must pass `command` (exit 0); before/ +
break.diff must fail it (exit ≠ 0), and that run's outputs are stored in outputs/ (the build log
is the command's combined stdout+stderr; junit/trx files are taken from the work dir by the names
in case.json "outputs"); before/ + break.diff + fix.diff must pass again. outputs/ is replaced only
when all three stages hold. Each stage runs from a clean copy, as CI builds from a clean checkout.
The command runs with a timeout, without network (an unshared network namespace when the kernel
allows it) and with `CI=true`. Exit code 0 when every case held, 1 otherwise.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fixcase import Case, CaseError, load_case, materialise, run_command


def _tail(output: bytes, lines: int = 25) -> str:
    return "\n".join(output.decode("utf-8", "replace").splitlines()[-lines:])


def _stage(case: Case, scratch: Path, name: str, *, broken: bool, fixed: bool, timeout: float,
           must_pass: bool) -> tuple[Path, bytes]:
    workdir = materialise(case, scratch / name, broken=broken, fixed=fixed)
    result = run_command(case.command, workdir, timeout)
    if (result.exit_code == 0) != must_pass:
        expected = "pass (exit 0)" if must_pass else "fail (exit != 0)"
        raise CaseError(f"{name}: `{' '.join(case.command)}` should {expected} but exited "
                        f"{result.exit_code}; last lines:\n{_tail(result.output)}")
    return workdir, result.output


def _collect_outputs(case: Case, red_dir: Path, red_log: bytes, into: Path) -> list[str]:
    """The red run's files, under `into` by their case.json names."""
    stored: list[str] = []
    for kind, names in case.outputs.items():
        for name in names:
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if kind == "build_log":
                target.write_bytes(red_log)
            else:
                produced = red_dir / name
                if not produced.is_file():
                    raise CaseError(f"broken: the command wrote no {name} ({kind}) in the work dir")
                shutil.copyfile(produced, target)
            stored.append(name)
    return stored


def capture(case: Case, *, timeout: float, write: bool) -> list[str]:
    """Run the three stages; store the red outputs when `write`. Returns the stored names."""
    with tempfile.TemporaryDirectory(prefix=f"fixbench-{case.id}-") as tmp:
        scratch = Path(tmp)
        _stage(case, scratch, "before", broken=False, fixed=False, timeout=timeout, must_pass=True)
        red_dir, red_log = _stage(case, scratch, "broken", broken=True, fixed=False, timeout=timeout,
                                  must_pass=False)
        staged = scratch / "outputs"
        stored = _collect_outputs(case, red_dir, red_log, staged)
        _stage(case, scratch, "fixed", broken=True, fixed=True, timeout=timeout, must_pass=True)
        if write:
            shutil.rmtree(case.outputs_dir, ignore_errors=True)
            shutil.copytree(staged, case.outputs_dir)
        return stored


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="+", type=Path, help="case folders (bench/fixbench/cases/<id>)")
    parser.add_argument("--check", action="store_true", help="verify green → red → green, write nothing")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per command run (300)")
    args = parser.parse_args(argv)
    failed = 0
    for folder in args.cases:
        try:
            case = load_case(folder)
            stored = capture(case, timeout=args.timeout, write=not args.check)
        except CaseError as exc:
            failed += 1
            print(f"FAIL {folder.name}: {exc}", file=sys.stderr)
            continue
        verb = "ok (checked)" if args.check else "captured " + ", ".join(f"outputs/{n}" for n in stored)
        print(f"{case.id}: {verb}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
