"""`ci-agent doctor`: what a repository's ci-agent setup lacks, checked without the network.

Offline: the config is valid, git is there, `origin` is on GitHub, the workflows exist and run
ci-agent, the CI workflow they dispatch accepts `workflow_dispatch`, which secrets they name.
With a token (`GITHUB_TOKEN` / `GH_TOKEN`) and `GITHUB_API_URL`, one API call tells which kind of
token it is and what follows from it: pushes made with the Actions token start no CI.

`--gitlab` (offline only): `.gitlab-ci.yml` includes ci-agent (and which version); inside a job
(`GITLAB_CI=true`), whether the variables reached it, and why not: protected variables are only
given to pipelines of protected refs, so a key kept protected is missing on `ci-agent/fix/*`
unless that wildcard is protected. Also what the job token cannot do.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ci_agent import __version__, proc, sandbox
from ci_agent.cli.workflows import (
    GITLAB_CI_FILE,
    GITLAB_DISTILL_INPUTS,
    GITLAB_FIX_INPUTS,
    WorkflowFile,
    by_file_name,
    ci_workflows,
    read_gitlab_ci,
    read_workflows,
)
from ci_agent.config import CONFIG_FILE
from ci_agent.config.load import load_settings
from ci_agent.errors import CiAgentError, UsageError
from ci_agent.platforms.gitlab.env import TOKEN_VARIABLE

OK, INFO, WARN, FAIL = "ok", "info", "warn", "FAIL"
_API_TIMEOUT_S = 10
# Token prefixes GitHub documents (https://github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/).
_USER_TOKEN_PREFIXES = {"ghp_": "a classic personal access token",
                        "github_pat_": "a fine-grained personal access token",
                        "gho_": "an OAuth token", "ghu_": "a GitHub App user token"}
_INSTALLATION_PREFIX = "ghs_"
_GITHUB_REMOTE_RE = re.compile(r"^(?:https?://(?:[^@/]+@)?|ssh://git@|git@)([^/:]+)[/:]([^/]+)/(.+?)(?:\.git)?/?$")


@dataclass(frozen=True)
class Check:
    status: str
    topic: str
    message: str

    def line(self) -> str:
        return f"{self.status:<4}  {self.topic}: {self.message}"


HELP = "check this repository's ci-agent setup (offline; one API call with a token)"
DESCRIPTION = ("Check the config, git, the GitHub remote, the workflows, workflow_dispatch on the "
    "CI workflow and the secrets the workflows need. With GITHUB_TOKEN or GH_TOKEN and GITHUB_API_URL "
    "set, also which kind of token it is and whether its pushes start CI.")


def add_arguments(doctor: argparse.ArgumentParser) -> None:
    doctor.add_argument("--repo", metavar="DIR", default=".", help="the repository root (default: .)")
    doctor.add_argument("--gitlab", action="store_true",
                        help="check a GitLab setup: .gitlab-ci.yml includes ci-agent; inside a job, the "
                        "CI/CD variables and the protected-variable pitfall (the default with a "
                        ".gitlab-ci.yml and no .github/workflows)")


def run_doctor(args: argparse.Namespace) -> int:
    root = Path(args.repo)
    if not root.is_dir():
        raise UsageError(f"--repo {args.repo}: no such directory")
    gitlab = args.gitlab or is_gitlab_setup(root)
    checks = diagnose_gitlab(root, os.environ) if gitlab else diagnose(root, os.environ)
    for check in checks:
        print(check.line())
    failed = sum(c.status == FAIL for c in checks)
    warned = sum(c.status == WARN for c in checks)
    print(f"{failed} problem(s), {warned} warning(s)")
    return 1 if failed else 0


def diagnose(root: Path, env: Mapping[str, str]) -> list[Check]:
    checks = [check_config(root), *check_git(root), check_sandbox()]
    checks += check_workflows(root)
    token_check = check_token(env)
    if token_check is not None:
        checks.append(token_check)
    return checks


# --------------------------------------------------------------------------- offline checks


def check_config(root: Path) -> Check:
    if not (root / CONFIG_FILE).exists():
        return Check(INFO, "config", f"no {CONFIG_FILE}: defaults apply (`ci-agent init` writes a starter)")
    try:
        load_settings(root, env={})
    except CiAgentError as exc:
        return Check(FAIL, "config", str(exc))
    return Check(OK, "config", f"{CONFIG_FILE} is valid")


def check_sandbox() -> Check:
    """How build/verify commands (code a model patched) will run here; read-only (the sandbox
    user is created by the first run that needs it, not by doctor)."""
    if not sandbox.privilege_drop_possible():
        return Check(WARN, "sandbox", sandbox.no_drop_note())
    return Check(OK, "sandbox", sandbox.drop_description())


def _git(root: Path, *argv: str) -> proc.Result | None:
    try:
        return proc.run(["git", "-C", str(root), *argv], timeout=30)
    except (OSError, CiAgentError):
        return None


def check_git(root: Path, *, gitlab: bool = False) -> list[Check]:
    version = _git(root, "--version")
    if version is None or version.returncode != 0:
        return [Check(FAIL, "git", "git is not installed or does not run")]
    checks = [Check(OK, "git", version.stdout.strip())]
    inside = _git(root, "rev-parse", "--is-inside-work-tree")
    if inside is None or inside.stdout.strip() != "true":
        return [*checks, Check(FAIL, "git", f"{root} is not a git work tree")]
    remote = _git(root, "remote", "get-url", "origin")
    if remote is None or remote.returncode != 0:
        return [*checks, Check(FAIL, "remote", "no remote `origin`: ci-agent pushes the fix branch there")]
    url = remote.stdout.strip()
    checks.append(check_gitlab_remote(url) if gitlab else check_remote(url))
    return checks


def check_remote(url: str) -> Check:
    shown = re.sub(r"//[^@/]+@", "//***@", url)  # never print credentials kept in a URL
    match = _GITHUB_REMOTE_RE.match(url)
    if match is None:
        return Check(WARN, "remote", f"origin {shown} is not a GitHub URL ci-agent recognises")
    host, owner, repo = match.groups()
    if host.lower() != "github.com" and "github" not in host.lower():
        return Check(WARN, "remote", f"origin is on {host}, not GitHub (a GitHub Enterprise host is fine)")
    return Check(OK, "remote", f"origin is GitHub repository {owner}/{repo}")


def check_workflows(root: Path) -> list[Check]:
    workflows = read_workflows(root)
    checks = [Check(FAIL, "workflow", f"{w.path}: {w.error}") for w in workflows if w.error]
    ours = [w for w in workflows if not w.error and w.uses_ci_agent()]
    if not ours:
        return [*checks, Check(FAIL, "workflows", "no workflow in .github/workflows runs ci-agent "
                               "(`ci-agent init` writes them)")]
    names = {w.name for w in workflows}
    for workflow in ours:
        checks.append(Check(OK, "workflow", f"{workflow.path} runs ci-agent"))
        checks += _version_checks(workflow.path, workflow.ci_agent_refs())
        for watched in workflow.watched():
            if watched not in names:
                checks.append(Check(FAIL, "workflow", f"{workflow.path} watches workflow {watched!r}, "
                                    "but no workflow has that name"))
        checks += _dispatch_checks(workflows, workflow.path, workflow.ci_agent_steps(), workflow.watched())
    secrets = sorted({s for w in ours for s in w.secrets()})
    if secrets:
        checks.append(Check(INFO, "secrets", f"the workflows read {', '.join(secrets)}: set them under "
                            "Settings > Secrets and variables > Actions (not checkable offline)"))
    if not any("ANTHROPIC_API_KEY" in w.text for w in ours):
        checks.append(Check(WARN, "secrets", "no workflow passes ANTHROPIC_API_KEY to anthropic_api_key"))
    return checks


def _version_checks(path: Path, refs: Sequence[str]) -> list[Check]:
    stale = sorted({r for r in refs if r.removeprefix("v") != __version__})
    if stale:
        return [Check(WARN, "version",
                      f"{path} uses ci-agent {', '.join(stale)}; this ci-agent is {__version__}")]
    return []


def _dispatch_checks(workflows: Sequence[WorkflowFile], path: Path, steps: Sequence[Mapping[str, Any]],
                     watched: Sequence[str]) -> list[Check]:
    """The CI workflow ci-agent dispatches on the fix branch must accept workflow_dispatch, or a
    push with GITHUB_TOKEN leaves the fix unverified until someone starts CI by hand."""
    checks: list[Check] = []
    for inputs in steps:
        target = str(inputs.get("ci_workflow") or "").strip()
        if not target:
            checks.append(Check(WARN, "dispatch", f"{path}: no ci_workflow input: with GITHUB_TOKEN, CI on "
                                "the fix branch must be started by hand"))
            continue
        if "${{" in target:
            checks.append(Check(INFO, "dispatch", f"{path}: ci_workflow is an expression; not checked"))
            continue
        ci = by_file_name(workflows, target)
        if ci is None:
            checks.append(Check(FAIL, "dispatch",
                                f"{path}: ci_workflow {target} is not in .github/workflows"))
        elif "workflow_dispatch" not in ci.triggers:
            checks.append(Check(FAIL, "dispatch", f"{ci.path} has no workflow_dispatch trigger: ci-agent "
                                "cannot re-run CI on the fix branch after a GITHUB_TOKEN push (add "
                                "`workflow_dispatch:` under `on:`, or push with a GitHub App token or PAT)"))
        else:
            checks.append(Check(OK, "dispatch", f"{ci.path} accepts workflow_dispatch"))
        if watched and ci is not None and ci.name not in watched:
            checks.append(Check(WARN, "dispatch", f"{path}: ci_workflow {target} is not among the watched "
                                f"workflows ({', '.join(watched)})"))
    if not steps and not ci_workflows(workflows):
        checks.append(Check(WARN, "dispatch", "no CI workflow found"))
    return checks


# --------------------------------------------------------------------------- the token


def token_kind(token: str) -> str:
    """What the prefix says: `user`, `installation` (the Actions GITHUB_TOKEN or a GitHub App),
    or `unknown` (an old-format or enterprise token)."""
    if any(token.startswith(p) for p in _USER_TOKEN_PREFIXES):
        return "user"
    if token.startswith(_INSTALLATION_PREFIX):
        return "installation"
    return "unknown"


def _probe_user(api_url: str, token: str) -> tuple[int | None, str]:
    """`GET /user`: 200 and a login for a user's token, 403 for installation tokens, 401 for a bad one."""
    request = urllib.request.Request(api_url.rstrip("/") + "/user", headers={
        "Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
        "User-Agent": f"ci-agent/{__version__}", "X-GitHub-Api-Version": "2022-11-28"})
    try:
        with urllib.request.urlopen(request, timeout=_API_TIMEOUT_S) as response:
            body = json.loads(response.read(1_000_000) or b"{}")
            return response.status, str(body.get("login", "")) if isinstance(body, dict) else ""
    except urllib.error.HTTPError as exc:
        return exc.code, ""
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return None, str(getattr(exc, "reason", exc))


