"""`ci-agent serve`: the GitLab webhook relay (`ci_agent.relay`) as a long-running process.

Configuration is the environment, so no secret reaches a process list: `CI_AGENT_WEBHOOK_SECRET`
(the webhook's secret token; without it the relay refuses to start), `CI_AGENT_GITLAB_TOKEN` (a
project access token with the api scope and the Developer role, which creates the pipelines) and
the server URL (`--gitlab-url`, else `CI_AGENT_GITLAB_URL`, else `CI_SERVER_URL`, else gitlab.com).
"""

from __future__ import annotations

import argparse
import os
import signal
import threading
import urllib.parse
from collections.abc import Mapping
from types import FrameType
from typing import Any

from ci_agent.errors import ForgeError, UsageError, status_of
from ci_agent.platforms.gitlab.env import TOKEN_VARIABLE
from ci_agent.relay import SECRET_VARIABLE, NoteCommand, Relay, start_command_pipeline, stderr_log
from ci_agent.retry import RetryPolicy

_MAX_FORGES = 256


HELP = "GitLab webhook relay: start a command pipeline for each /ci-agent comment"
DESCRIPTION = ("Receive a GitLab project webhook (Comments events) and create a pipeline on the "
    f"default branch for each merge request comment holding a /ci-agent command. Reads "
    f"{SECRET_VARIABLE} and {TOKEN_VARIABLE} from the environment.")


def add_arguments(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1; 0.0.0.0 in a container)")
    serve.add_argument("--port", type=int, default=8080, help="port to listen on (default 8080)")
    serve.add_argument("--project", action="append", default=[], metavar="PATH_OR_ID",
                       help="serve only this project (repeatable; resolved to its id and path through "
                       "the API at startup); default: any project whose webhook knows the secret")
    serve.add_argument("--gitlab-url", default=None, metavar="URL",
                       help="the GitLab server (default: CI_AGENT_GITLAB_URL, CI_SERVER_URL, https://gitlab.com)")
    serve.set_defaults(handler=run_serve)


def gitlab_url(given: str | None, env: Mapping[str, str]) -> str:
    url = (given or env.get("CI_AGENT_GITLAB_URL") or env.get("CI_SERVER_URL") or "https://gitlab.com").rstrip("/")
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise UsageError(f"the GitLab URL must be http(s)://host, not {url[:80]!r}")
    return url


def resolve_projects(url: str, token: str, given: list[str]) -> dict[int, str]:
    """The allow-list as GitLab names it: {numeric id: path_with_namespace} for each `--project`
    (a path or an id), read once at startup. Pipelines are created only for these ids, whatever
    id a webhook payload claims."""
    from ci_agent.platforms.gitlab.forge import GitLabForge

    resolved: dict[int, str] = {}
    for name in dict.fromkeys(n.strip() for n in given if n.strip()):
        forge = GitLabForge(name, token, url=url, retry=RetryPolicy(max_attempts=5, max_total_wait_s=60))
        try:
            project_id, path = forge.project_identity()
        except ForgeError as error:
            if status_of(error) in (403, 404):
                raise UsageError(f"--project {name[:100]!r}: the token cannot see that project on {url} "
                                 f"({error})") from None
            raise
        resolved[project_id] = path
    return resolved


def pipeline_starter(url: str, token: str) -> Any:
    """`start(command) -> pipeline id`, one forge per project (cached, bounded)."""
    from ci_agent.platforms.gitlab.forge import GitLabForge

    forges: dict[int, GitLabForge] = {}
    lock = threading.Lock()

    def start(command: NoteCommand) -> int:
        with lock:
            forge = forges.get(command.project_id)
            if forge is None:
                if len(forges) >= _MAX_FORGES:
                    forges.clear()
                forge = forges[command.project_id] = GitLabForge(str(command.project_id), token, url=url)
        return start_command_pipeline(forge, command.mr_iid, command.note_id)
    return start


def run_serve(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    secret = env.get(SECRET_VARIABLE, "").strip()
    if not secret:
        raise UsageError(f"{SECRET_VARIABLE} is not set; the relay refuses to start without the secret "
                         "token the project webhook sends (Settings > Webhooks > Secret token)")
    if len(secret) < 16:
        raise UsageError(f"{SECRET_VARIABLE} is shorter than 16 characters; use a long random value")
    token = env.get(TOKEN_VARIABLE, "").strip()
    if not token:
        raise UsageError(f"{TOKEN_VARIABLE} is not set; the relay needs a project access token (api scope, "
                         "Developer role) to create pipelines")
    url = gitlab_url(args.gitlab_url, env)
    projects = resolve_projects(url, token, args.project)
    try:
        relay = Relay(secret, pipeline_starter(url, token), projects=projects, host=args.host,
                      port=args.port)
    except OSError as error:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {error.strerror or error}") from None
    host, port = relay.address
    served = ", ".join(f"{path} (id {pid})" for pid, path in sorted(projects.items())) or "any project"
    stderr_log(f"ci-agent relay listening on {host}:{port} for {served}, creating pipelines on {url}")
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    thread = threading.Thread(target=relay.serve_forever, name="ci-agent-relay", daemon=True)
    thread.start()
    stop.wait()
    stderr_log("ci-agent relay stopping")
    relay.shutdown()
    return 0
