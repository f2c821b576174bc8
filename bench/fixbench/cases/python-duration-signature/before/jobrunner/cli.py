from __future__ import annotations

import argparse

from jobrunner.durations import parse_duration


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jobrunner")
    parser.add_argument("job")
    parser.add_argument("--timeout", default="10m", help="e.g. 90s, 15m, 2h")
    return parser


def parse_args(argv: list[str]) -> tuple[str, int]:
    args = build_parser().parse_args(argv)
    return args.job, parse_duration(args.timeout)
