"""Untrusted text in Markdown we post cannot ping, load an image or inject HTML (issue 12).

Each hostile input is rendered the way the forge renders it (markdown-it-py's GFM-like preset,
raw HTML allowed, as GitHub's and GitLab's renderers allow a safe subset of it) and the HTML is
read back as an attacker would hope to see it: an `<img>` with a remote source, a raw tag taken
from the input, or a text-node `@name` that the forge's mention filter would turn into a ping.
"""

from __future__ import annotations

import html.parser
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from ci_agent.engine import texts
from ci_agent.engine.attempt import AttemptLog, Outcome, Plan
from ci_agent.engine.budget import AttemptRecord, AttemptResult
from ci_agent.engine.runner import Result
from ci_agent.engine.runner import summary as job_summary
from ci_agent.engine.summary import summary_markdown
from ci_agent.errors import ExitCode
from ci_agent.llm.types import ModelSettings, PatchProposal, Usage
from ci_agent.platforms.github.words import GITHUB_WORDS
from ci_agent.render.untrusted import untrusted_md, untrusted_md_line

HOSTILE = [
    "cc @octocat and @github/security-team, also @all and @_group-x and @a.b",
    "![pixel](https://evil.example/t.png?u=1) and [![x](https://evil.example/b.svg)](https://x)",
    "![ref-img][r]\n\n[r]: https://evil.example/ref.png\n\n![r]",
    "<img src=https://evil.example/i.png> <IMG SRC='//evil.example/j.png'>",
    "<details open><summary>click</summary>hidden</details>",
    "<a href=\"https://evil.example\">docs</a> <script>alert(1)</script>",
    "<!-- ci-agent:v1 {\"attempts\": 0} --> text after a fake marker",
    "&#64;octocat &#x40;hubot &commat;monalisa &#60;img src=https://evil.example/e.png&#62;",
    "<https://evil.example/auto.png> https://evil.example/bare.png",
    "<picture><source srcset=https://evil.example/p.png></picture><video src=https://e.example/v>",
    "line one\n```\n<img src=https://evil.example/in-open-fence.png>\n",
    "~~~\nunclosed tilde fence @octocat",
    "@\u200boctocat zero width already, @\u2060hubot word joiner, \uff20fullwidth",
    "<\u200bimg src=https://evil.example/zw.png>",
    "- item\n  ```\n  code\n  ```\n<img src=https://evil.example/after-list-fence.png>",
    "> ```\n> quoted fence\n<img src=https://evil.example/after-quote.png>",
    "    indented code <b>x</b>\n<b>bold via html</b>",
    "`code @octocat <b>` then @octocat",
]

_MD = MarkdownIt("gfm-like")


