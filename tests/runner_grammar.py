"""The GitHub runner's workflow-command grammar, as actions/runner reads a step's output.

`ActionCommand.TryParseV2`: the line, trimmed, starts with `::`; the command runs to the next
`::`. `ActionCommand.TryParse` (legacy, tried when V2 does not match): `##[` anywhere in the line,
the command up to the next `]`. Lines break at `\\r\\n`, `\\n` and a bare `\\r`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# What ci-agent itself may emit: secret masks and annotations.
OURS = frozenset({"add-mask", "error", "warning", "notice"})
# A word every hostile command in the tests carries in its head (name and properties).
CANARY = "PWNED"

HOSTILE_LINES = [
    f"::set-output name={CANARY}::1",
    f"  ::set-env name={CANARY}::x",
    f"\t::add-path::/tmp/{CANARY}",
    f"\u00a0\u3000::add-mask::{CANARY}",
    f"::error title={CANARY}::fake annotation",
    f"::stop-commands::{CANARY}",
    f"text ##[set-output name={CANARY}]1",
    f"##[add-path]/tmp/{CANARY}",
    f"ok\r::set-env name={CANARY}::cr",
    f"prefix ##[error title={CANARY}]legacy error",
    f"::group::{CANARY}",
]


@dataclass(frozen=True)
class Command:
    form: str  # "v2" | "legacy"
    name: str
    head: str  # name and properties
    line: str


def commands(output: str) -> list[Command]:
    found = []
    for line in re.split(r"\r\n|\r|\n", output):
        trimmed = line.strip()
        if trimmed.startswith("::"):
            end = trimmed.find("::", 2)
            if end > 2:
                head = trimmed[2:end]
                found.append(Command("v2", head.split(" ")[0], head, line))
                continue
        start = line.find("##[")
        if start >= 0:
            end = line.find("]", start + 3)
            if end > 0:
                head = line[start + 3:end]
                found.append(Command("legacy", head.split(" ")[0], head, line))
    return found


def hostile_commands(output: str) -> list[Command]:
    """Commands the runner would run that are not ci-agent's own."""
    return [c for c in commands(output)
            if c.form == "legacy" or c.name not in OURS or CANARY in c.head
            or (c.name == "add-mask" and CANARY in c.line)]