_ACTIONS_TOKEN_CONSEQUENCE = ("its pushes start no workflow run, so ci-agent dispatches ci_workflow on the "
                              "fix branch (it needs workflow_dispatch); a GitHub App token or PAT in "
                              "CI_AGENT_TOKEN starts CI by itself")


def check_token(env: Mapping[str, str]) -> Check | None:
    variable = next((v for v in ("GITHUB_TOKEN", "GH_TOKEN") if env.get(v, "").strip()), None)
    if variable is None:
        return None
    token = env[variable].strip()
    kind = token_kind(token)
    in_actions = env.get("GITHUB_ACTIONS") == "true"
    if kind == "user":
        what = next(label for p, label in _USER_TOKEN_PREFIXES.items() if token.startswith(p))
        verdict = f"{variable} is {what}: its pushes start CI"
    elif kind == "installation" and variable == "GITHUB_TOKEN" and in_actions:
        verdict = f"{variable} is the workflow's Actions token: {_ACTIONS_TOKEN_CONSEQUENCE}"
    elif kind == "installation":
        verdict = (f"{variable} is an installation token: a GitHub App token starts CI; if it is a "
                   f"workflow's GITHUB_TOKEN, {_ACTIONS_TOKEN_CONSEQUENCE}")
    else:
        verdict = f"{variable} has no known prefix; its kind cannot be told offline"
    api_url = env.get("GITHUB_API_URL", "").strip()
    if not api_url:
        return Check(INFO, "token", verdict + " (set GITHUB_API_URL to confirm with the API)")
    status, detail = _probe_user(api_url, token)
    if status is None:
        return Check(WARN, "token", f"{verdict}; the API at {api_url} did not answer ({detail})")
    if status == 401:
        return Check(FAIL, "token", f"{variable} is rejected by {api_url} (401 Bad credentials)")
    if status == 200:
        return Check(OK, "token", f"{variable} acts as user {detail or '?'}: a personal or user token, its "
                     "pushes start CI")
    if status == 403 and kind != "user":
        return Check(OK, "token", verdict + " (confirmed: the API treats it as an integration)")
    return Check(WARN, "token", f"{verdict}; GET /user answered {status}")


