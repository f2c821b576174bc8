"""What the environment says when it, not the code, failed a job: the wording of package feeds,
registries, resolvers, the kernel, language runtimes and CI runners (issue 16).

Every pattern is the text a real tool prints (tests/fixtures/infra/PROVENANCE.md names the command
that produced each saved log; the runner messages are quoted from GitHub's and GitLab's runners).
Patterns are narrow on purpose: a word like "timeout" or "503" alone is printed by tests all the
time, so each pattern needs the tool's own phrasing around it.

Two kinds:
- a `SIGNAL` says the environment failed (a feed unreachable, the disk full, a process killed);
- a `CONSEQUENCE` is what a tool says after such a failure ("Unable to find package",
  "No matching distribution found"): never a reason on its own (a misspelt package name prints the
  same), but not a code failure either when a signal explains it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Category = Literal["feed", "network", "rate_limit", "disk", "memory", "cancelled", "runner", "timeout"]

# One sentence per category, for the verdict's reason (most specific first when several are seen).
CATEGORY_REASONS: dict[Category, str] = {
    "runner": "the CI runner failed or lost contact with the server",
    "cancelled": "the job was cancelled before it finished",
    "timeout": "the job ran out of time or got stuck",
    "memory": "a process ran out of memory or was killed",
    "disk": "the machine ran out of disk space",
    "rate_limit": "a package registry refused requests (rate limit)",
    "feed": "a package feed or registry could not be reached or failed",
    "network": "the network failed (name resolution or connection)",
}
CATEGORY_ORDER: tuple[Category, ...] = tuple(CATEGORY_REASONS)
# Categories that also explain a crashed or aborted test run (a run error, not a test's failure).
RESOURCE_CATEGORIES: frozenset[Category] = frozenset({"runner", "cancelled", "timeout", "memory", "disk"})


@dataclass(frozen=True, slots=True)
class Signal:
    category: Category
    pattern: re.Pattern[str]
    # True: also an explanation when it is a failed test's own message (a test that failed only
    # because the runner could not resolve a host). False: only as a line of the log, because a
    # test can print or assert it ("The operation was canceled." is also an OperationCanceledException).
    in_messages: bool = True


def _p(text: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(text, flags)



SIGNALS: tuple[Signal, ...] = (
    # --- NuGet (dotnet restore): the feed itself failed, not a package missing from it.
    Signal("feed", _p(r"NU1301\b.*(?:Unable to load the service index|Failed to retrieve information about"
                      r"|Failed to download package|An error occurred while sending the request"
                      r"|The SSL connection could not be established|timed out|Response status code)")),
    Signal("feed", _p(r"Unable to load the service index for source")),
    Signal("feed", _p(r"Failed to retrieve information about '[^']*' from remote source")),
    Signal("rate_limit", _p(r"Response status code does not indicate success: 429\b")),
    Signal("feed", _p(r"Response status code does not indicate success: 50[0234]\b")),
    # --- npm / yarn / pnpm (npm 7-9: "npm ERR!", npm 10+: "npm error").
    Signal("network", _p(r"^npm (?:ERR!|error) (?:code|errno) (?:ETIMEDOUT|ECONNRESET|ECONNREFUSED|EAI_AGAIN"
                         r"|ENOTFOUND|ENETUNREACH|EHOSTUNREACH|ERR_SOCKET_TIMEOUT)\b")),
    Signal("network", _p(r"^npm (?:ERR!|error) network\b")),
    Signal("rate_limit", _p(r"^npm (?:ERR!|error) (?:code E429\b|429 Too Many Requests)")),
    Signal("feed", _p(r"^npm (?:ERR!|error) (?:code E50[0234]\b|50[0234] (?:Internal Server Error|Bad Gateway"
                      r"|Service Unavailable|Gateway Time-?out))")),
    Signal("network", _p(r"\b(?:request to|fetching) https?://\S+ failed, reason: "
                         r"(?:getaddrinfo |connect |read |socket hang up)")),
    Signal("network", _p(r"\bgetaddrinfo (?:EAI_AGAIN|ENOTFOUND) [\w.-]+")),
    Signal("network", _p(r"\bThere appears to be trouble with your network connection\b")),  # yarn 1
    # --- pip: urllib3's retry and timeout wording, pip's HTTP errors.
    Signal("feed", _p(r"HTTPS?ConnectionPool\(host='[^']*', port=\d+\): "
                      r"(?:Read timed out|Max retries exceeded)")),
    Signal("feed", _p(r"\bHTTP error 50[0234] while getting https?://")),
    Signal("rate_limit", _p(r"\bHTTP error 429 while getting https?://")),
    # --- Go modules: the proxy or VCS could not be reached.
    Signal("network", _p(r"\bdial tcp(?: [\d.:\[\]a-f]+)?: (?:lookup \S+(?: on \S+)?: "
                         r"(?:no such host|server misbehaving|i/o timeout|Temporary failure)"
                         r"|connect: (?:connection refused|connection timed out|network is unreachable"
                         r"|no route to host)|i/o timeout)")),
    Signal("network", _p(r"\bnet/http: (?:TLS handshake timeout"
                         r"|request canceled while waiting for connection)")),
    Signal("feed", _p(r"\breading https?://\S+: 50[0234] (?:Internal Server Error|Bad Gateway|Service "
                      r"Unavailable|Gateway Timeout)")),
    # --- cargo (libcurl's numbered errors) and curl itself.
    Signal("network", _p(r"\[(?:5|6|7|28|35|52|56)\] (?:Couldn't resolve proxy name"
                         r"|Could not resolve hostname|Couldn't resolve host name|Could not connect to server"
                         r"|Couldn't connect to server|Timeout was reached|SSL connect error"
                         r"|Server returned nothing|Failure when receiving)")),
    Signal("network", _p(r"\bspurious network error\b")),
    Signal("network", _p(r"\bcurl: \((?:5|6|7|28|35|52|56)\) ")),
    Signal("rate_limit", _p(r"failed to get successful HTTP response from `[^`]*`.*got 429\b")),
    Signal("feed", _p(r"failed to get successful HTTP response from `[^`]*`.*got 50[0234]\b")),
    # --- name resolution, as libc, Python, curl, git and Java print it.
    Signal("network", _p(r"\b(?:Temporary failure in name resolution|Name or service not known"
                         r"|nodename nor servname provided, or not known|No such host is known)")),
    Signal("network", _p(r"\bCould not resolve host: \S+")),
    Signal("network", _p(r"\bjava\.net\.UnknownHostException: \S+")),
    Signal("network", _p(r"\bFailed to establish a new connection: \[Errno (?:-[235]|101|110|111|113)\]")),
    # pip's retry for any other broken connection (after the specific wordings above)
    Signal("feed", _p(r"Retrying \(Retry\(total=\d+.*\) after connection broken by")),
    # --- container registries.
    Signal("rate_limit", _p(r"\btoomanyrequests: You have reached your "
                            r"(?:unauthenticated )?pull rate limit")),
    Signal("rate_limit", _p(r"\btoomanyrequests\b")),
    # --- disk.
    Signal("disk", _p(r"\bNo space left on device\b")),
    Signal("disk", _p(r"\bENOSPC\b")),
    Signal("disk", _p(r"\bThere is not enough space on the disk\b")),
    Signal("disk", _p(r"\bYou are running out of disk space\b")),
    # --- memory: the kernel's OOM killer (SIGKILL, exit 137), runtimes that ran out of memory.
    Signal("memory", _p(r"^(?:\S+: )?(?:line \d+: +)?\d+ Killed\b|^Killed$")),
    Signal("memory", _p(r"\b(?:[Ee]xit code|[Ee]xit status|exited with code|exit_code)(?: |=|: ?| = )137\b")),
    Signal("memory", _p(r"\bJavaScript heap out of memory\b")),
    Signal("memory", _p(r"^fatal error: (?:runtime: )?out of memory\b")),
    Signal("memory", _p(r"\bfatal error: Killed signal terminated program\b")),
    Signal("memory", _p(r"\bterminated with signal 9 \[Killed\]")),
    Signal("memory", _p(r"\bvirtual memory exhausted: Cannot allocate memory\b")),
    Signal("memory", _p(r"\bout of memory allocating \d+ bytes\b")),
    # --- cancelled jobs and lost runners (GitHub Actions runner and GitLab Runner messages).
    Signal("cancelled", _p(r"^(?:Error: )?The operation was canceled\.$"), in_messages=False),
    Signal("runner", _p(r"\bThe runner has received a shutdown signal\b")),
    Signal("runner", _p(r"\blost communication with the server\b")),
    Signal("runner", _p(r"\bERROR: Job failed \(system failure\)")),
    Signal("runner", _p(r"\bThere has been a runner system failure\b")),
    Signal("timeout", _p(r"\bhas exceeded the maximum execution time of \d+ minutes\b")),
    Signal("timeout", _p(r"\bERROR: Job failed: execution took longer than\b")),
    Signal("timeout", _p(r"\bThere has been a timeout failure or the job got stuck\b")),
)

# After a feed failure these follow; alone they may be a typo in a package name.
CONSEQUENCES: tuple[re.Pattern[str], ...] = (
    _p(r"\bNU110[123]\b|\bUnable to find (?:package|a stable package|version)\b"),
    _p(r"\bCould not find a version that satisfies the requirement\b|\bNo matching distribution found for\b"),
    _p(r"\bfailed to (?:get `[^`]*` as a dependency|query replaced source registry|download from `"
       r"|load source for dependency)"),
    _p(r"\bMSB3073\b|\bMSB4181\b|\bexited with code \d+\b|\bProcess completed with exit code \d+\b"),
    _p(r"\bNETSDK1004\b|\bAssets file '[^']*' not found\b"),
    _p(r"\bnpm (?:ERR!|error) (?:code|errno|syscall|network)\b"),
)

# The prefilter: literal words, one of which every signal's line holds. `str.find` scans a block
# of lines for each at C speed (a regex alternation of them is ten times slower), and only the
# lines holding one are matched against the signals. tests/triage/test_infra_signals.py checks
# that each signal's example line holds a keyword.
KEYWORDS: tuple[str, ...] = (
    "NU1301", "service index", "remote source", "does not indicate success", "npm ERR!", "npm error",
    "failed, reason:", "getaddrinfo", "Retrying (Retry", "ConnectionPool(", "HTTP error", "dial tcp",
    "net/http:", "reading http", "] Could", "] Couldn't", "] Timeout was reached", "] SSL connect",
    "] Server returned", "] Failure when", "spurious network", "curl: (", "HTTP response from",
    "name resolution", "service not known", "servname", "No such host", "resolve host", "UnknownHost",
    "new connection", "toomanyrequests", "No space left", "ENOSPC", "enough space on the disk",
    "out of disk space", "Killed", "code 137", "status 137", "code=137", "code: 137",
    "code:137", "code = 137", "out of memory", "memory exhausted", "operation was canceled",
    "shutdown signal", "lost communication", "Job failed", "runner system failure",
    "maximum execution time", "timeout failure", "trouble with your network",
)


def match_signal(text: str, message: bool = False) -> tuple[Signal, re.Match[str]] | None:
    """The first signal one line of text carries (`message`: the line is a failure's message), and
    where in the line it is."""
    for signal in SIGNALS:
        if message and not signal.in_messages:
            continue
        found = signal.pattern.search(text)
        if found is not None:
            return signal, found
    return None


def message_signal(text: str) -> tuple[Signal, str] | None:
    """The signal a failed test's or diagnostic's message carries, line by line (bounded), and
    the line that carries it."""
    for line in text[:_MESSAGE_CHARS].splitlines()[:_MESSAGE_LINES]:
        found = match_signal(line.strip(), message=True)
        if found is not None:
            return found[0], line.strip()
    return None


def is_consequence(text: str) -> bool:
    head = text[:_MESSAGE_CHARS]
    return any(pattern.search(head) for pattern in CONSEQUENCES)


_MESSAGE_CHARS = 4096
_MESSAGE_LINES = 40
