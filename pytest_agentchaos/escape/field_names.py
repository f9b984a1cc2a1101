"""What a field's name says about its value, for the loop detector's masking: a name that
identifies or counts the call (a request id, a nonce, an attempt), a volatile one in what a call
returns (when, how long, which generated id), a credential, a cosmetic label. Names are judged
by their words (camel, snake and digit aware), once each (bounded memos)."""

from __future__ import annotations

import re

__all__ = ["CALL_FIELDS", "VOLATILE_FIELDS", "commentary_field", "flat_name"]

#: Field names (compared lowercased, without ``_``/``-``) whose values identify or count the
#: call itself, on whichever side they appear: masked whole, whatever they hold.
CALL_FIELDS = frozenset(
    {"timestamp", "ts", "now", "requestid", "reqid", "messageid", "msgid", "traceid", "spanid",
     "correlationid", "idempotencykey", "nonce", "cachebuster", "pid", "attempt", "attempts",
     "retry", "retries", "retrycount", "seq", "sequence", "sequencenumber", "iteration",
     "tmpdir", "tmpfile", "tempfile", "tempdir"}
)  # fmt: skip

#: Field names that are volatile in what a call returns (its result, a state, a model's
#: output), on top of :data:`CALL_FIELDS`: when a record was made or changed, how long the
#: call took, the ids generated for it. In the arguments they are the agent's choice.
VOLATILE_FIELDS = CALL_FIELDS | frozenset(
    {
        "datetime",
        "date",
        "time",
        "createdat",
        "updatedat",
        "modifiedat",
        "lastmodified",
        "expiresat",
        "runid",
        "sessionid",
        "uuid",
        "guid",
        "etag",
        "id",
        "elapsed",
        "duration",
        "latency",
        "took",
    }
)

#: Words of a field name that make a result's value a measured time: ``load_time_ms``,
#: ``elapsedSeconds``, ``response_time``, ``duration_s``.
_TIMING_WORDS = frozenset({"elapsed", "duration", "latency", "took"})
#: A field named by a unit of time alone holds a measured duration (``"ms": 4``).
_TIME_UNIT_NAMES = frozenset({"ms", "us", "ns", "µs", "msec", "usec", "nsec"})
_TIME_QUALIFIERS = frozenset(
    {"ms", "s", "sec", "secs", "seconds", "us", "ns", "taken", "spent", "response", "load",
     "exec", "execution", "processing", "wall", "cpu", "query", "search", "request", "run",
     "total", "round", "trip"}
)  # fmt: skip
_USAGE_WORDS = frozenset({"tokens", "usage"})
#: Words of a field name that, with a unit of time, make its value the time waited so far.
_WAIT_WORDS = frozenset({"wait", "waited", "waiting"})
_TIME_UNITS = frozenset(
    {"s", "sec", "secs", "second", "seconds", "ms", "min", "mins", "minute", "minutes"}
)
_STEP_WORDS = frozenset({"step", "turn", "round", "tick"})
#: Words of a field name that count the agent's rounds by themselves (the field-name rule's
#: ``iteration``, with its Chinese spellings): ``tick``, ``hop``, ``迭代``, ``轮次``.
_CLOCK_WORDS = frozenset(
    {"tick", "ticks", "iteration", "iterations", "hop", "hops", "迭代", "轮次", "迭代次数"}
)
_NUMBER_WORDS = frozenset({"number", "num", "no", "count"})
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+|[^\W\d_A-Za-z]+")


def flat_name(name: str) -> str:
    """A field's name as its conventions compare it: lowercased, without ``_`` / ``-``."""
    return name.lower().replace("_", "").replace("-", "")


def _volatile_field(name: str) -> bool:
    """Whether a field of a result, state or model output holds a volatile value."""
    if flat_name(name) in VOLATILE_FIELDS or _call_field(name):
        return True
    words = [w.lower() for w in _NAME_WORDS.findall(name)]
    if not words:
        return False
    last = words[-1]
    if last in ("at", "id") and len(words) > 1:  # created_at, chargeId, command_id
        return True
    if _counter_field(words):
        return True
    if _USAGE_WORDS.intersection(words):  # input_tokens, usage: what the call cost
        return True
    if _STEP_WORDS.intersection(words) and _NUMBER_WORDS.intersection(words):
        return True  # step_number, turnCount: which step of the run this is
    if _CLOCK_WORDS.intersection(words):
        return True  # tick, 迭代: how often the agent went round, not what it found
    if last in _TIME_UNIT_NAMES:
        return True  # "ms": 4, "cost_ms": 69: a duration named by its unit
    if _WAIT_WORDS.intersection(words) and (last in _TIME_UNITS or "time" in words):
        return True  # waited_s, wait_seconds, waiting_time: how long the agent has waited
    return bool(_TIMING_WORDS.intersection(words)) or (
        "time" in words and bool(_TIME_QUALIFIERS.intersection(words))
    )


#: Endings of argument names that identify the call (``X-Request-Id``, ``client_trace_id``),
#: among them the id a client makes up for each message or mutation it sends so a resend is
#: not applied twice (Slack's and Intercom's ``client_msg_id``, Relay's ``clientMutationId``);
#: a message's own id (``reply_to_msg_id``) says which message the call is about.
_CALL_SUFFIXES = (
    "clientmsgid",
    "clientmessageid",
    "mutationid",
    "requestid",
    "traceid",
    "spanid",
    "correlationid",
    "messageid",
    "idempotencykey",
    "nonce",
    "timestamp",
)