# --------------------------------------------------------------------------- GitLab

FIX_BRANCHES = "ci-agent/fix/*"
_PROTECTED_HINT = ("protected variables only reach pipelines of protected branches and tags (not merge "
                   "request pipelines, by default): uncheck \"Protect variable\" on it, or protect the "
                   f"wildcard {FIX_BRANCHES} under Settings > Repository > Protected branches, allowing "
                   "Developers to push and merge there (the token's role)")


def is_gitlab_setup(root: Path) -> bool:
    """Without --gitlab: a `.gitlab-ci.yml` and no GitHub workflows (the files decide, not the CI
    running doctor)."""
    return (root / GITLAB_CI_FILE).is_file() and not (root / ".github" / "workflows").is_dir()


def diagnose_gitlab(root: Path, env: Mapping[str, str]) -> list[Check]:
    return [check_config(root), *check_git(root, gitlab=True), check_sandbox(), *check_gitlab_ci(root),
            *check_gitlab_job(env)]


def check_gitlab_remote(url: str) -> Check:
    shown = re.sub(r"//[^@/]+@", "//***@", url)
    match = _GITHUB_REMOTE_RE.match(url)
    if match is None:
        return Check(WARN, "remote", f"origin {shown} is not a URL ci-agent recognises")
    host, owner, repo = match.groups()
    if host.lower() == "github.com":
        return Check(WARN, "remote", "origin is on github.com, not GitLab (`ci-agent doctor` checks GitHub)")
    return Check(OK, "remote", f"origin is {host}/{owner}/{repo}")


