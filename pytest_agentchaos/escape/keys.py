"""Calls reduced to action keys, the same way for the harness's observer and the Supervisor.

A tool call's key digests its masked arguments, its outcome and its masked result, or for a
failure its error template (:func:`~.texts.error_template`): the same call failing with
another message is another action, the same call failing with the same message about another
id is the same one. A failed call also gets a coarse key, its tool and error template alone,
for streaks of the same error while the arguments vary.

A model call's key is its output, never its input (a chat model's input grows with the
conversation, so it never repeats); near-duplicate texts (words in common >=
``text_similarity``) share one key, so a slightly reworded thought repeats. The output is
keyed with the newest turn it answers, unless that turn is a nudge (:mod:`.turns`). A
transient failure of a model call (a 429, a 5xx, a timeout) is no news, as on a tool's. A
reply given as a message (a dict, JSON text, a completion) is keyed by what it says, as the
same reply given as text is.

A failure a tool returns as data (:func:`~.failures.failure_text`: an error object, MCP
``isError``, a non-zero exit code, in a dict, in JSON text or in an MCP envelope) is keyed as
the same failure raised would be: by its error's template (its counts kept), a transient one
as no news.
"""

from __future__ import annotations

import re
from typing import Any

from ..saferepr import safe_repr
from .classify import ErrorClassifier
from .failures import as_text as _as_text
from .failures import failure_text, has_failure_field
from .field_names import commentary_field
from .history import _CANONICAL, ActionKey, digest
from .loop_policy import LoopCall, LoopPolicy
from .normalize import mask, mask_args, mask_value_text, parse_json_text
from .provenance import Provenance
from .replies import ReplyTexts
from .reply_calls import json_args, message_calls, observation, react_calls
from .texts import error_signature, error_template, reply_text
from .ticks import ReportCounters
from .turns import NUDGE, Turns
from .urls import UrlPath, url_path
from .volatility import Volatility

__all__ = ["Keyer", "action_key", "call_digest", "failure_text", "outcome_of"]


def outcome_of(ok: bool, error_type: str | None = None, status: int | None = None) -> str:
    """``ok`` or ``error:<type>[:<status>]``."""
    if ok:
        return "ok"
    return f"error:{error_type or 'Error'}" + (f":{status}" if status is not None else "")


def action_key(
    *,
    node: str | None = None,
    tool: str | None = None,
    args: Any = None,
    outcome: str | None = None,
    result: Any = None,
    message: str | None = None,
    channel: str = "tool",
) -> ActionKey:
    """The key of an action with the default masking: the same call with the same result (or
    the same error message, modulo numbers, quoted values and paths) gives the same key, so a
    poll that returns something new each time is progress, not a loop."""
    if args is None and result is None and message is None:
        return ActionKey(node, tool, outcome, None, args, channel)
    ok = outcome is None or outcome == "ok"
    both = _call_digest(args, ok, outcome, result, message, frozenset())
    coarse = None
    if tool is not None:
        coarse = _coarse_of(tool, channel, ok, outcome or "ok", message, result, None, args)
    return ActionKey(node, tool, outcome, both, args, channel, coarse)


def call_digest(args: Any) -> str:
    """The digest of a call by its arguments alone, volatile fields masked: what
    :func:`action_key` gives a call that has no result yet (``action_key(args=args).digest``),
    without building the key. The same call made again has the same digest."""
    return _call_digest(args, True, None, None, None, frozenset())


def _call_digest(
    args: Any, ok: bool, outcome: str | None, result: Any, message: str | None, ignore: Any
) -> str:
    """A call's identity: masked arguments, outcome, and the masked result or error template."""
    template = None if ok else error_template(message)
    shown = mask(result, ignore) if ok else None
    return digest([mask_args(args, ignore), outcome, shown, template])


