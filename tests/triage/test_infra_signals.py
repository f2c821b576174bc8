"""Each signal against the wording tools print (the messages are the tools' fixed texts; paths,
hosts and names are ours), and lines that look close but are a test's or the code's own words.
Every signal needs an example here, and every example must pass the keyword prefilter."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_agent.triage.infra import classify
from ci_agent.triage.infra_scan import candidate_lines
from ci_agent.triage.infra_signals import SIGNALS, is_consequence, match_signal
from tests.triage.test_infra import EMPTY, report_of

EXAMPLES: dict[str, list[str]] = {
    "feed": [
        "/src/App/App.csproj : error NU1301: Unable to load the service index for source "
        "https://api.nuget.org/v3/index.json.",
        "error NU1301: Failed to retrieve information about 'Serilog' from remote source "
        "'https://pkgs.example.com/nuget/v3/flat2/serilog/index.json'.",
        "  Response status code does not indicate success: 503 (Service Unavailable).",
        "  Unable to load the service index for source https://pkgs.example.com/nuget/v3/index.json.",
        "  Failed to retrieve information about 'Serilog' from remote source 'https://pkgs.example.com/x'.",
        "npm ERR! code E503",
        "npm ERR! 503 Service Unavailable - GET https://registry.npmjs.org/left-pad",
        "pip._vendor.urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool(host='files.pythonhosted.org', "
        "port=443): Read timed out.",
        "ERROR: HTTP error 503 while getting https://files.pythonhosted.org/packages/x/requests.whl",
        "go: example.com/m@v1.0.0: reading https://proxy.golang.org/example.com/m/@v/v1.0.0.mod: "
        "502 Bad Gateway",
        "  failed to get successful HTTP response from `https://index.crates.io/config.json` (1.2.3.4), "
        "got 503",
        "WARNING: Retrying (Retry(total=3, connect=None, read=None, redirect=None, status=None)) after "
        "connection broken by 'ProtocolError('Connection aborted.', RemoteDisconnected())': /simple/x/",
    ],
    "rate_limit": [
        "  Response status code does not indicate success: 429 (Too Many Requests).",
        "npm ERR! code E429",
        "ERROR: HTTP error 429 while getting https://pypi.org/simple/x/",
        "  failed to get successful HTTP response from `https://index.crates.io/se/rd/serde`, got 429",
        "Error response from daemon: toomanyrequests: You have reached your pull rate limit. You may "
        "increase the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit",
        "ERROR: toomanyrequests: Too Many Requests.",
    ],
    "network": [
        "npm ERR! code ECONNRESET",
        "npm error errno EAI_AGAIN",
        "npm ERR! network request to https://registry.npmjs.org/x failed, reason: socket hang up",
        "npm error request to https://registry.npmjs.org/x failed, reason: getaddrinfo EAI_AGAIN "
        "registry.npmjs.org",
        "error An unexpected error occurred: \"https://registry.yarnpkg.com/x: getaddrinfo ENOTFOUND "
        "registry.yarnpkg.com\".",
        "info There appears to be trouble with your network connection. Retrying...",
        "go: example.com/m@v1.0.0: Get \"https://proxy.golang.org/example.com/m/@v/v1.0.0.mod\": dial tcp: "
        "lookup proxy.golang.org on 127.0.0.53:53: server misbehaving",
        "go: example.com/m@v1.0.0: Get \"https://proxy.golang.org/x\": net/http: TLS handshake timeout",
        "warning: spurious network error (2 tries remaining): [28] Timeout was reached",
        "warning: spurious network error (1 tries remaining): failed to get successful HTTP response from "
        "`https://index.crates.io/config.json`, got 503",
        "WARNING: Retrying (Retry(total=0, connect=None, read=None, redirect=None, status=None)) after "
        "connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPConnection object at "
        "0x7f87ad516690>: Failed to establish a new connection: [Errno 111] Connection refused')': "
        "/simple/x/",
        "curl: (6) Could not resolve host: example.com",
        "fatal: unable to access 'https://github.com/o/r.git/': Could not resolve host: github.com",
        "socket.gaierror: [Errno -3] Temporary failure in name resolution",
        "[ERROR] java.net.UnknownHostException: repo.maven.apache.org",
        "No such host is known. (api.nuget.org:443)",
    ],
    "disk": [
        "System.IO.IOException: No space left on device : '/home/runner/work/app/obj/x.dll'",
        "npm ERR! code ENOSPC",
        "There is not enough space on the disk. : 'D:\\a\\app\\bin\\x.pdb'",
        "You are running out of disk space. The runner will stop working when the machine runs out of disk "
        "space. Free space left: 12 MB",
    ],
    "memory": [
        "Killed",
        "/bin/sh: line 1:  2713 Killed                  npm run build",
        "Process completed with exit code 137.",
        "ERROR: Job failed: exit code 137",
        "FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed - "
        "JavaScript heap out of memory",
        "fatal error: runtime: out of memory",
        "c++: fatal error: Killed signal terminated program cc1plus",
        "collect2: fatal error: ld terminated with signal 9 [Killed]",
        "virtual memory exhausted: Cannot allocate memory",
        "cc1plus: out of memory allocating 65536 bytes after a total of 1048576 bytes",
    ],
    "cancelled": [
        "The operation was canceled.",
        "Error: The operation was canceled.",
    ],
    "runner": [
        "The runner has received a shutdown signal. This can happen when the runner service is stopped, or a "
        "manually started runner is canceled.",
        "The self-hosted runner: build-7 lost communication with the server. Verify the machine is "
        "running and has a healthy network connection.",
        "ERROR: Job failed (system failure): prepare environment: exit status 1",
        "There has been a runner system failure, please try again",
    ],
    "timeout": [
        "The job running on runner GitHub Actions 3 has exceeded the maximum execution time of 360 minutes.",
        "ERROR: Job failed: execution took longer than 1h0m0s seconds",
        "There has been a timeout failure or the job got stuck. Check your timeout limits or try again",
    ],
}

# A test's or the code's own words: near a signal, never one.
NOT_SIGNALS = [
    "System.OutOfMemoryException: Insufficient memory to continue the execution of the program.",
    "Assert.Throws<OutOfMemoryException>() Failure",
    "MemoryError",
    "expected status 503 but got 200",
    "test_timeout_is_reported ... FAILED",
    "Killed 12 mutants, 3 survived",
    "error TS2304: Cannot find name 'fetch'.",
    "Request took 137 ms",
    "The local source '/opt/feed' doesn't exist.",
    "npm ERR! code E404",
    "npm ERR! code ERESOLVE",
    "Process completed with exit code 1.",
    "System.OperationCanceledException: The operation was canceled.",
    "connection refused",
]


@pytest.mark.parametrize(("category", "line"), [(c, line) for c, lines in EXAMPLES.items() for line in lines])
def test_each_example_is_its_category_and_passes_the_prefilter(category: str, line: str) -> None:
    found = match_signal(line)
    assert found is not None, line
    assert found[0].category == category
    assert candidate_lines(f"before\n{line}\nafter") == [line]


def test_every_signal_has_an_example() -> None:
    matched = {id(found[0]) for lines in EXAMPLES.values() for line in lines
               if (found := match_signal(line)) is not None}
    unmatched = [s.pattern.pattern for s in SIGNALS if id(s) not in matched]
    # a signal shadowed by an earlier one still needs its own example matching it first
    assert unmatched == []


@pytest.mark.parametrize("line", NOT_SIGNALS)
def test_near_misses_are_not_signals(line: str) -> None:
    assert match_signal(line) is None


@pytest.mark.parametrize("line", [
    "error NU1101: Unable to find package Contoso.Utils. No packages exist with this id in source(s): nuget",
    "error NU1102: Unable to find package Serilog with version (>= 9.9.9)",
    "ERROR: No matching distribution found for requests",
    "error: failed to get `itoa` as a dependency of package `x v0.1.0`",
    "error MSB3073: The command \"npm ci\" exited with code 1.",
])
def test_consequences(line: str) -> None:
    assert is_consequence(line) and match_signal(line) is None


def test_a_dotnet_restore_behind_buildkit_whose_feed_failed(tmp_path: Path) -> None:
    """`dotnet restore` in a Docker build: BuildKit's `#11 10.82 ` prefixes, the NU1301 error on
    the project file (a repository file, explained by its own message)."""
    log = tmp_path / "docker-build.log"
    log.write_text(
        " > [build 4/6] RUN dotnet restore:\n"
        "#11 1.033   Determining projects to restore...\n"
        "#11 10.82 /src/Shop.Api.csproj : error NU1301: Unable to load the service index for source "
        "https://api.nuget.org/v3/index.json.\n"
        "#11 18.52   Failed to restore /src/Shop.Api.csproj (in 17.31 sec).\n"
        "ERROR: failed to solve: process \"/bin/sh -c dotnet restore\" did not complete successfully: "
        "exit code: 1\n", encoding="utf-8")
    report = report_of(log)
    assert any(d.code == "NU1301" for d in report.diagnostics)
    verdict = classify(report, [log])
    assert verdict is not None and "feed" in verdict.reason
    assert verdict.evidence[0].startswith("docker-build.log: ")


def test_a_restore_summary_on_windows_whose_feed_failed(tmp_path: Path) -> None:
    """MSBuild's `Build FAILED.` summary repeats each error; NU1101 beside NU1301 is the feed's
    consequence."""
    log = tmp_path / "restore.log"
    project = "D:\\a\\shop\\shop\\src\\Shop\\Shop.csproj"
    log.write_text(
        "Build FAILED.\r\n\r\n"
        "       \"D:\\a\\shop\\shop\\Shop.sln\" (Restore target) (1) ->\r\n"
        "       (Restore target) -> \r\n"
        f"         {project} : error NU1301: Unable to load the service index for source "
        "https://pkgs.example.com/nuget/v3/index.json. [D:\\a\\shop\\shop\\Shop.sln]\r\n"
        f"         {project} : error NU1101: Unable to find package Contoso.Utils. No packages exist with "
        "this id in source(s): contoso [D:\\a\\shop\\shop\\Shop.sln]\r\n\r\n"
        "    0 Warning(s)\r\n    2 Error(s)\r\n", encoding="utf-8")
    verdict = classify(report_of(log), [log])
    assert verdict is not None and "feed" in verdict.reason


def test_a_github_job_log_of_a_runner_shut_down(tmp_path: Path) -> None:
    """The runner's annotations as they appear in a downloaded job log: timestamps and `##[error]`."""
    log = tmp_path / "12-build.log"
    log.write_text(
        "2026-02-09T20:11:40.1000000Z   Passed Shop.Tests.CartTests.Adds [3 ms]\n"
        "2026-02-09T20:11:49.9484027Z ##[error]The runner has received a shutdown signal. This can happen "
        "when the runner service is stopped, or a manually started runner is canceled.\n"
        "2026-02-09T20:11:49.9966268Z ##[error]The operation was canceled.\n"
        "2026-02-09T20:11:50.1524223Z Cleaning up orphan processes\n", encoding="utf-8")
    verdict = classify(EMPTY, [log])
    assert verdict is not None
    assert verdict.reason == ("Not a code failure: the CI runner failed or lost contact with the server "
                              "(also: the job was cancelled before it finished).")
    assert verdict.evidence[0].startswith("12-build.log: The runner has received a shutdown signal.")
