"""Runner paths in what the model sees (issue 15, defect 9): the checkout's files repo-relative,
third-party files under a short placeholder, in the `llm` rendering only; the JSON report keeps
every path as printed. Inputs are real lines of the shared corpus where it has them."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET

import pytest

from ci_agent.distill import Input, distill, resolve_roots
from ci_agent.parsers import parse_path, parse_stream
from ci_agent.render import render
from ci_agent.render.shown_paths import MAX_PATHS_PER_TEXT, shown_path, shown_paths_in
from ci_agent.report import SourceInfo
from tests.conftest import shared_fixture

PHPUNIT = "dorny/fixtures/phpunit/phpunit-paths.xml"
SCALATEST = "enricomi/junit-xml/scalatest/TEST-uk.co.gresearch.spark.diff.DiffOptionsSuite.junit-xml"
PYTEST_JUNIT = "enricomi/junit-xml/pytest/junit.spark.integration.1.junit-xml"
MSTEST_TRX = "other/trx2junit/tests/trx2junit.Core.Tests/data/trx/mstest-warning.trx"


def shared_line(relative: str, needle: str) -> str:
    """The first line of a shared fixture that holds `needle`, as the file has it."""
    text = shared_fixture(relative).read_text(encoding="utf-8")
    return next(line for line in text.splitlines() if needle in line)


def attribute(line: str, name: str) -> str:
    found = re.search(rf'{name}="([^"]*)"', line)
    assert found is not None, line
    return found.group(1)


@pytest.mark.parametrize(("path", "root", "shown"), [
    ("/opt/hostedtoolcache/Python/3.11.9/x64/lib/python3.11/site-packages/requests/api.py", None,
     "<site-packages>/requests/api.py"),
    ("C:\\hostedtoolcache\\windows\\Python\\3.11.9\\x64\\Lib\\site-packages\\requests\\api.py", None,
     "<site-packages>/requests/api.py"),
    ("/usr/lib/python3/dist-packages/apt/cache.py", None, "<dist-packages>/apt/cache.py"),
    ("/opt/hostedtoolcache/Python/3.11.9/x64/lib/python3.11/unittest/case.py", None,
     "<stdlib>/unittest/case.py"),
    ("C:\\hostedtoolcache\\windows\\Python\\3.11.9\\x64\\Lib\\unittest\\case.py", None,
     "<stdlib>/unittest/case.py"),
    ("/home/runner/work/_temp/.venv/bin/python", None, "<venv>/bin/python"),
    ("/home/runner/work/_temp/3f1c.sh", None, "<runner-temp>/3f1c.sh"),
    # the checkout's own venv: its packages are third-party, the rest repo-relative
    ("/home/runner/work/repo/repo/.venv/lib/python3.11/site-packages/yaml/__init__.py",
     "/home/runner/work/repo/repo", "<site-packages>/yaml/__init__.py"),
    ("/home/runner/work/repo/repo/.venv/bin/python", "/home/runner/work/repo/repo", ".venv/bin/python"),
    ("/home/runner/work/repo/repo/src/app.py", "/home/runner/work/repo/repo", "src/app.py"),
    ("/builds/group/project/src/app.py", "/builds/group/project", "src/app.py"),
    ("D:\\a\\repo\\repo\\src\\App.cs", "D:\\a\\repo\\repo", "src/App.cs"),
    ("d:/A/Repo/repo/src/App.cs", "D:\\a\\repo\\repo", "src/App.cs"),  # Windows: either separator, any case
    ("/home/runner/work/repo/repo2/x.py", "/home/runner/work/repo/repo", "/home/runner/work/repo/repo2/x.py"),
    # Without a root (another job's log): GitHub's default checkout, its name twice, is still known.
    ("/home/runner/work/app/app/app/sync.py", None, "app/sync.py"),
    ("D:\\a\\Game\\Game\\Scripts\\Player.cs", "/work/repo", "Scripts/Player.cs"),
    ("/home/runner/work/repo/src/Fake.php", None, "/home/runner/work/repo/src/Fake.php"),  # not that layout
    ("/home/runner/work/_temp/_temp/x.sh", None, "<runner-temp>/_temp/x.sh"),
    ("/etc/ssl/certs/ca.pem", "/home/runner/work/repo/repo", "/etc/ssl/certs/ca.pem"),
    ("src/app.py", "/home/runner/work/repo/repo", "src/app.py"),
])
def test_shown_path(path: str, root: str | None, shown: str) -> None:
    assert shown_path(path, root) == shown


def test_real_runner_lines_of_the_shared_corpus_are_shortened() -> None:
    # A tool cache path of a GitHub runner (a JVM's system property in a scalatest report).
    java_home = attribute(shared_line(SCALATEST, '"java.home"'), "value")
    assert java_home == "/opt/hostedtoolcache/jdk/8.0.265/x64/jre"
    assert shown_path(java_home, None) == "<toolcache>/jdk/8.0.265/x64/jre"
    # The checkout itself, and a class path mixing it with a cache of the runner's home.
    user_dir = attribute(shared_line(SCALATEST, '"user.dir"'), "value")
    assert shown_path(user_dir + "/src/main/scala/Diff.scala", user_dir) == "src/main/scala/Diff.scala"
    # pytest's skip message pointing into a system Python's dist-packages.
    skipped = shared_line(PYTEST_JUNIT, "dist-packages/tensorflow_core/python/framework/test_util.py:2076")
    message = ET.fromstring(skipped.strip()).text or ""  # the line is a whole <skipped> element
    assert shown_paths_in(message, None) == (
        "<dist-packages>/tensorflow_core/python/framework/test_util.py:2076: Not a test.")
    # A GitLab Windows runner's build folder, given as the root.
    code_base = attribute(shared_line(MSTEST_TRX, "codeBase="), "codeBase")
    assert shown_paths_in(f"could not load {code_base}", "C:/builds/74762f22/0/project") == (
        "could not load bin/Release/project.DLL")


@pytest.mark.parametrize("text", [
    "assert 1 / 2 == 0.5", "see https://example.com/site-packages/x for details", "a/b/c and ./x/y",
    "10/12/2026", "no paths at all", "",
])
def test_text_without_absolute_paths_is_unchanged(text: str) -> None:
    assert shown_paths_in(text, "/home/runner/work/repo/repo") == text


def test_a_hostile_message_costs_a_bounded_number_of_path_rewrites() -> None:
    text = " /usr/lib/python3/dist-packages/x.py" * (MAX_PATHS_PER_TEXT + 10)
    shown = shown_paths_in(text, None)
    assert shown.count("<dist-packages>/x.py") == MAX_PATHS_PER_TEXT
    assert shown.count("/usr/lib/python3/dist-packages/x.py") == 10


def test_llm_shows_repo_relative_messages_and_json_keeps_them_as_printed() -> None:
    # The shared phpunit report prints runner paths in its failure messages.
    path = shared_fixture(PHPUNIT)
    result = parse_path(path)
    root = "/home/runner/work/repo"
    report = distill([Input(SourceInfo(str(path), result.format, path.stat().st_size), result)], root)
    llm = render(report, "llm")
    assert "/home/runner/work" not in llm
    assert "- SampleSuite.testStringFailure at src/Other.php:10\n    src/Other.php:10\n" in llm
    assert "at src/Paren.php(123)" in llm
    failures = json.loads(render(report, "json"))["tests"]["failures"]
    assert {f["message"] for f in failures} >= {"/home/runner/work/repo/src/Other.php:10",
                                                 "at /home/runner/work/repo/src/Paren.php(123)"}


# What a crash through a library prints on a GitHub runner (a Python traceback outside pytest).
RUNNER_TRACEBACK = """\
Run /home/runner/work/_temp/.venv/bin/python -m app.sync
Traceback (most recent call last):
  File "/home/runner/work/app/app/app/sync.py", line 12, in <module>
    main()
  File "/home/runner/work/app/app/app/sync.py", line 9, in main
    requests.get(URL, timeout=0)
  File "/opt/hostedtoolcache/Python/3.11.9/x64/lib/python3.11/site-packages/requests/api.py", line 73, in get
    return request("get", url, params=params, **kwargs)
