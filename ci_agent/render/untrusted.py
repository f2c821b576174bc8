"""The one way untrusted text (model prose, log lines, test messages, error text) enters Markdown
that ci-agent posts: PR/MR bodies, status/escalation/slash comments, job summaries.

`untrusted_md(text)` keeps the text readable as Markdown (paragraphs, lists, emphasis, code
spans, fenced code blocks, links) but makes sure it cannot

- @-mention anyone (`@user`, `@org/team`, GitLab `@group`, `@all`): a word joiner (U+2060, zero
  width) after `@` (GitHub and GitLab only link `@` immediately followed by a name);
- load an image (`![](https://...)`, reference-style `![x][r]`, `[![x](u)](v)`): a word joiner
  between `!` and `[` turns the image into a plain link;
- inject raw HTML (`<img>`, `<details>`, `<a>`, `<script>`, `<!-- ... -->` that could hide text
  or fake our `<!-- ci-agent:v1 ... -->` marker): a word joiner after `<`, so no tag, comment or
  autolink can start; HTML comments are removed first (`sanitize_untrusted`);
- smuggle any of those through character references (`&#64;user`, `&#60;img`): a word joiner
  after `&` where a reference would start;
- swallow the Markdown of ours that follows it: a fenced code block it leaves open is closed.

The word joiner is invisible in rendered text and in code spans, so prose reads as written
(input's own invisible characters are removed first, so only ours remain). Inside a fenced code
block that starts at column 0 (where CommonMark and GFM agree it is a top-level fence that only
a closing fence ends) nothing is rendered as Markdown or HTML and mentions are not linked, so the
code is left as written (only an HTML comment opener is broken, so the raw body never carries a
marker-shaped comment). Everything else is neutralised, including fences that are indented or
inside lists and quotes, where deciding whether they are code would need a full parser.

Our own fixed markup (headings, `<details>`, the status marker) never goes through here; apply
this to untrusted parts only, and apply it last (`sanitize_untrusted` after it would remove the
word joiners again).
"""

from __future__ import annotations

import re

from ci_agent.redact import sanitize_untrusted

JOINER = "\u2060"  # WORD JOINER: zero width, no line-break opportunity

_NEUTRALISE_RE = re.compile(
    r"(?P<at>@)(?=[\w.-])"                   # a mention: @user, @org/team, @all, @_group
    r"|(?P<bang>!)(?=\[)"                    # an image: ![alt](url), ![alt][ref], ![ref]
    r"|(?P<lt><)(?=[A-Za-z/!?])"             # a tag, comment, declaration or autolink
    r"|(?P<amp>&)(?=#|[A-Za-z][A-Za-z0-9]{1,31};)"  # a character reference
)
# A top-level fence opener: column 0, 3+ backticks (info without backticks) or 3+ tildes.
_FENCE_OPEN_RE = re.compile(r"(`{3,})(?!.*`)|(~{3,})")
# Any other line that could open a fence: turned into text by a word joiner before the run.
_FENCE_LIKE_RE = re.compile(r"\A( {0,3})(`{3}|~{3})")


def _neutralise(line: str) -> str:
    return _NEUTRALISE_RE.sub(lambda m: m.group(0) + JOINER, line)


def _closes(line: str, fence: str) -> bool:
    """CommonMark: up to 3 spaces, at least as many of the same character, then only blanks."""
    rest = line.lstrip(" ")
    if len(line) - len(rest) > 3:
        return False
    run = len(rest) - len(rest.lstrip(fence[0]))
    return run >= len(fence) and not rest[run:].strip(" \t")


def untrusted_md(text: str) -> str:
    """Untrusted text made safe to embed in Markdown as a block (see the module docstring).

    The first line may follow text of ours on the same line (`**Summary:** ...`), so it never
    opens a fence; neither does a fence line indented by 1-3 spaces (it would be a top-level
    fence that our tracking, which only follows column-0 fences, could not see stay open)."""
    out: list[str] = []
    fence = ""
    for index, line in enumerate(sanitize_untrusted(text).split("\n")):
        if fence:
            out.append(line.replace("<!", "<" + JOINER + "!"))
            if _closes(line, fence):
                fence = ""
            continue
        opener = _FENCE_OPEN_RE.match(line) if index else None
        if opener:
            fence = opener.group(1) or opener.group(2)
            out.append(_neutralise(line))
            continue
        out.append(_FENCE_LIKE_RE.sub(lambda m: m.group(1) + JOINER + m.group(2), _neutralise(line)))
    if fence:
        out.append(fence)
    return "\n".join(out)


def untrusted_md_line(text: str) -> str:
    """Untrusted text made safe as inline Markdown on one line (newlines become spaces)."""
    return _neutralise(" ".join(sanitize_untrusted(text).split()))