def _coarse_of(
    tool: str,
    channel: str,
    ok: bool,
    outcome: str,
    message: str | None,
    result: Any,
    status: int | None,
    args: Any,
    numbers: bool = True,
) -> str | None:
    """The coarse key of a failed call (tool and error, the arguments' words taken out), or
    of a call that returned a failure as data (a non-zero exit code, ``"error": ...``,
    ``"success": false``, an HTTP error status); None for a success."""
    if not ok:
        signature = error_signature(message, args, numbers=numbers)
        return f"{channel}:{tool} -> {outcome} {signature}".rstrip()
    failure = failure_text(result, status)
    if failure is None:
        return None
    # no error was raised: the output is the failure's text, and its counts are what the
    # agent reads ("7 failed" then "5 failed" is progress, not the same failure)
    signature = error_signature(failure, args, numbers=numbers, counts=True)
    return f"{channel}:{tool} -> failed {signature}".rstrip()


#: An error's first line that names its class: ``ConnectionError: reset by peer``.
_NAMED = re.compile(r"([A-Za-z_][\w.]{0,80})\s?[:：]\s*(.*)")


#: A state given as one bare token (a name, or a digest the agent computed) is its own digest.
_BARE = re.compile(r"[\w.:/#@+-]{1,128}")
#: State texts up to this long are remembered (to see a state come back exactly), up to this
#: many; past it the memory starts over.
_STATE_TEXT = 4096
_STATE_TEXTS = 4096
#: The fewest characters of a URL path's segment that may be a handle.
_PATH_HANDLE = 4
#: Call and reply keys remembered, to tell that one came back (past this: start over).
_CALL_KEYS = 4096


