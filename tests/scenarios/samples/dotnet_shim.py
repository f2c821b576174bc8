"""Replay shim standing in for `dotnet` (no .NET SDK here): `dotnet build` replays a real log.

The scenario tests install a copy of this file as an executable named `dotnet` first on PATH,
with a JSON configuration beside it (`dotnet-shim.json`):

    {"file": "<repo-relative source file>", "bug_regex": "<regex>",
     "failed_log": "<real MSBuild console log>", "calls": "<file the shim appends its calls to>"}

While `bug_regex` matches the source file (relative to the current directory, as `dotnet build`
reads the project in its working directory), the shim prints the real log byte for byte and
exits 1, as the build did. Once the file is fixed it prints a short success text and exits 0.
That success text is ours, not captured MSBuild output: only its exit code matters to the fix
loop (a green verify), and no parser is tested against it.

No path in the replayed log is rewritten: the log prints Windows paths under `C:\\Dev\\JAIMES AF\\`
and ci-agent infers that checkout root from the printed paths themselves, the way it must for
any log built on another machine.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

SUCCESS = """  Determining projects to restore...
  All projects are up-to-date for restore.
  JAIMES AF.Web -> bin/Debug/net10.0/JAIMES AF.Web.dll

Build succeeded.
    0 Warning(s)
    0 Error(s)
"""


def main(argv: list[str]) -> int:
    config = json.loads(Path(__file__).with_name("dotnet-shim.json").read_text(encoding="utf-8"))
    with open(config["calls"], "a", encoding="utf-8") as calls:
        calls.write(json.dumps({"argv": argv, "cwd": os.getcwd()}) + "\n")
    if not argv or argv[0] != "build":
        print(f"dotnet replay shim: only `dotnet build` is replayed, not {argv!r}", file=sys.stderr)
        return 2
    source = Path.cwd() / config["file"]
    if not source.is_file():
        print(f"dotnet replay shim: {source} is missing (run in the wrong directory?)", file=sys.stderr)
        return 2
    if re.search(config["bug_regex"], source.read_text(encoding="utf-8")):
        sys.stdout.flush()
        sys.stdout.buffer.write(Path(config["failed_log"]).read_bytes())
        sys.stdout.buffer.flush()
        return 1
    sys.stdout.write(SUCCESS)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