def check_gitlab_ci(root: Path) -> list[Check]:
    ci = read_gitlab_ci(root)
    if not ci.exists:
        return [Check(FAIL, "gitlab-ci", f"no {GITLAB_CI_FILE}: `ci-agent init --forge gitlab` writes one")]
    if ci.error:
        return [Check(FAIL, "gitlab-ci", ci.error)]
    if not ci.includes_fix():
        return [Check(FAIL, "gitlab-ci", f"{GITLAB_CI_FILE} does not include ci-agent: add pipelines/gitlab/"
                      "ci-agent.yml to its `include:` (`ci-agent init --forge gitlab` prints the lines)")]
    checks: list[Check] = []
    for include in ci.includes:
        checks.append(Check(OK, "gitlab-ci", f"{GITLAB_CI_FILE} includes {include.file} ({include.source})"))
        if include.version and include.version != __version__:
            checks.append(Check(WARN, "version", f"{include.source} is ci-agent {include.version}; "
                                f"this ci-agent is {__version__}"))
        known = GITLAB_FIX_INPUTS if include.file == "ci-agent.yml" else GITLAB_DISTILL_INPUTS
        unknown = sorted(set(include.inputs) - set(known))
        if unknown:
            checks.append(Check(FAIL, "gitlab-ci", f"{include.file} has no input {', '.join(unknown)}: "
                                f"GitLab refuses the pipeline (inputs: {', '.join(known)})"))
    checks += [Check(OK, "gitlab-ci", f"job {name} runs ci-agent fix --gitlab") for name in ci.inline_jobs]
    if not ci.includes_distill():
        checks.append(Check(INFO, "gitlab-ci", "ci-agent-distill.yml is not included: GitLab shows no TRX "
                            "results in merge requests without it"))
    return checks


def check_gitlab_job(env: Mapping[str, str]) -> list[Check]:
    """Inside a GitLab job: did the variables arrive, and if not, why."""
    if env.get("GITLAB_CI") != "true":
        return [Check(INFO, "variables", "not inside a GitLab job: run `ci-agent doctor --gitlab` in a job "
                      "to check ANTHROPIC_API_KEY and CI_AGENT_GITLAB_TOKEN")]
    ref = env.get("CI_COMMIT_REF_NAME", "?")
    protected = env.get("CI_COMMIT_REF_PROTECTED") == "true"
    where = f"{ref} is {'a protected' if protected else 'an unprotected'} ref"
    checks = []
    if env.get("ANTHROPIC_API_KEY", "").strip():
        checks.append(Check(OK, "variables", "ANTHROPIC_API_KEY is set"))
        if protected:
            checks.append(Check(INFO, "variables", f"{where}: if ANTHROPIC_API_KEY is a protected variable, "
                                f"the pipelines of {FIX_BRANCHES} will not get it unless that wildcard is "
                                "protected too"))
    elif protected:
        checks.append(Check(FAIL, "variables", f"ANTHROPIC_API_KEY is not set in this job ({where}): add it "
                            "under Settings > CI/CD > Variables, masked"))
    else:
        checks.append(Check(FAIL, "variables", f"ANTHROPIC_API_KEY is not set in this job: {where}, and "
                            f"{_PROTECTED_HINT}"))
    if env.get(TOKEN_VARIABLE, "").strip():
        checks.append(Check(OK, "token", "CI_AGENT_GITLAB_TOKEN is set: ci-agent pushes, opens the merge "
                            "request and writes its note with it"))
    else:
        hint = "" if protected else f" (if you did set it: {where}, and {_PROTECTED_HINT})"
        checks.append(Check(WARN, "token", "CI_AGENT_GITLAB_TOKEN is not set, so ci-agent uses CI_JOB_TOKEN: "
                            "the job token cannot create merge requests or notes, and its push starts no "
                            "pipeline (ci-agent creates one); set CI_AGENT_GITLAB_TOKEN to a project access "
                            f"token with the api and write_repository scopes and the Developer role{hint}"))
    return checks