class Keyer:
    """Makes action keys under a :class:`~.loop_policy.LoopPolicy`: its ignored fields, its
    key functions and its near-duplicate threshold. Holds the recent model texts, so use one
    per run."""

    def __init__(self, policy: LoopPolicy | None = None) -> None:
        policy = policy or LoopPolicy()
        self.ignore = frozenset(policy.ignore_fields)
        self.functions = dict(policy.keys)
        self.error_numbers = policy.error_numbers == "ignore"
        self.error_wording = policy.error_wording == "compare"
        self.provenance = Provenance()
        self.volatility = Volatility(max_step=policy.max_period)
        self._states = Volatility(max_step=policy.max_period, fields=False)
        self._counters = ReportCounters()
        self.turns = Turns(policy.nudge_tokens)
        self._groups: dict[tuple[str, str], str] = {}  # (channel, tool) -> "channel:tool"
        self._state_texts: set[str] = set()  # the state texts seen (bounded)
        self._call_keys: set[str] = set()  # the call and reply keys seen (bounded)
        self._classifier = ErrorClassifier()
        self._transient: dict[tuple[str | None, int | None, str], bool] = {}
        self._texts = ReplyTexts(
            policy.text_similarity, policy.reply_embedder, policy.semantic_similarity
        )
        self._replies: dict[str, str] = {}  # what a reply says -> its first key
        self._last_reply = ""  # what the latest reply said
        self._tools_ran = False  # whether a tool or HTTP call completed in this run
        self._read_turns: dict[str, str] = {}  # a turn -> how a reply calling a tool read it
        #: ``(tool, error)`` for each tool whose key function raised (it keys by default then)
        self.failures: list[tuple[str, str]] = []

    def tool(
        self,
        tool: str,
        args: Any,
        *,
        ok: bool = True,
        result: Any = None,
        error_type: str | None = None,
        message: str | None = None,
        status: int | None = None,
        channel: str = "tool",
    ) -> ActionKey:
        """The key of a completed tool or HTTP call."""
        self._tools_ran = True
        data = json_args(args)  # what the call asks for, when the arguments are JSON text
        url = url_path(tool) if channel == "http" else None
        name = tool
        if url is not None:
            # the path's segments are arguments: a handle a result issued, passed back in the
            # path, is a handle there too (the run id in ``GET .../runs/<id>``)
            segments = self._url_segments(url)
            tool = url.name(segments)
        outcome = "ok" if ok else outcome_of(ok, error_type, status)
        transient = not ok and self.transient(error_type, message, status)
        reported = None  # the failure a result reports as data
        coarse: str | None
        if transient:
            coarse = f"{channel}:{tool} -> transient"
        elif ok and status is None and type(result) is dict and not has_failure_field(result):
            coarse = None  # no field that could report a failure (most results)
        else:
            if ok:
                reported = failure_text(result, status)
                # a transient error reported as data (its first line: the error's class and
                # message, not a test's output that mentions a timeout)
                head = None if reported is None else reported.lstrip()[:300].partition("\n")[0]
                named = None if not head else _NAMED.match(head)
                if named is not None:  # "ConnectionError: ...": its class, then its message
                    transient = self.transient(named.group(1), named.group(2), status)
                elif head:
                    transient = self.transient(None, head, status)
                if transient:
                    coarse = f"{channel}:{tool} -> transient"
            if not transient:
                coarse = _coarse_of(
                    tool, channel, ok, outcome, message, result, status, data, self.error_numbers
                )
        own = self.functions.get(name) if self.functions else None
        if own is not None:
            call = LoopCall(name, args, ok, result, error_type, message, status, channel)
            try:
                value = digest(own(call))
            except Exception as exc:
                self.functions.pop(tool)
                self.failures.append((tool, f"{type(exc).__name__}: {safe_repr(exc, 200)}"))
            else:
                return ActionKey(None, tool, outcome, value, args, channel, coarse)
        ignore = self.ignore
        try:
            # what the arguments' masking takes out (a temp path, a credential) is no handle
            given = self.provenance.args(tool, mask_args(data, ignore), url is not None)
            shown = mask(self.provenance.result(result), ignore) if ok else None
        except RecursionError:  # a value inside itself: keyed by its content, as it is
            value = digest([data, outcome, result if ok else error_template(message)])
            return ActionKey(None, tool, outcome, value, args, channel, coarse)
        if transient:  # no news: every transient failure of the call is one action
            kind, shown, template = "error:transient", None, None
        elif reported is not None:
            # a failure the tool reported as data (an error object, an MCP error, an exit
            # code) is compared as a raised one is: by its error's template
            kind, shown = "failed", None
            template = error_template(reported, numbers=self.error_numbers, counts=True)
        elif ok:
            kind = outcome
            template = None
        else:
            kind, shown = outcome, None
            if self.error_wording:
                template = error_template(message, numbers=self.error_numbers)
            else:  # the call is stuck whatever the wording: keyed by type and status
                kind, template = f"error:{error_type or 'Error'}:{status}", None
        try:
            args_text = _CANONICAL(given)
            rest_text = _CANONICAL([kind, shown, template])
        except Exception:  # too deep, or not encodable: digested structurally
            value = digest([given, kind, shown, template])
            return ActionKey(None, tool, outcome, value, args, channel, coarse, kind)
        if kind != "ok":  # an error's template masks what varies by itself, per error_numbers
            value = digest([args_text, rest_text])
        else:
            group = self._groups.get((channel, tool))
            if group is None:
                if len(self._groups) >= 4096:
                    self._groups.clear()
                group = self._groups[(channel, tool)] = f"{channel}:{tool}"
            value = self.volatility.key(group, args_text, rest_text)
        self._came_back(value)
        return ActionKey(None, tool, outcome, value, args, channel, coarse, kind)

    def _url_segments(self, url: UrlPath) -> list[str]:
        """The segments of a request's path with the handles they pass back masked (the
        endpoint's template is the argument they are passed in). A short segment (``v1``,
        ``7``: an API's version, an item's number) is the agent's choice, kept."""
        held = [i for i, s in enumerate(url.segments) if len(s) >= _PATH_HANDLE]
        if not held:
            return url.segments
        masked = self.provenance.args(url.template, {"": [url.segments[i] for i in held]})
        found = masked.get("") if type(masked) is dict else None
        if type(found) is not list or len(found) != len(held):
            return url.segments
        segments = list(url.segments)
        for i, segment in zip(held, found, strict=True):
            segments[i] = segment
        return segments

    def transient(self, error_type: str | None, message: str | None, status: int | None) -> bool:
        """Whether a failure is transient (a timeout, a 5xx, a 429, a refused or reset
        connection), as the error classifier's default tables say."""
        probe = (error_type, status, (message or "")[:300])
        known = self._transient.get(probe)
        if known is None:
            try:
                found = self._classifier.classify(
                    None, status=status, message=message, exception=error_type or message
                )
                known = found.kind == "transient"
            except Exception:  # a classifier rule that cannot read this error: not transient
                known = False
            if len(self._transient) >= 1024:
                self._transient.clear()
            self._transient[probe] = known
        return known

    def model(
        self,
        model: str,
        *,
        ok: bool = True,
        output: Any = None,
        error_type: str | None = None,
        message: str | None = None,
        input: Any = None,  # noqa: A002 - the model call's own name for it
    ) -> ActionKey:
        """The key of a completed model call: its output (near-duplicates share a key) or its
        error, and what it answered: the latest message of its ``input`` when given (the same
        reply to another prompt is another action: a label per review, not a loop; a chat
        model's input grows, so only its newest turn is read)."""
        prompt = None if input is None else self.turns.identity(_latest(input))
        if not ok:
            outcome = outcome_of(False, error_type)
            if self.transient(error_type, message, None):
                # no news, as for a tool: every transient failure of the call is one action
                value = digest([prompt, "error:transient"])
                return ActionKey(
                    None, model, outcome, value, None, "model", None, "error:transient"
                )
            if self.error_wording:
                value = digest([prompt, error_template(message, numbers=self.error_numbers)])
                return ActionKey(None, model, outcome, value, None, "model")
            value = digest([prompt, None])  # stuck whatever the wording: keyed by its type
            return ActionKey(None, model, outcome, value, None, "model")
        if isinstance(output, str) and output.lstrip()[:1] in ("{", "["):
            parsed = parse_json_text(output)  # a message or a structured reply as JSON text
            if isinstance(parsed, (dict, list)):
                output = parsed
        said = reply_text(output)
        calls = message_calls(output) if said is None else react_calls(said)
        if calls is not None:
            # a message that calls tools (its ``tool_calls``, or a ReAct text's ``Action``) is
            # what it calls: its calls keyed as calls are (the arguments the agent chose are
            # what it asks for: another date, another offset is another call; the call ids
            # are no content), the sentence it says with them ("Let me look that up.",
            # "Trying once more.", a ReAct thought) framing that changes nothing
            content, called = calls
            asked = [(name, mask_args(json_args(args), self.ignore)) for name, args in called]
            text = f"{content}\n{_as_text(asked)}"
            key = digest(["calls", _as_text(asked)])
        elif said is not None:  # a message that only says something: what it says
            text = said
            key = self._texts.key(text)
        else:
            if type(output) is dict and len(output) > 1:
                # a structured reply's commentary on itself (its reasoning, its confidence)
                # is no part of what it does: the same action in new words is one reply
                kept = {k: v for k, v in output.items() if not _commentary(k)}
                if kept:
                    output = kept
            try:
                masked = mask(output, self.ignore)
                text = _as_text(masked)
            except RecursionError:  # an output inside itself: read as it is
                masked, text = None, _as_text(output)
            key = self._texts.key(text)
            values = _values(masked)
            if values:
                # a structured reply (data, not a message) says its values: another train,
                # another time is another reply however alike its words (the text's numbers
                # are compared by shape alone)
                key = digest([key, values])
        if prompt is not None and calls is not None and observation(input):
            # a reply that calls a tool reads the result of the call before it (its turn, an
            # observation) and is keyed with it, as a tool call is with its result: the same
            # call on the same result repeats (two calls alternating on the same results are
            # a lap from the first), the same call on a new result polls, even when the new
            # result adds little. A turn is read once (a nudge, or what it says, a runner's
            # turn count aside): the same turn again is read the same way, whatever was said
            # since
            answered = self.turns.answered(input, prompt, text)
            turn = self.turns.uncounted(_latest(input))
            read = self._read_turns.get(turn)
            if read is None:
                if len(self._read_turns) >= _CALL_KEYS:
                    self._read_turns.clear()
                read = self._read_turns[turn] = NUDGE if answered == NUDGE else turn
            self._last_reply = key
            key = digest(["called", read, key])
        elif prompt is not None:
            # (a reply calling a tool after a person's message answers that message as a
            # chat reply does: the same call handed back to a correction ignored it)
            # a reply to a nudge answers nothing new: keyed by what it says alone; one that
            # goes back to an earlier reply (ignoring its turn, after saying something else)
            # is that reply again, whatever turn the earlier one answered: two versions handed
            # back in turn. Not after a turn with a new number or name (a new question an old
            # answer may answer), nor right after itself (keyed as a nudge's: the first one
            # answered its turn).
            answered = self.turns.answered(input, prompt, text, key)
            first = self._replies.get(key)
            back = (
                answered == NUDGE
                and first is not None
                and key != self._last_reply
                and not self.turns.valued
            )
            self._last_reply = key
            if back and first is not None:
                key = first
            else:
                if first is None:
                    if len(self._replies) >= _CALL_KEYS:
                        self._replies.clear()
                    first = self._replies[key] = digest([answered, key])
                    key = first
                else:
                    key = digest([answered, key])
        self._came_back(key)
        # a reply that calls a tool, in a run where no tool has run (the framework never
        # executes them, or a chat-only trace), is in the stream of tool calls: its calls are
        # the run's only calls, and the model's other replies between them its text between
        # calls (an apology in new words each lap leaves the same call repeating)
        stream = "tool" if calls is not None and not self._tools_ran else None
        return ActionKey(None, model, "ok", key, None, "model", stream=stream)

    def _came_back(self, key: str) -> None:
        """Note a call's or a reply's key: one seen before means a lap of the run repeats (the
        same query, the same rows; the same draft), and a state's number field rising by one
        from then on counts rounds, as after a state seen again."""
        seen = self._call_keys
        if key in seen:
            self._states.recurred()
        else:
            if len(seen) >= _CALL_KEYS:
                seen.clear()
            seen.add(key)

    def state(self, state: Any, node: str | None = None) -> str:
        """The digest of a reported state (at ``node``, when the agent visits one): volatile
        fields masked, a transient error it holds masked as ``<transient>``, and what changes
        on every report while the rest stays equal (a tick, a step count) learned. A state
        logged as text is read as a result's text is: JSON text as the data it holds,
        ``name=value`` pairs by their names; one bare token (a name, a digest) is kept."""
        if isinstance(state, str):
            if _BARE.fullmatch(state) is not None:
                return state  # a name or a digest the agent computed: the state as it is
            parsed = parse_json_text(state) if state.lstrip()[:1] in ("{", "[") else None
            if parsed is None:
                # a state logged as text ("phase=wait tick=3 ts=..."): masked as a result's
                # text is (name=value pairs by their names, volatile tokens by their shape)
                text = self._transient_pairs(mask_value_text(state, self.ignore))
                text = self._counters.mask_text(text)  # a pair counting the reports: no news
                return self._state_text(text, node)
            state = parsed  # JSON text: the data it holds, as if given as data
        try:
            masked = self._transient_errors(mask(state, self.ignore), 0)
            masked = self._counters.mask(masked)  # a number counting the reports: no news
        except RecursionError:  # a state inside itself: digested structurally, as it is
            return digest(state)
        try:
            text = _CANONICAL(masked)
        except Exception:  # too deep, or not encodable: digested structurally
            return digest(masked)
        return self._state_text(text, node)

    def _state_text(self, text: str, node: str | None) -> str:
        """The digest of a masked state's text, with what changes on every report learned."""
        seen = self._state_texts
        if text in seen:
            # a state came back exactly: a lap repeats, and a number field rising by one
            # since counts rounds, not work (a revision counter rising while the critic says
            # the same of the same draft)
            self._states.recurred()
        elif len(text) <= _STATE_TEXT:
            if len(seen) >= _STATE_TEXTS:
                seen.clear()
            seen.add(text)
        return self._states.key(node or "", "", text)

    def _transient_pairs(self, text: str) -> str:
        """A state text with the value of each error pair (``last_error=HTTP 503``) that the
        classifier calls transient replaced by ``<transient>``, as in a state given as data."""
        if len(text) > _STATE_TEXT or _ERROR_PAIR.search(text) is None:
            return text

        def replace(match: re.Match[str]) -> str:
            if self.transient(None, match.group("value").strip(), None):
                return f"{match.group('head')}<transient>"
            return match.group(0)

        return _ERROR_PAIR.sub(replace, text)

    def _transient_errors(self, value: Any, depth: int) -> Any:
        """``value`` with the text of each error field (``last_error``, ``error``) that the
        classifier calls transient replaced by ``<transient>``: no news, whichever it is."""
        if depth > 16:
            return value
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                if isinstance(v, str) and _error_field(k) and self.transient(None, v, None):
                    out[k] = "<transient>"
                else:
                    out[k] = self._transient_errors(v, depth + 1)
            return out
        if isinstance(value, list):
            return [self._transient_errors(v, depth + 1) for v in value]
        return value


