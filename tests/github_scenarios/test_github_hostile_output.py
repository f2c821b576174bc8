"""`python -m ci_agent fix --github` in a child process on a hostile log with hostile model prose
(issue 12): nothing it prints is a workflow command the runner would run (both grammars), and
the fix PR's body, the status comment and the job summary, rendered as the forge renders them,
cannot mention anyone, load an image or carry raw HTML from the input."""

from __future__ import annotations

from tests.github_scenarios.harness import USER_TOKEN, World, timestamped
from tests.github_scenarios.steps import diff, the_status_comment, version
from tests.render.test_untrusted_md import HOSTILE, attack_surface
from tests.runner_grammar import CANARY, HOSTILE_LINES, hostile_commands
from tests.scenarios import model_scripts as model

PROSE = "\n\n".join(HOSTILE) + f"\n\n{HOSTILE_LINES[0]}\n##[add-path]/{CANARY}"


def test_hostile_log_and_model_prose_print_no_command_and_render_inert(world: World) -> None:
    world.inputs["github_token"] = USER_TOKEN
    red = world.ci("main")
    assertion = f"E   AssertionError: @octocat <img src=https://e.example/l.png> ##[set-env name={CANARY}]x"
    hostile_log = "\n".join([*HOSTILE_LINES, assertion]) + "\n"
    world.github.logs[red.job_id] = world.github.logs[red.job_id] + timestamped(hostile_log)
    world.api.reply(model.submit_patch(diff(version(world, "broken"), version(world, "fix")),
                                       summary=PROSE, root_cause=PROSE, assumptions=HOSTILE,
                                       open_questions=HOSTILE_LINES))

    run = world.after_ci(red, process=True)

    assert run.exit_code == 0, str(run)
    assert run.outputs.get("outcome") == "committed", str(run)
    assert CANARY in run.summary  # the hostile text is there, as text
    assert hostile_commands(run.stdout + "\n" + run.stderr) == []
    pull = world.fix_pull()
    status = the_status_comment(world, pull["number"])
    for where, markdown in (("job summary", run.summary), ("PR body", pull["body"]),
                            ("status comment", status["body"])):
        assert attack_surface(markdown) == ([], []), where
