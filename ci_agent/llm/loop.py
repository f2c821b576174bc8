"""One conversation with the model: answer read-only tool calls until it submits or gives up.

A `submit_patch` passes the structured-answer gates here, then the caller's `check(diff)` (the
patch engine and `git apply --check`). A rejection goes back to the model as an `is_error`
tool_result in the same conversation, its gate notes leading (the API requires tool_result
blocks to open a user turn, so "leading the next turn" means leading that tool_result).

Gates on the structured answer (DESIGN.md §4.5):
- confidence is capped at `1.0 - 0.08*open_questions - 0.05*unverified_assumptions`, where an
  assumption is *unverified* when the model marks it so: it starts with the word "unverified"
  (any case, after leading punctuation), as the tool schema asks; open questions count their
  non-blank entries. A capped confidence is a note, not a rejection.
- a patch that touches none of `report_files` needs a stated reason: `summary` or `root_cause`
  must name a file the patch changes (its path or file name). Without it the patch is rejected.

Stops at `max_turns` model calls or `max_total_tokens` (`Usage.total`) with a `GiveUp` whose
`by_model` is False. Everything we send that came from the repository passes `redact`. What we
tell the model between its turns is worded in `ci_agent/templates/conversation.md.j2`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ci_agent.llm.caching import place_breakpoints
from ci_agent.llm.client import ModelClient
from ci_agent.llm.prompt import initial_request, system_blocks
from ci_agent.llm.tool_schemas import READ_ONLY_TOOLS
from ci_agent.llm.tools import RepoTools, ToolError
from ci_agent.llm.types import AskResult, GiveUp, ModelSettings, PatchProposal, Usage
from ci_agent.patch.extract import extract_diff
from ci_agent.patch.parse import PatchParseError, parse_patch
from ci_agent.render.prose import Prose

Check = Callable[[str], list[str]]
Redact = Callable[[str], str]
_UNVERIFIED = re.compile(r"^\W*unverified\b", re.IGNORECASE)
_SAY = Prose("conversation.md.j2")
# The fields of the thinking blocks the API wants back verbatim, by block type.
_THINKING_FIELDS = {"thinking": ("type", "thinking", "signature"), "redacted_thinking": ("type", "data")}


def unverified_count(assumptions: Iterable[str]) -> int:
    return sum(1 for a in assumptions if _UNVERIFIED.match(a))


def confidence_cap(open_questions: int, unverified: int) -> float:
    return max(0.0, round(1.0 - 0.08 * open_questions - 0.05 * unverified, 6))


def touched_paths(diff: str) -> tuple[str, ...]:
    """Every path the diff names (both sides); () when it does not parse (check will say why)."""
    try:
        patch = parse_patch(extract_diff(diff))
    except PatchParseError:
        return ()
    names = [p for fp in patch.files for p in (fp.old_path, fp.new_path) if p]
    return tuple(dict.fromkeys(names))


def _norm(path: str) -> str:
    path = path.replace("\\", "/")
    return path[2:] if path.startswith("./") else path


def report_file_gate(diff: str, summary: str, root_cause: str,
                     report_files: Iterable[str]) -> tuple[list[str], list[str]]:
    """(rejections, notes) of the "touches no reported file without a reason" gate."""
    reported = {_norm(p) for p in report_files if p}
    touched = [_norm(p) for p in touched_paths(diff)]
    if not reported or not touched or reported & set(touched):
        return [], []
    prose = f"{summary}\n{root_cause}".casefold()
    named = [p for p in touched if p.casefold() in prose or p.rsplit("/", 1)[-1].casefold() in prose]
    listed = ", ".join(sorted(reported)[:8]) + (" ..." if len(reported) > 8 else "")
    if named:
        return [], [f"The patch touches no file named in the report ({listed}); the stated reason "
                    f"names {', '.join(named)}."]
    return [_SAY("report_files_gate", touched=touched, listed=listed)], []


@dataclass(frozen=True, slots=True)
class _Submission:
    diff: str
    summary: str
    root_cause: str
    confidence: float
    assumptions: tuple[str, ...]
    open_questions: tuple[str, ...]


def _strings(value: object, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ToolError(_SAY("needs_strings", name=name))
    return tuple(v for v in value if v.strip())


def read_submission(args: dict[str, Any]) -> _Submission:
    for key in ("diff", "summary", "root_cause"):
        if not isinstance(args.get(key), str) or not args[key].strip():
            raise ToolError(_SAY("needs_text", key=key))
    confidence = args.get("confidence")
    if (not isinstance(confidence, int | float) or isinstance(confidence, bool)
            or not math.isfinite(confidence)):
        raise ToolError(_SAY("needs_confidence"))
    return _Submission(args["diff"], args["summary"].strip(), args["root_cause"].strip(),
                       min(1.0, max(0.0, float(confidence))),
                       _strings(args.get("assumptions"), "assumptions"),
                       _strings(args.get("open_questions"), "open_questions"))


def _proposal(sub: _Submission, notes: list[str]) -> PatchProposal:
    unverified = unverified_count(sub.assumptions)
    cap = confidence_cap(len(sub.open_questions), unverified)
    confidence = min(sub.confidence, cap)
    if confidence < sub.confidence:
        notes = [*notes, f"Confidence capped from {sub.confidence:.2f} to {confidence:.2f}: "
                         f"{len(sub.open_questions)} open question(s), {unverified} unverified "
                         "assumption(s)."]
    return PatchProposal(sub.diff, sub.summary, sub.root_cause, confidence, sub.confidence,
                         sub.assumptions, sub.open_questions, unverified, tuple(notes))


def _history_blocks(content: object) -> list[dict[str, Any]]:
    """The assistant turn as we send it back: its thinking, text and tool_use blocks, in order.

    With extended thinking on, the API requires the turn's `thinking` blocks (with their
    `signature`) and `redacted_thinking` blocks back unchanged while a tool-use cycle goes on, so
    they are copied field for field. Their text is the model's and could echo a secret: it is
    only ever sent back to the API, never logged, shown or stored."""
    blocks: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind in _THINKING_FIELDS:
            blocks.append({key: block.get(key) for key in _THINKING_FIELDS[kind]})
        elif kind == "text" and block.get("text"):
            blocks.append({"type": "text", "text": block["text"]})
        elif kind == "tool_use":
            blocks.append({"type": "tool_use", "id": block.get("id"), "name": block.get("name"),
                           "input": block.get("input") if isinstance(block.get("input"), dict) else {}})
    if not any(b["type"] in ("text", "tool_use") for b in blocks):
        blocks.append({"type": "text", "text": _SAY("no_answer")})
    return blocks


def move_cache_breakpoint(request: dict[str, Any], settings: ModelSettings, turns_made: int,
                          spent: int = 0) -> None:
    """The cache breakpoints of the next request, after `turns_made` model calls that used
    `spent` tokens: the newest user turn's is written only when a later request can read it —
    `max_turns` allows one, and this request (estimated low) leaves `max_total_tokens` unspent
    (`ci_agent.llm.caching` says where the others go, and why)."""
    place_breakpoints(request, later_request=turns_made + 1 < settings.max_turns,
                      tokens_left=settings.max_total_tokens - spent)


def _result(tool_use_id: str, text: str, is_error: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id,
                             "content": [{"type": "text", "text": text or _SAY("empty_result")}]}
    if is_error:
        block["is_error"] = True
    return block


class _Conversation:
    def __init__(self, client: ModelClient, settings: ModelSettings, tools: RepoTools, check: Check,
                 report_files: Iterable[str], redact: Redact) -> None:
        self.client, self.settings, self.tools, self.check = client, settings, tools, check
        self.report_files = tuple(report_files)
        self.redact = redact
        self.usage = Usage()
        self.turns = 0
        self.rejections: list[str] = []
        self.request: dict[str, Any] = {}
        # the accepted submit_patch: the replies made before it in its turn, its id, the ids after it
        self.held: tuple[list[dict[str, Any]], str, list[str]] = ([], "", [])

    def result(self, answer: PatchProposal | GiveUp) -> AskResult:
        resume = self.resume if isinstance(answer, PatchProposal) else None
        return AskResult(answer, self.usage, self.turns, tuple(self.rejections), resume)

    def cap_reached(self) -> GiveUp | None:
        s = self.settings
        if self.turns >= s.max_turns:
            return GiveUp(f"Stopped after {self.turns} model turns (max_turns {s.max_turns}) "
                          "without an accepted patch.", by_model=False)
        if self.usage.total >= s.max_total_tokens:
            return GiveUp(f"Stopped after {self.usage.total} tokens (max_total_tokens "
                          f"{s.max_total_tokens}) without an accepted patch.", by_model=False)
        return None

    def submit(self, tool_id: str, args: dict[str, Any]) -> PatchProposal | dict[str, Any]:
        """The accepted proposal, or the is_error tool_result that rejects it."""
        try:
            sub = read_submission(args)
        except ToolError as error:
            self.rejections.append(str(error))
            return _result(tool_id, self.redact(str(error)), is_error=True)
        gate_rejections, notes = report_file_gate(sub.diff, sub.summary, sub.root_cause,
                                                  self.report_files)
        problems = [*gate_rejections, *self.check(sub.diff)]
        if not problems:
            return _proposal(sub, notes)
        self.rejections.extend(problems)
        return _result(tool_id, self.redact(_SAY("rejected", problems=problems)), True)

    def answer(self, block: dict[str, Any], cut_off: bool) -> PatchProposal | GiveUp | dict[str, Any]:
        tool_id, name = str(block["id"]), block["name"]
        args = block["input"]
        if cut_off:
            return _result(tool_id, _SAY("call_cut_off", max_tokens=self.settings.max_tokens), True)
        if name == "give_up":
            reason = args.get("reason")
            return GiveUp(reason.strip() if isinstance(reason, str) and reason.strip()
                          else "(the model gave no reason)")
        if name == "submit_patch":
            return self.submit(tool_id, args)
        if name not in READ_ONLY_TOOLS:
            return _result(tool_id, _SAY("no_such_tool", name=name), True)
        try:
            return _result(tool_id, self.redact(self.tools.call(name, args)))
        except ToolError as error:
            return _result(tool_id, self.redact(str(error)), True)

    def run(self, request: dict[str, Any]) -> AskResult:
        self.request = request
        messages: list[dict[str, Any]] = request["messages"]
        while True:
            stop = self.cap_reached()
            if stop is not None:
                return self.result(stop)
            move_cache_breakpoint(request, self.settings, self.turns, self.usage.total)
            response = self.client.create(request)
            self.turns += 1
            self.usage += Usage.from_api(response.get("usage"))
            blocks = _history_blocks(response.get("content"))
            messages.append({"role": "assistant", "content": blocks})
            cut_off = response.get("stop_reason") == "max_tokens"
            replies: list[dict[str, Any]] = []
            calls = [b for b in blocks if b["type"] == "tool_use"]
            for index, block in enumerate(calls):
                outcome = self.answer(block, cut_off)
                if isinstance(outcome, PatchProposal):  # held open: the caller may turn it down
                    self.held = (replies, str(block["id"]), [str(b["id"]) for b in calls[index + 1:]])
                if isinstance(outcome, PatchProposal | GiveUp):
                    return self.result(outcome)
                replies.append(outcome)
            self.next_turn(replies, cut_off)

    def next_turn(self, replies: list[dict[str, Any]], cut_off: bool) -> None:
        if not replies:  # a text-only reply (tool_choice is auto) costs a turn like any other
            replies.append({"type": "text", "text": _SAY("no_tool_call", cut_off=cut_off,
                                                         max_tokens=self.settings.max_tokens)})
        if self.turns == self.settings.max_turns - 1:
            replies.append({"type": "text", "text": _SAY("last_turn")})
        self.request["messages"].append({"role": "user", "content": replies})

    def resume(self, feedback: str) -> AskResult:
        """Go on after the caller turned the accepted patch down (the reviewer asked for a
        revision): `feedback` answers its submit_patch as an is_error tool_result, like a policy
        rejection, and the conversation continues under the same caps. Calls the model made in
        the same turn after that submit_patch were not run; they are answered so."""
        replies, submit_id, skipped = self.held
        self.held = ([], "", [])
        self.next_turn([*replies, _result(submit_id, self.redact(feedback), True),
                        *(_result(tool_id, _SAY("not_run"), True) for tool_id in skipped)], False)
        return self.run(self.request)


def first_request(settings: ModelSettings, user_text: str, redact: Redact) -> dict[str, Any]:
    """The first Messages API body of a conversation, exactly as `ask_for_patch` sends it (a dry
    run prints this one): the user text and the repository guidance redacted, the cache
    breakpoints in place."""
    request = initial_request(settings, system_blocks(settings, redact), redact(user_text))
    move_cache_breakpoint(request, settings, 0)
    return request


def ask_for_patch(client: ModelClient, settings: ModelSettings, user_text: str, tools: RepoTools,
                  check: Check, report_files: Iterable[str], redact: Redact) -> AskResult:
    """Run the tool-use conversation to an accepted patch, a give-up, or a cap."""
    request = first_request(settings, user_text, redact)
    return _Conversation(client, settings, tools, check, report_files, redact).run(request)
