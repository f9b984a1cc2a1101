"""What an action looks like once the details that change by themselves are masked.

A stuck agent's calls differ on every attempt in details no decision depends on: a timestamp,
a request id, a temp file name, the milliseconds a call took. Keyed as they are, identical
actions never repeat. :func:`mask` replaces such tokens by their type (``<time>``, ``<uuid>``
...) before an action is digested (error messages and model texts are reduced for comparison in
:mod:`.texts`).

Masking is by the token's shape, never by position: two values whose other content differs
never mask to the same thing, and masking a masked value changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

from ..trace.values import TRUNCATED
from .field_names import (
    _ARG_NAMES,
    _RESULT_NAMES,
    CALL_FIELDS,
    VOLATILE_FIELDS,
    _call_field,
    _epoch,
    _is_volatile_name,
    _label_field,
)

__all__ = [
    "CALL_FIELDS",
    "VOLATILE_FIELDS",
    "mask",
    "mask_args",
    "mask_text",
    "mask_value_text",
    "parse_json_text",
]


_UNITS = r"(?:ns|us|µs|ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hrs?|hours?)"
_NOT_ALNUM_BEFORE = r"(?<![0-9A-Za-z])"
_NOT_ALNUM_AFTER = r"(?![0-9A-Za-z])"

#: Words a volatile token can begin with before its digits (``took 3s``, ``attempt 4``).
_LEAD_WORDS = (
    "took|elapsed|after|in|duration|latency|waited|wait|attempt|retry|retries|try|tries"
    "|iteration|iter|seq|sequence|nonce|pid|pgid|ppid|out|耗时|用时|历时"
)

#: One pass over a string finds every volatile token; the first alternative that matches at a
#: position wins, so the order matters (a UUID before its hex runs, a timestamp before digits).
#: The guard in front lets the engine leave at once where no token can begin (inside a word,
#: or at a word without a digit that is not one of :data:`_LEAD_WORDS`): every alternative
#: below begins at a temp path, or at a word start (or where digits follow letters) with a
#: digit in its word or a lead word. It halves the cost per character.
_GUARD = rf"""
    (?:(?=/|[A-Za-z]:\\)
      |(?:{_NOT_ALNUM_BEFORE}|(?<=[A-Za-z])(?=[0-9]))(?=\S*?[0-9]|(?:{_LEAD_WORDS})\b))
    """
_TOKENS = rf"""
    (?P<uuid>{_NOT_ALNUM_BEFORE}[0-9a-fA-F]{{8}}-[0-9a-fA-F]{{4}}-[0-9a-fA-F]{{4}}-[0-9a-fA-F]{{4}}
        -[0-9a-fA-F]{{12}}{_NOT_ALNUM_AFTER})
    |(?P<time>(?<![0-9])\d{{4}}-\d{{2}}-\d{{2}}[T\ ]\d{{2}}:\d{{2}}(?::\d{{2}}(?:[.,]\d+)?)?
        (?:Z|[+-]\d{{2}}:?\d{{2}}|\ ?UTC|\ ?GMT)?(?![0-9])
      |(?<![0-9:])\d{{1,2}}:\d{{2}}:\d{{2}}(?:[.,]\d+)?(?![0-9]))
    |(?P<tmp>(?:/private)?/(?:tmp|var/tmp|var/folders(?:/[^/\s'"`,;)\]}}]*){{0,3}})/[^/\s'"`,;)\]}}]*
      |[A-Za-z]:\\[^\s'"`]*?\\Temp\\[^\\\s'"`,;)\]}}]*
      |{_NOT_ALNUM_BEFORE}tmp[_-]?(?=[0-9A-Za-z_]*[0-9])[0-9A-Za-z_]{{5,}}{_NOT_ALNUM_AFTER})
    |(?P<duration>(?<![0-9A-Za-z.])(?:\d+(?:\.\d+)?(?:ms|us|µs|ns|d|h|m|s)){{2,}}(?![0-9A-Za-z])
      |(?<![0-9A-Za-z.])\d+\.\d+\ ?{_UNITS}(?![A-Za-z])
      |(?<![0-9A-Za-z.])\d+\ ?(?:ns|us|µs|ms|s|secs?|seconds?|mins?|minutes?|hrs?|hours?)
        (?![A-Za-z]))
    |(?P<wait>(?:\b(?:took|elapsed|after|in|duration|latency|waited|wait)|耗时|用时|历时)
        \s*[:：]?\s*)(?:\d+(?:\.\d+)?\ ?(?:{_UNITS}|毫秒|秒|分钟))+(?![A-Za-z])
    |(?P<epoch>(?<![0-9A-Za-z.])1\d{{9}}(?:\d{{3}})?(?:\.\d+)?(?![0-9A-Za-z]))
    |(?P<pod>(?<![0-9A-Za-z])(?=[a-z0-9]{{6,10}}-)(?=[a-z0-9]*[0-9])(?-i:[a-z0-9]{{6,10}}
        -[a-z0-9]{{5}})(?![0-9A-Za-z-]))
    |(?P<id>{_NOT_ALNUM_BEFORE}(?=[0-9A-Za-z]*[0-9])(?=[0-9A-Za-z]*[A-Za-z])[0-9A-Za-z]{{16,128}}
        {_NOT_ALNUM_AFTER}
      |(?-i:{_NOT_ALNUM_BEFORE}(?=[0-9A-Za-z]*[0-9])(?=[0-9A-Za-z]*[a-z])(?=[0-9A-Za-z]*[A-Z])
        [0-9A-Za-z]{{10,128}}{_NOT_ALNUM_AFTER}))
    |(?P<hex>{_NOT_ALNUM_BEFORE}(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{{7,128}}
        {_NOT_ALNUM_AFTER})
    |(?P<counter>\b(?:attempt|retry|retries|try|tries|iteration|iter|seq|sequence|nonce|pid
        |pgid|ppid)\b[\ \t:=\#]*|(?-i:\b(?:In|Out)\ ?\[))\d+
    |(?P<ordinal>第\ ?)\d+(?=\ ?[次轮遍回])
    |(?P<digits>{_NOT_ALNUM_BEFORE}\d{{7,40}}(?![0-9]))
    """
_VOLATILE = re.compile(f"{_GUARD}(?:{_TOKENS})", re.VERBOSE | re.IGNORECASE)
_PLAIN = {
    "uuid": "<uuid>",
    "time": "<time>",
    "tmp": "<tmp>",
    "duration": "<duration>",
    # one class for these four: an issued id of fixed length and alphabet falls in any of them
    # by chance (a 12-digit hex id is all digits one time in 280, and a 10-digit one of those
    # that starts with 1 is an epoch), and a stuck agent's laps must key alike whichever it drew
    "epoch": "<id>",
    "id": "<id>",
    "hex": "<id>",
    "pod": "<pod>",
    "digits": "<id>",
}
#: What a string holds when it may hold a volatile token: a digit, or a temp path (the names
#: ``mkdtemp`` makes have no digit one time in twelve).
_HINT = re.compile(r"[0-9]|tmp|temp|/var/folders", re.IGNORECASE)
#: Short strings recur (a stuck agent's results do, and so do flight numbers and the like):
#: their masked forms are remembered, up to this many, then the memory starts over.
_MEMO_SIZE = 4096
_MEMO_LENGTH = 256
_MASKED: dict[str, str] = {}
_MASKED_ARGS: dict[str, str] = {}


def _replace(match: re.Match[str]) -> str:
    group = match.lastgroup
    if group == "counter" or group == "ordinal":  # attempt 4, 第4次
        return match.group(group) + "<n>"
    if group == "wait":
        return match.group("wait") + "<duration>"
    if group == "duration" and match.group(0)[-1:].isalpha():
        units = _UNIT_PARTS.findall(match.group(0))
        if len(units) > 1 and len(set(units)) < len(units):
            # a unit twice (``0000d0d``) is no compound duration: a hex id that drew it
            token = match.group(0)
            return "<id>" if len(token) >= 7 else token
    return _PLAIN[group or "digits"]


#: The units of a compound duration (``1h30m``: h, m).
_UNIT_PARTS = re.compile(r"(?<=\d)(ms|us|µs|ns|d|h|m|s)")


def mask_text(text: str) -> str:
    """``text`` with every volatile token replaced by its type: ``<uuid>``, ``<time>`` (ISO and
    RFC timestamps, times of day with seconds), ``<tmp>`` (temp paths and names),
    ``<duration>`` (``1.83s``, ``412ms``, ``took 3s``), ``<id>`` (mixed letters and digits,
    16 to 128 of them; hex runs of 7 to 128; runs of 7 to 40 digits; epoch seconds or
    milliseconds: one class, as a random id drawn from one alphabet may fall in any of them),
    ``<n>`` after
    ``attempt``/``retry``/``pid``/``seq``... and in ``第4次``.
    A longer token is content, not an id. Every volatile token but a temp path holds a
    digit, so text without either is returned as is."""
    return _masked(text, _MASKED, _replace)


def _masked(text: str, memo: dict[str, str], replace: Any) -> str:
    """``text`` masked by ``replace``, remembered in ``memo`` when short."""
    short = len(text) <= _MEMO_LENGTH
    if short:
        known = memo.get(text)
        if known is not None:
            return known
    masked = text if _HINT.search(text) is None else _fixpoint(replace, text)
    if short:
        _remember(memo, text, masked)
    return masked


def _fixpoint(replace: Any, text: str) -> str:
    """``_VOLATILE.sub`` until nothing changes (a few passes at most): a token masked next to
    another ("0d0d0000000": a duration, then digits the letter before hid) would otherwise be
    masked only by a second masking, and masking must be idempotent."""
    for _ in range(4):
        masked = _VOLATILE.sub(replace, text)
        if masked == text:
            return masked
        text = masked
    return text


def _remember(memo: dict[str, str], text: str, masked: str) -> None:
    if len(memo) >= _MEMO_SIZE:
        memo.clear()
    memo[text] = masked


def mask(value: Any, ignore: Collection[str] = ()) -> Any:
    """What a call returned (its result, a state, a model's output: plain JSON-like data, as a
    trace records it) with its volatile parts masked: volatile tokens in every string
    (:func:`mask_text`), epoch-like numbers, and the values of volatile fields replaced by
    ``"<volatile>"`` at any depth: :data:`VOLATILE_FIELDS`, names ending in ``_at``/``At``
    or ``_id``/``Id`` (ids generated for this call), measured times (``load_time_ms``,
    ``elapsed_s``), and the fields named in ``ignore``. Returns new containers; ``value`` is
    not changed. A value the trace cut to size (a marker with the digest of the whole value)
    is kept as it is: its digest is its content."""
    return _mask(value, ignore, True)


def mask_args(value: Any, ignore: Collection[str] = ()) -> Any:
    """A call's arguments with their volatile parts masked. Arguments are the agent's choice,
    so less is volatile there than in a result: the fields that identify or count the call
    itself (:data:`CALL_FIELDS`: request ids, timestamps of the call, nonces, attempt
    counters, temp files) and those named in ``ignore`` are masked whole, and in strings only
    temp paths and counters after ``attempt``/``retry``/``pid``...; an id, a date or a
    duration passed as an argument is what the call is about."""
    return _mask(value, ignore, False)


def _mask(value: Any, ignore: Collection[str], returned: bool) -> Any:
    kind = type(value)  # the exact JSON types first: what a trace holds, at a dict lookup each
    if kind is str:
        return mask_value_text(value, ignore) if returned else _mask_arg_text(value)
    if kind is dict:
        return _mask_mapping(value, ignore, returned)
    if kind is list:
        return [_mask(item, ignore, returned) for item in value]
    if kind is bool or value is None:
        return value
    if kind is int or kind is float:
        return "<epoch>" if returned and _epoch(value) else value
    if isinstance(value, str):
        return mask_value_text(str(value), ignore) if returned else _mask_arg_text(str(value))
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return "<epoch>" if returned and _epoch(value) else value
    if isinstance(value, Mapping):
        return _mask_mapping(value, ignore, returned)
    if isinstance(value, (list, tuple)):
        return [_mask(item, ignore, returned) for item in value]
    return value


def _mask_mapping(value: Mapping[Any, Any], ignore: Collection[str], returned: bool) -> Any:
    if TRUNCATED in value:
        return value
    text: Callable[[str], str]
    if returned:
        names, memo, text = _RESULT_NAMES, _MASKED_VALUES, _mask_result_text
    else:
        names, memo, text = _ARG_NAMES, _MASKED_ARGS, _mask_arg_text
    masked: dict[Any, Any] = {}
    for key, item in value.items():
        if type(key) is str or isinstance(key, str):
            volatile = names.get(key)
            if volatile is None:
                volatile = _is_volatile_name(key, returned)
            if volatile or (ignore and key in ignore):
                masked[key] = "<volatile>"
                continue
        kind = type(item)  # the common leaves inline: a call per value is most of the cost
        if kind is str:
            if not returned and type(key) is str and _label_field(key):
                masked[key] = _mask_label(_mask_arg_text(item))
                continue
            if ignore and returned:  # JSON text inside is masked with the fields ignored too
                masked[key] = mask_value_text(item, ignore)
                continue
            known = memo.get(item)
            masked[key] = known if known is not None else text(item)
        elif kind is int or kind is float:
            if returned and (1e9 <= item < 2e9 or 1e12 <= item < 2e12):
                masked[key] = "<epoch>"  # the clock, not a quantity (see _epoch)
            else:
                masked[key] = item
        elif kind is list:  # a list of records (rows, hits): each one masked without _mask
            masked[key] = [
                _mask_mapping(x, ignore, returned)
                if type(x) is dict
                else _mask(x, ignore, returned)
                for x in item
            ]
        else:
            masked[key] = _mask(item, ignore, returned)
    return masked


#: How much of a returned text is read: a longer one is masked at both ends (half each) and
#: keeps its length, so a 100 MB output costs what 256 KB does.
_VALUE_LIMIT = 256 * 1024
#: The longest JSON text parsed before masking (longer ones are masked as text).
_JSON_LIMIT = 1024 * 1024
_MASKED_VALUES: dict[str, str] = {}

#: ``name=value``, ``name: value``, ``"name": value`` in prose or in JSON-looking text that does
#: not parse: the field-name rule applies to the value as it does in a dict.
_PAIR = re.compile(
    r"""(?P<name>(?<![\w.-])[^\W\d][\w.-]{0,48}(?<![.-]))(?P<sep>"?'?\s{0,3}[=:：]\s{0,3})"""
    r"""(?P<value>"(?:[^"\\\n]|\\.){0,200}"|'[^'\n]{0,200}'|[^\s,;&|)}\]'"，；。）】」]{1,200})"""
)


def mask_value_text(text: str, ignore: Collection[str] = ()) -> str:
    """A returned text (a result, a state, a model's output) with what changes by itself
    masked: JSON text (an object or array, as a shell wrapper, an MCP text content or an HTTP
    body gives it) is parsed and masked as the data it holds, then written back as canonical
    JSON; other text has the field-name rule applied to its ``name=value`` / ``name: value`` /
    ``"name": value`` pairs (``request_id=...``, ``took: ...``) before :func:`mask_text`."""
    if not ignore:
        known = _MASKED_VALUES.get(text)
        if known is not None:
            return known
    return _mask_result_text(text, ignore)


def _mask_result_text(text: str, ignore: Collection[str] = ()) -> str:
    short = len(text) <= _MEMO_LENGTH and not ignore
    if len(text) > _VALUE_LIMIT:
        half = _VALUE_LIMIT // 2
        masked = (
            f"{_mask_result_text(text[:half], ignore)}<cut {len(text)}>"
            f"{_mask_result_text(text[-half:], ignore)}"
        )
    else:
        masked = _mask_prose(text, ignore)
    if short:
        _remember(_MASKED_VALUES, text, masked)
    return masked


def _mask_prose(text: str, ignore: Collection[str]) -> str:
    head = text.lstrip()[:1]
    if head in ("{", "[") and len(text) <= _JSON_LIMIT:
        parsed = parse_json_text(text)
        if parsed is not None:
            try:
                return _canonical_text(_mask(parsed, ignore, True))
            except (ValueError, TypeError, RecursionError):
                pass
    kept: list[str] = []
    if "id " in text or "ID " in text or "Id " in text:
        text = _SPACED_ID.sub(_mask_spaced_id, text)
    if "=" in text or ":" in text or "：" in text:
        text = _PAIR.sub(lambda m: _mask_pair(m, ignore), text)
        if _NAMED_NUMBER.search(text) is not None:

            def keep(match: re.Match[str]) -> str:
                if _epoch(int(match.group("n"))):
                    return match.group(0)  # the clock, masked as in data
                kept.append(match.group("n"))
                return f"{match.group('head')}\x00{len(kept) - 1}\x00"

            text = _NAMED_NUMBER.sub(keep, text)
    masked = mask_text(text)
    if kept:  # a named whole number is kept, as in data ({"rows_done": 1000000})
        masked = _KEPT.sub(lambda m: kept[int(m.group(1))], masked)
    return masked


#: A whole number named by a field in prose (``rows_done=1000000``, ``total: 5000000``): a
#: quantity, kept as the same field's number is in data, however many digits it has.
_NAMED_NUMBER = re.compile(
    r"(?P<head>\b[^\W\d][\w-]{0,47}[\"']?\s?[=:：]\s?)(?P<n>\d{7,40})(?![\w.])"
)
_KEPT = re.compile(r"\x00(\d+)\x00")


def parse_json_text(text: str) -> Any:
    """The object or array a JSON text (of at most 1 MiB) holds; None for any other text."""
    if len(text) > _JSON_LIMIT:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, (dict, list)) else None


def _canonical_text(value: Any) -> str:
    return json.dumps(
        value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr
    )


def _mask_pair(match: re.Match[str], ignore: Collection[str]) -> str:
    name = match.group("name")
    if _is_volatile_name(name, True) or (ignore and name in ignore):
        value = match.group("value")
        quote = value[0] if value[0] in "\"'" else ""
        return f"{name}{match.group('sep')}{quote}<volatile>{quote}"
    return match.group(0)


#: A call's id named in prose by two words, without a separator: ``correlation id 14390``,
#: ``request ID 7f3a``, ``trace-id #88``.
_SPACED_ID = re.compile(
    r"(?<![\w-])(?P<name>[A-Za-z]{2,20}[ _-](?:id|ID|Id)) ?#?(?P<value>[A-Za-z0-9][\w.-]{0,80})"
    r"(?![\w-])"
)


def _mask_spaced_id(match: re.Match[str]) -> str:
    """Mask the value of a call's id named in prose (``correlation id 14390``): the name is
    one of the fields that identify the call itself; another id (``order id 8812``) is
    what the text is about, and stays."""
    if _call_field(match.group("name").replace(" ", "_")):
        return f"{match.group('name')} <volatile>"
    return match.group(0)


_ARG_KINDS = frozenset({"tmp", "counter", "ordinal"})


#: What an argument's text holds when masking may change it: a temp path's or a counter's
#: words, a time of day with seconds (a stamp), a credential's words (a superset: the tokens
#: masked in arguments all begin with or hold one of these).
_ARG_HINT = re.compile(
    r"tmp|temp|var/folders|attempt|retr|tries|try|iter|seq|nonce|pid|pgid|in ?\[|out ?\["
    r"|\d:\d\d:\d\d|bearer|basic|token|key|auth|secret|pass|cookie|sig|session|第",
    re.IGNORECASE,
)
#: A credential in text: an authorization scheme and its token.
_SCHEME = re.compile(r"\b(Bearer|Basic|Token|Digest)(\s+)[A-Za-z0-9._~+/=-]{6,}", re.IGNORECASE)
#: A time of day with seconds that are not ``:00`` or with a fraction: a stamp from a clock,
#: not a time the agent chose (a departure at ``10:00:00`` is content).
_STAMP = re.compile(r"\d:\d\d:(?!00(?![.,]\d))\d\d(?![0-9])|:\d\d[.,]\d")


def _mask_arg_text(text: str) -> str:
    if len(text) > _VALUE_LIMIT:
        # bounded work: both ends masked, the middle kept as its digest (an argument is
        # content: two that differ only in the middle stay apart)
        half = _VALUE_LIMIT // 2
        middle = hashlib.blake2b(
            text[half:-half].encode("utf-8", "surrogatepass"), digest_size=8
        ).hexdigest()
        return (
            f"{_mask_arg_text(text[:half])}<cut {len(text)} {middle}>{_mask_arg_text(text[-half:])}"
        )
    known = _MASKED_ARGS.get(text)
    if known is not None:
        return known
    if _ARG_HINT.search(text) is None:  # nothing an argument's text masks
        if len(text) <= _MEMO_LENGTH:
            _remember(_MASKED_ARGS, text, text)  # agents pass the same texts again and again
        return text
    before, masked = text, _mask_arg_once(text)
    for _ in range(3):  # masking one part can bare a pair the last pass did not see whole
        if masked == before:
            break
        before, masked = masked, _mask_arg_once(masked)
    if len(text) <= _MEMO_LENGTH:
        _remember(_MASKED_ARGS, text, masked)
    return masked


def _mask_arg_once(text: str) -> str:
    masked = text
    if len(masked) <= _VALUE_LIMIT:
        masked = _SCHEME.sub(r"\1\2<credential>", masked)
        if "=" in masked or ":" in masked:
            masked = _PAIR.sub(_mask_arg_pair, masked)
    return _fixpoint(_replace_in_arg, masked) if _HINT.search(masked) else masked


def _mask_arg_pair(match: re.Match[str]) -> str:
    name = match.group("name")
    if _is_volatile_name(name, False):
        value = match.group("value")
        quote = value[0] if value[0] in "\"'" else ""
        return f"{name}{match.group('sep')}{quote}<volatile>{quote}"
    return match.group(0)


def _replace_in_arg(match: re.Match[str]) -> str:
    group = match.lastgroup
    if group in _ARG_KINDS:
        return _replace(match)
    if group == "time" and _STAMP.search(match.group(0)):
        return "<time>"
    return match.group(0)


#: A counter at the end of a label: ``4``, ``#4``, ``(4)``, ``4/5``, ``-3``, ``_3``, ``v2``.
_TRAILING_COUNTER = re.compile(
    r"(?<=[^\d\s])(?P<sep>[\s_#-]*[(\[]?\s*#?)\d+(?:\s*/\s*\d+)?(?P<close>\s*[)\]]?\s*)$"
)


def _mask_label(text: str) -> str:
    """A label without its trailing counter (``attempt 4`` -> ``attempt <n>``)."""
    if len(text) > 200 or not text[-1:].isdigit() and text.rstrip()[-1:] not in (")", "]"):
        return text
    return _TRAILING_COUNTER.sub(lambda m: f"{m.group('sep')}<n>{m.group('close')}", text, count=1)
