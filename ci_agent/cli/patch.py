"""`ci-agent patch check|apply PATCH`: police a patch, and apply exactly it, all or nothing.

This is also how a patch a person approved (`/ci-agent apply`) lands: the given text is policed
and applied as it is; nothing is regenerated.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ci_agent.cli import repo_root_arg
from ci_agent.config.load import load_settings
from ci_agent.errors import ExitCode, InputError
from ci_agent.patch.engine import Verdict, apply_patch, review

HELP = "check or apply a unified diff under ci-agent's patch policy"
DESCRIPTION = ("Police a unified diff (paths, sizes, fake-fix gates, git apply --check) and "
    "optionally apply it to the work tree and index, all or nothing. "
    "Exit 0 when it passes, 1 when it is rejected.")


def add_arguments(patch: argparse.ArgumentParser) -> None:
    """The `patch` verb's arguments (its help and description: HELP, DESCRIPTION)."""
    actions = patch.add_subparsers(dest="patch_action", metavar="ACTION")
    actions.required = True
    for name, help_text in (
        ("check", "report whether the patch would be accepted; change nothing"),
        ("apply", "apply the patch to the work tree and the index when it is accepted"),
    ):
        action = actions.add_parser(name, help=help_text, description=help_text)
        action.add_argument("patch_file", metavar="PATCH",
                            help="diff file, or text with ```diff blocks; - reads stdin")
        action.add_argument("--repo", metavar="DIR", default=".",
                            help="the git repository (default: the one containing the current directory)")
        action.add_argument("--json", action="store_true", help="print the verdict as JSON")


def _read_patch(name: str) -> str:
    try:
        data = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read patch {name}: {exc.strerror or exc}") from exc
    # bytes, not text mode: text mode would silently turn CRLF into LF
    return data.decode("utf-8", errors="surrogateescape")



def _print_text(verdict: Verdict, applied: bool) -> None:
    if verdict.ok:
        what = "applied" if applied else "ok"
        print(f"{what}: {len(verdict.files)} file(s), +{verdict.added} -{verdict.removed}")
        for path in verdict.files:
            print(f"  {path}")
        return
    print(f"rejected: {len(verdict.rejections)} problem(s)")
    for r in verdict.rejections:
        where = f" {r.path}" if r.path else ""
        print(f"- [{r.rule}]{where}: {r.message}")


def run_patch(args: argparse.Namespace) -> ExitCode:
    repo = repo_root_arg(args.repo)
    settings = load_settings(repo)
    text = _read_patch(args.patch_file)
    applying = args.patch_action == "apply"
    verdict = apply_patch(text, repo, settings.patch) if applying else review(text, repo, settings.patch)
    if args.json:
        print(json.dumps(verdict.to_json(), indent=2, ensure_ascii=False))
    else:
        _print_text(verdict, applying)
    return ExitCode.OK if verdict.ok else ExitCode.FAILURE