def _call_field(name: str) -> bool:
    """Whether an argument names the call itself rather than what it is about."""
    field = flat_name(name)
    if field in CALL_FIELDS or field.endswith(_CALL_SUFFIXES):
        return True
    return _counter_field([w.lower() for w in _NAME_WORDS.findall(name)])


def _arg_field(name: str) -> bool:
    """Whether an argument's value never matters: it names the call or is a credential."""
    if _call_field(name):
        return True
    return flat_name(name) in _CREDENTIAL_WORDS or _credential_field(
        [w.lower() for w in _NAME_WORDS.findall(name)]
    )


#: Words of a field name that make it a count of the attempts themselves
#: (``consecutiveMistakeCount``, ``retry_count``, ``failed_attempts``).
_ATTEMPT_WORDS = frozenset({"attempt", "attempts", "retry", "retries", "consecutive"})
_FAILURE_WORDS = frozenset({"mistake", "mistakes", "error", "errors", "failure", "failures"})


def _counter_field(words: list[str]) -> bool:
    if _ATTEMPT_WORDS.intersection(words):
        return True
    return "count" in words and bool(_FAILURE_WORDS.intersection(words))


#: Field names already judged, on each side (bounded: names past the bound are judged anew).
_RESULT_NAMES: dict[str, bool] = {}
_ARG_NAMES: dict[str, bool] = {}


def _is_volatile_name(name: str, returned: bool) -> bool:
    names = _RESULT_NAMES if returned else _ARG_NAMES
    found = names.get(name)
    if found is None:
        found = _volatile_field(name) if returned else _arg_field(name)
        if len(names) < 4096:
            names[name] = found
    return found


def _epoch(number: float) -> bool:
    """Seconds or milliseconds since 1970 between 2001 and 2033: the clock, not a quantity."""
    return 1e9 <= number < 2e9 or 1e12 <= number < 2e12


#: Words of an argument's name that make its value a credential (an authorization header, a
#: token, an API key, a cookie, a password): fresh on every call, never what it is about.
_CREDENTIAL_WORDS = frozenset(
    {"authorization", "auth", "token", "password", "passwd", "secret", "cookie", "cookies",
     "credential", "credentials", "signature", "bearer", "apikey", "csrf", "xsrf",
     # a request's signature as open platforms name it (``sign``: Taobao, JD, WeChat Pay,
     # Alipay; ``api_sig``): a hash of the call's parameters, its time and a secret
     "sign", "sig",
     # a cursor is a handle: it says where a listing is, never what the agent asks for
     "cursor", "continuation"}
)  # fmt: skip
_KEY_OWNERS = frozenset({"api", "access", "secret", "private", "session", "auth", "client"})


def _credential_field(words: list[str]) -> bool:
    """Whether an argument's name (its words, lowercased) names a credential."""
    if _CREDENTIAL_WORDS.intersection(words):
        return "max" not in words and "limit" not in words  # max_token: a budget
    return "key" in words and bool(_KEY_OWNERS.intersection(words))


#: Words of an argument's name that make its text a cosmetic label: a running counter at its
#: end (``"label": "attempt 4"``, ``"title": "retry-3"``) names the call, not what it does.
_LABEL_WORDS = frozenset(
    {"label", "title", "description", "desc", "comment", "note", "notes", "tag", "caption",
     "memo", "summary", "reason", "display"}
)  # fmt: skip
_LABEL_NAMES: dict[str, bool] = {}


def _label_field(name: str) -> bool:
    found = _LABEL_NAMES.get(name)
    if found is None:
        words = {w.lower() for w in _NAME_WORDS.findall(name)}
        found = bool(_LABEL_WORDS.intersection(words))
        if len(_LABEL_NAMES) < 4096:
            _LABEL_NAMES[name] = found
    return found


#: Words of a field name that make a model's structured reply's value its commentary on
#: itself (the ReAct ``thought``, a planner's ``reasoning`` and ``confidence``), not what it
#: does or hands over: two replies that do the same thing in other words are one reply.
_COMMENTARY_WORDS = frozenset(
    {"reason", "reasoning", "rationale", "thought", "thoughts", "thinking", "explanation",
     "justification", "confidence"}
)  # fmt: skip


def commentary_field(name: str) -> bool:
    """Whether a field of a model's structured reply holds its commentary on itself
    (``reasoning``, ``thought``, ``confidence_score``), by the words of its name: the last,
    or the one before a qualifier (``score``, ``text``)."""
    words = [w.lower() for w in _NAME_WORDS.findall(name)]
    if not words:
        return False
    if words[-1] in _COMMENTARY_WORDS:
        return True
    # a commentary word qualified (``confidence_score``, ``thought_process``), not a datum
    # named after one (``reason_code``: which reason, a value the reply hands over)
    return (
        words[-1] in _COMMENTARY_QUALIFIERS
        and words[-2:-1] != []
        and (words[-2] in _COMMENTARY_WORDS)
    )


_COMMENTARY_QUALIFIERS = frozenset({"score", "level", "text", "process", "summary"})