class _Html(html.parser.HTMLParser):
    """Collects tags and the text GitHub's mention filter would scan (not in code, pre or a)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scanned: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in ("code", "pre", "a"):
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("code", "pre", "a") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.scanned.append(data)


# GitHub: `@` not after a word character, then a login (or org/team); GitLab: the same shape.
_MENTION_RE = re.compile(r"(?<![\w`])@[A-Za-z0-9_](?:[\w.-]*[\w-])?(?:/[\w.-]*[\w-])?")
_OURS = {"p", "pre", "code", "a", "ul", "li", "ol", "h1", "h2", "h3", "h4", "strong", "em",
         "blockquote", "hr", "br", "table", "thead", "tbody", "tr", "th", "td", "del", "s"}


def attack_surface(markdown: str) -> tuple[list[str], list[str]]:
    """(problems, mentions) of the HTML the forge would show for `markdown`."""
    parser = _Html()
    parser.feed(_MD.render(markdown))
    problems = []
    for tag, attrs in parser.tags:
        if tag == "img":
            problems.append(f"image {attrs.get('src')}")
        elif tag not in _OURS:
            problems.append(f"raw tag <{tag}>")
    mentions = [m for text in parser.scanned for m in _MENTION_RE.findall(text)]
    return problems, mentions


def test_the_renderer_used_here_does_show_each_attack_unprotected() -> None:
    # The check below is only worth something if the raw inputs do ping, load and inject.
    problems, mentions = attack_surface("\n\n".join(HOSTILE))
    assert "@octocat" in mentions and "@all" in mentions
    assert any(p.startswith("image https://evil.example/t.png") for p in problems)
    assert "raw tag <script>" in problems and "raw tag <details>" in problems


@pytest.mark.parametrize("text", HOSTILE)
def test_untrusted_block_cannot_ping_load_or_inject(text: str) -> None:
    problems, mentions = attack_surface(untrusted_md(text))
    assert problems == [] and mentions == []


@pytest.mark.parametrize("text", HOSTILE)
def test_untrusted_line_cannot_ping_load_or_inject(text: str) -> None:
    line = untrusted_md_line(text)
    assert "\n" not in line
    problems, mentions = attack_surface(line)
    assert problems == [] and mentions == []


@pytest.mark.parametrize("text", HOSTILE)
def test_untrusted_text_cannot_swallow_our_markup_after_it(text: str) -> None:
    html_out = _MD.render(untrusted_md(text) + "\n\n### ours\n")
    assert "<h3>ours</h3>" in html_out


def test_no_html_comment_survives_in_the_raw_text() -> None:
    out = untrusted_md("a <!-- ci-agent:v1 {} -->\n```\n<!-- ci-agent:v1 {} -->\n```\n<!--open")
    assert "<!--" not in out


def test_prose_still_reads_as_written() -> None:
    text = ("The test `test_parse` fails because `parse()` returns **None** for an empty list.\n\n"
            "- see [the docs](https://docs.python.org/3/)\n- a < b & c > d\n\n"
            "```python\n@pytest.fixture\ndef x() -> list[int]:\n    return [1] if a<b else []\n```\n")
    out = untrusted_md(text)
    visible = out.replace("\u2060", "")
    assert visible == text.rstrip("\n") + "\n"
    # Code inside a top-level fence is copied as written, without invisible characters.
    assert "@pytest.fixture\ndef x() -> list[int]:\n    return [1] if a<b else []" in out
    rendered = _MD.render(out)
    assert '<a href="https://docs.python.org/3/">the docs</a>' in rendered
    assert "<strong>None</strong>" in rendered


def test_idempotent() -> None:
    for text in HOSTILE:
        once = untrusted_md(text)
        assert untrusted_md(once) == once
        assert untrusted_md_line(untrusted_md_line(text)) == untrusted_md_line(text)


# ------------------------------------------------------------ our real comments and summaries

PROSE = "\n\n".join(HOSTILE)


def _hostile_outcome(tmp_path: Path) -> tuple[Outcome, Plan]:
    proposal = PatchProposal(diff="--- a/x\n+++ b/x\n@@ -1 +1 @@\n-<!-- a -->\n+@octocat <img>\n",
                             summary=PROSE, root_cause=PROSE, confidence=0.5, raw_confidence=0.9,
                             assumptions=tuple(HOSTILE), open_questions=tuple(HOSTILE),
                             gate_notes=("@octocat <img src=https://evil.example/g.png>",))
    log = AttemptLog(1, "fp", Usage(10, 5), 1, (), proposal, give_up=PROSE, files=("<b>x</b>.py",),
                     diff=proposal.diff, commit="0123456789abcdef")
    outcome = Outcome("committed", ExitCode.OK, "ci-agent/<img/src=https://evil.example/b.png>",
                      message=PROSE, attempts=[log], worktree=tmp_path / "@octocat")
    plan = Plan(tmp_path, "feature/@octocat<b>", "ci-agent/x", ModelSettings("m"))
    return outcome, plan


def test_job_summary_with_hostile_model_prose_and_logs_renders_inert(tmp_path: Path) -> None:
    outcome, plan = _hostile_outcome(tmp_path)
    details = summary_markdown(outcome, plan)
    result = Result("committed", ExitCode.OK, PROSE, "ci-agent/x", 1, None, 15, details, None)
    page = job_summary(result, GITHUB_WORDS)
    problems, mentions = attack_surface(page)
    assert problems == [] and mentions == []
    assert "<h1>ci-agent fix:" in _MD.render(page)  # our own Markdown still works


def test_status_comment_with_hostile_lines_renders_inert_and_keeps_our_markup() -> None:
    asked = texts.Markup("Asked by @maintainer.")
    body = texts.status_text("attempt 1 pushed, waiting for CI", "ci-agent/<b>x</b>", "@octocat",
                             None, [PROSE, asked, texts.explanation_text(PROSE, PROSE, HOSTILE, HOSTILE, .5),
                                    texts.proposal_block("+<!-- keep -->\n+@octocat\n")], 42)
    problems, mentions = attack_surface(body)
    assert problems == []
    assert mentions == ["@maintainer"]  # the deliberate ping of the person who asked
    # the proposal block is byte for byte what `/ci-agent apply` reads back
    assert texts.extract_proposal(body) == "+<!-- keep -->\n+@octocat\n"


def test_escalation_comment_with_hostile_summaries_renders_inert() -> None:
    failures = [AttemptRecord(n, AttemptResult.FAILED, "fp", after="@octocat <img src=https://e.example/f>",
                              summary=PROSE) for n in (1, 2, 3)]
    body = texts.escalation_text("ci-agent/@octocat", failures, None, 7)
    problems, mentions = attack_surface(body)
    assert problems == [] and mentions == []