_COMMENTARY: dict[str, bool] = {}


def _commentary(name: Any) -> bool:
    """Whether a structured reply's field is its commentary (:func:`commentary_field`),
    memoised per name (bounded)."""
    if type(name) is not str:
        return False
    known = _COMMENTARY.get(name)
    if known is None:
        if len(_COMMENTARY) >= 1024:
            _COMMENTARY.clear()
        known = _COMMENTARY[name] = commentary_field(name)
    return known


#: A structured reply's values read at most, and how long one value is.
_VALUES = 64
_VALUE_TEXT = 40


def _values(value: Any) -> list[str]:
    """The values of a structured reply (masked): its numbers and its short texts holding a
    digit (``G102``, ``06:26``), in order, at most :data:`_VALUES` leaves read."""
    out: list[str] = []
    todo, leaves = [value], 0
    while todo and leaves < _VALUES:
        item = todo.pop()
        leaves += 1
        if type(item) is dict:
            todo.extend(reversed(item.values()))
        elif type(item) is list:
            todo.extend(reversed(item))
        elif type(item) is str:
            if len(item) <= _VALUE_TEXT and any(c.isdigit() for c in item):
                out.append(item)
        elif type(item) in (int, float):
            out.append(repr(item))
    return out


#: How much of a model's input text is its newest turn, when the input is one text.
_PROMPT_TAIL = 500


def _latest(value: Any) -> Any:
    """The newest turn of a model's input, masked: the last message of a list of messages
    (``{"role": ..., "content": ...}``), the user's part of a ``{"system", "user"}`` table,
    the tail of a text."""
    if isinstance(value, list) and value:
        value = value[-1]
    if isinstance(value, dict):
        for field in ("content", "user", "input", "prompt", "text", "message"):
            if field in value:
                value = value[field]
                break
    if isinstance(value, str):
        return mask_value_text(value[-_PROMPT_TAIL:])
    return mask(value)


_ERROR_WORDS = ("error", "exception", "failure", "fault")
#: An error pair in a state's text (``last_error=HTTP 503``, ``error: timed out``): its value
#: runs to the end of the pair (a comma, a semicolon, a line's end).
_ERROR_PAIR = re.compile(
    r"(?P<head>\b[\w-]*(?:error|exception|failure|fault)[\w-]*\s{0,3}[=:：]\s{0,3})"
    r"(?P<value>[^,;，；\n]{1,200})",
    re.IGNORECASE,
)


def _error_field(name: Any) -> bool:
    """Whether a field's name says it holds an error (``last_error``, ``lastException``)."""
    return isinstance(name, str) and any(w in name.lower() for w in _ERROR_WORDS)
