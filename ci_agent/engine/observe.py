"""The first observations of a CI cycle, up to the fix branch (DESIGN.md §4.3): who started the run,
the trusted configuration, which branch is fixed and where our marker lives, whether
`/ci-agent stop` holds. The cycle either stops here (a `Result`) or goes on with a `Cycle`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ci_agent.config import Settings
from ci_agent.engine import state, texts
from ci_agent.engine.budget import assess
from ci_agent.engine.cycle import IN_PLACE_PREFIX, Cycle, Result, Run, repo_root
from ci_agent.engine.decide import Situation
from ci_agent.engine.escalation import commit_record
from ci_agent.engine.forge import ChangeRequest, Forge, Permission
from ci_agent.engine.marker import ChainLink, ForgeState, events, fetch_fix_branch
from ci_agent.engine.trusted import cycle_config
from ci_agent.engine.types import Trigger
from ci_agent.errors import ExitCode, UsageError


def open_cycle(run: Run) -> Cycle | Result:
    token = run.platform.token()
    repo = repo_root(run.platform.workspace)
    forge = run.platform.forge(token)
    trig = run.trig
    # Who pushed a same-repository branch had write access; the check matters for the source
    # branch's run. Runs on our fix branch were started by our own pushes (an App bot has no
    # collaborator permission), so they are not checked; nor is a run's next attempt that we
    # started (the flaky check's re-run of failed jobs: its first attempt was checked then).
    if (trig.kind in ("workflow_run", "pipeline") and trig.actor and not trig.on_fix_branch
            and not _our_rerun(trig, forge)):
        level = forge.permission(trig.actor)
        if level < Permission.WRITE:
            return Result("refused", ExitCode.OK, f"{trig.actor} has {level.name.lower()} "
                          "permission on this repository; ci-agent only acts for people with "
                          "write access (Developer or more on GitLab)", trig.branch)
    settings = _settings(run, repo, forge, token)
    if run.in_place:
        return _in_place_cycle(run, repo, settings, forge, token)
    return _fix_branch_cycle(run, repo, settings, forge, token)


def _our_rerun(trig: Trigger, forge: Forge) -> bool:
    """A later attempt of a run, started by our own token (GitHub names who re-ran it)."""
    return trig.run_attempt not in ("", "1") and trig.actor.lower() == forge.own_login().lower()


def _settings(run: Run, repo: Path, forge: Forge, token: str) -> Settings:
    """The default branch's configuration, never the failing branch's (engine/trusted.py)."""
    settings, note = cycle_config(repo, run.env, run.inputs, run.trig, forge.default_branch(),
                                  run.platform.push_auth(repo, token), run.words)
    run.config_note = run.redact(note)
    return settings


def _fix_branch_cycle(run: Run, repo: Path, settings: Settings, forge: Forge, token: str) -> Cycle | Result:
    trig = run.trig
    fix_branch = trig.branch if trig.on_fix_branch else state.fix_branch_for(trig.branch)
    pr = forge.find_change_request(fix_branch)
    own: ChangeRequest | None = None
    if not trig.on_fix_branch and trig.pr_number is None and not run.command:
        # An inline step of a push run knows no pull request: the failing branch's own one
        # (if any) holds the marker until a fix one exists, and the escalation if none ever does.
        own = forge.find_change_request(trig.branch)
        if own is not None and not own.fork:
            run.trig = trig = replace(trig, pr_number=own.number)
    # Our marker lives on the fix PR; before there is one, on the source PR (if any); with
    # neither, only an escalation leaves one: on the failing commit (`escalation`).
    holder = pr.number if pr else trig.pr_number
    marker = (ForgeState.from_json(forge.read_status_state(holder)) if holder
              else commit_record(run, forge, settings))
    source = trig.branch
    if trig.on_fix_branch:
        source = marker.source_branch or (pr.target_branch if pr else "")
        if not source:
            return Result("skipped", ExitCode.OK, f"{fix_branch} has no open fix "
                          f"{run.words.change_request}, so the branch it fixes is unknown; "
                          "nothing to do", fix_branch)
    paused = pr if pr is not None and texts.PAUSED_LABEL in pr.labels else None
    if paused is None and not trig.on_fix_branch and not run.command:
        # `/ci-agent stop` on the person's change request, before any fix one exists
        if own is None and trig.pr_number is not None:
            own = forge.find_change_request(trig.branch)
        paused = own if own is not None and texts.PAUSED_LABEL in own.labels else None
    if paused is not None and not run.command and not trig.on_fix_branch:
        return Result("skipped", ExitCode.OK, f"{run.words.ref(paused.number)} is labelled "
                      f"{texts.PAUSED_LABEL}; no automatic attempts", fix_branch, pr=pr)
    if fix_branch == forge.default_branch() or (forge.protected(fix_branch)
                                                and not run.platform.protected_fix_branch_ok):
        raise UsageError(f"{fix_branch} is the default or a protected branch; ci-agent never "
                         "pushes there")
    auth = run.platform.push_auth(repo, token)
    remote_tip = fetch_fix_branch(repo, fix_branch)
    marker = replace(marker, fix_branch=fix_branch, source_branch=source)
    return Cycle(repo, settings, forge, token, source, fix_branch, pr, marker, remote_tip, auth,
                 paused=None if run.command else paused)


def _in_place_cycle(run: Run, repo: Path, settings: Settings, forge: Forge, token: str) -> Cycle | Result:
    """Modes push and propose: the failing branch is the one fixed, through its own open
    change request (which holds the status comment). Push never writes to the default or a
    protected branch; propose writes nothing but the comment."""
    branch, mode, cr = run.trig.branch, run.inputs.mode, run.words.change_request
    pr = forge.find_change_request(branch)
    if pr is None and mode == "push":
        return Result("skipped", ExitCode.OK, f"mode push commits onto the failing {cr}'s branch, "
                      f"and {branch} has no open {cr}; nothing was done (mode pr opens a fix {cr})",
                      branch)
    if mode == "push" and (branch == forge.default_branch() or forge.protected(branch)):
        return Result("skipped", ExitCode.OK, f"mode push never pushes to the default or a "
                      f"protected branch ({branch}); use mode pr there", branch, pr=pr)
    paused = pr if pr is not None and texts.PAUSED_LABEL in pr.labels and not run.command else None
    marker = ForgeState.from_json(forge.read_status_state(pr.number) if pr else None)
    marker = replace(marker, fix_branch=branch, source_branch=branch)
    return Cycle(repo, settings, forge, token, branch, branch, pr, marker, fetch_fix_branch(repo, branch),
                 run.platform.push_auth(repo, token), IN_PLACE_PREFIX + state.sanitise_branch(branch),
                 paused)


def pending(chain: list[ChainLink], marker: ForgeState) -> bool:
    """The tip is an attempt CI has not decided yet."""
    tip = chain[-1] if chain else None
    return tip is not None and tip.attempt is not None and tip.key not in marker.results


def situation(run: Run, cycle: Cycle, chain: list[ChainLink]) -> Situation:
    """What the cycle knows before it reads the failure (`decide.Situation`)."""
    trig = run.trig
    return Situation(command=run.command, explain=run.explain, observing=run.observing,
                     handled=bool(trig.run_id) and trig.run_id in cycle.marker.runs, failed=trig.failed,
                     concluded=trig.conclusion == "success", paused=cycle.paused is not None,
                     has_change_request=cycle.pr is not None, tip_pending=pending(chain, cycle.marker),
                     exhausted=exhausted(run, cycle, chain))


def exhausted(run: Run, cycle: Cycle, chain: list[ChainLink]) -> bool:
    return assess(events(chain, cycle.marker), run.inputs.max_attempts).exhausted