ValueError: Attempted to set connect timeout to 0, but the timeout cannot be set to a value less than \
or equal to 0.
"""


def test_a_third_party_frame_is_shown_short_to_the_model_and_raw_in_json() -> None:
    result = parse_stream(io.BytesIO(RUNNER_TRACEBACK.encode()), "sync.log", None)
    command = "/home/runner/work/_temp/.venv/bin/python -m app.sync"  # a command's output is named by it
    source = SourceInfo(command, result.format, len(RUNNER_TRACEBACK))
    inputs = [Input(source, result)]
    # In CI the checkout ci-agent runs in is the workspace (GITHUB_WORKSPACE): the git root.
    (root,) = resolve_roots(inputs, None, "/home/runner/work/app/app")
    assert root == "/home/runner/work/app/app"
    report = distill(inputs, root)
    llm = render(report, "llm")
    assert "<site-packages>/requests/api.py(73): error ValueError" in llm
    assert "inputs: <venv>/bin/python -m app.sync (pytest_console," in llm
    assert "/opt/hostedtoolcache" not in llm and "/home/runner" not in llm
    assert 'File "app/sync.py", line 9, in main' in llm  # the traceback detail: repo-relative
    (diag,) = json.loads(render(report, "json"))["diagnostics"]
    assert json.loads(render(report, "json"))["sources"][0]["path"] == command
    assert diag["file"] == ("/opt/hostedtoolcache/Python/3.11.9/x64/lib/python3.11/site-packages/"
                            "requests/api.py")
