"""What an action looks like once the details that change by themselves are masked.

A stuck agent's calls differ on every attempt in details no decision depends on: a timestamp,
a request id, a temp file name, the milliseconds a call took. Keyed as they are, identical
actions never repeat. :func:`mask` replaces such tokens by their type (``<time>``, ``<uuid>``
...) before an action is digested; :func:`error_template` also masks numbers, quoted values
and paths in an error message, so "the same error" survives a changing line number or file
name; :func:`text_tokens` reduces model text to its words for near-duplicate checks.

Masking is by the token's shape, never by position: two values whose other content differs
never mask to the same thing, and masking a masked value changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from ..trace.values import TRUNCATED

__all__ = ["VOLATILE_FIELDS", "error_template", "mask", "mask_text", "text_tokens"]

#: Field names whose values change on every call (compared lowercased, without ``_``/``-``):
#: their values are masked whole, whatever they hold.
VOLATILE_FIELDS = frozenset(
    {
        "timestamp",
        "ts",
        "datetime",
        "now",
        "createdat",
        "updatedat",
        "modifiedat",
        "lastmodified",
        "expiresat",
        "requestid",
        "reqid",
        "messageid",
        "msgid",
        "traceid",
        "spanid",
        "correlationid",
        "runid",
        "sessionid",
        "idempotencykey",
        "nonce",
        "uuid",
        "guid",
        "etag",
        "pid",
        "attempt",
        "attempts",
        "retry",
        "retries",
        "retrycount",
        "elapsed",
        "elapsedms",
        "elapsedseconds",
        "duration",
        "durationms",
        "latency",
        "latencyms",
        "took",
        "tookms",
        "seq",
        "sequence",
        "sequencenumber",
        "iteration",
        "tmpdir",
        "tmpfile",
        "tempfile",
        "tempdir",
    }
)

_UNITS = r"(?:ns|us|µs|ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hrs?|hours?)"
_NOT_ALNUM_BEFORE = r"(?<![0-9A-Za-z])"
_NOT_ALNUM_AFTER = r"(?![0-9A-Za-z])"

#: One pass over a string finds every volatile token; the first alternative that matches at a
#: position wins, so the order matters (a UUID before its hex runs, a timestamp before digits).
_VOLATILE = re.compile(
    rf"""
    (?P<uuid>{_NOT_ALNUM_BEFORE}[0-9a-fA-F]{{8}}-[0-9a-fA-F]{{4}}-[0-9a-fA-F]{{4}}-[0-9a-fA-F]{{4}}
        -[0-9a-fA-F]{{12}}{_NOT_ALNUM_AFTER})
    |(?P<time>(?<![0-9])\d{{4}}-\d{{2}}-\d{{2}}[T\ ]\d{{2}}:\d{{2}}(?::\d{{2}}(?:[.,]\d+)?)?
        (?:Z|[+-]\d{{2}}:?\d{{2}}|\ ?UTC|\ ?GMT)?(?![0-9])
      |(?<![0-9:])\d{{1,2}}:\d{{2}}:\d{{2}}(?:[.,]\d+)?(?![0-9]))
    |(?P<tmp>(?:/private)?/(?:tmp|var/tmp|var/folders)/[^\s'"`,;)\]}}]*
      |[A-Za-z]:\\[^\s'"`]*?\\Temp\\[^\s'"`,;)\]}}]*
      |{_NOT_ALNUM_BEFORE}tmp[_-]?(?=[0-9A-Za-z_]*[0-9])[0-9A-Za-z_]{{5,}}{_NOT_ALNUM_AFTER})
    |(?P<duration>(?<![0-9A-Za-z.])\d+\.\d+\ ?{_UNITS}(?![A-Za-z])
      |(?<![0-9A-Za-z.])\d+\ ?(?:ns|us|µs|ms)(?![A-Za-z]))
    |(?P<wait>\b(?:took|elapsed|after|in|duration|latency|waited|wait)\s*:?\s*)
        \d+\ ?{_UNITS}(?![A-Za-z])
    |(?P<epoch>(?<![0-9A-Za-z.])1\d{{9}}(?:\d{{3}})?(?:\.\d+)?(?![0-9]))
    |(?P<id>{_NOT_ALNUM_BEFORE}(?=[0-9A-Za-z]*[0-9])(?=[0-9A-Za-z]*[A-Za-z])[0-9A-Za-z]{{16,128}}
        {_NOT_ALNUM_AFTER})
    |(?P<hex>{_NOT_ALNUM_BEFORE}(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{{8,128}}
        {_NOT_ALNUM_AFTER})
    |(?P<counter>\b(?:attempt|retry|retries|try|tries|iteration|iter|seq|sequence|nonce|pid)
        \b[\ \t:=\#]*)\d+
    |(?P<digits>{_NOT_ALNUM_BEFORE}\d{{7,40}}(?![0-9]))
    """,
    re.VERBOSE | re.IGNORECASE,
)
_PLAIN = {
    "uuid": "<uuid>",
    "time": "<time>",
    "tmp": "<tmp>",
    "duration": "<duration>",
    "epoch": "<epoch>",
    "id": "<id>",
    "hex": "<hex>",
    "digits": "<num>",
}
_DIGIT = re.compile(r"\d")


def _replace(match: re.Match[str]) -> str:
    group = match.lastgroup
    if group == "counter":
        return match.group("counter") + "<n>"
    if group == "wait":
        return match.group("wait") + "<duration>"
    return _PLAIN[group or "digits"]


def mask_text(text: str) -> str:
    """``text`` with every volatile token replaced by its type: ``<uuid>``, ``<time>`` (ISO and
    RFC timestamps, times of day with seconds), ``<epoch>``, ``<tmp>`` (temp paths and names),
    ``<duration>`` (``1.83s``, ``412ms``, ``took 3s``), ``<id>`` and ``<hex>`` (mixed
    letters and digits, 16 to 128 of them; hex runs of 8 to 128), ``<n>`` after
    ``attempt``/``retry``/``pid``/``seq``..., ``<num>`` (7 to 40 digits). A longer token is
    content, not an id. Every volatile token holds a digit, so text without digits is
    returned as is."""
    if _DIGIT.search(text) is None:
        return text
    return _VOLATILE.sub(_replace, text)


def _field(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "")


def _volatile_field(name: str) -> bool:
    return (
        _field(name) in VOLATILE_FIELDS
        or name.endswith("_at")
        or (len(name) > 2 and name.endswith("At") and name[:-2].isalpha() and name[0].islower())
    )


_VOLATILE_NAMES: dict[str, bool] = {}


def _is_volatile_name(name: str) -> bool:
    found = _VOLATILE_NAMES.get(name)
    if found is None:
        found = _volatile_field(name)
        if len(_VOLATILE_NAMES) < 4096:
            _VOLATILE_NAMES[name] = found
    return found


def _epoch(number: float) -> bool:
    """Seconds or milliseconds since 1970 between 2001 and 2033: the clock, not a quantity."""
    return 1e9 <= number < 2e9 or 1e12 <= number < 2e12


def mask(value: Any, ignore: Collection[str] = ()) -> Any:
    """``value`` (plain JSON-like data, as a trace records it) with volatile tokens masked in
    every string, epoch-like numbers masked, and the values of volatile fields
    (:data:`VOLATILE_FIELDS`, ``*_at``, ``*At``) and of the fields named in ``ignore``
    replaced by ``"<volatile>"``, at any depth. Returns new containers; ``value`` is not
    changed. A value the trace cut to size (a marker with the digest of the whole value) is
    kept as it is: its digest is its content."""
    if isinstance(value, str):
        return mask_text(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return "<epoch>" if _epoch(value) else value
    if isinstance(value, Mapping):
        if TRUNCATED in value:
            return value
        masked: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, str) and (key in ignore or _is_volatile_name(key)):
                masked[key] = "<volatile>"
            else:
                masked[key] = mask(item, ignore)
        return masked
    if isinstance(value, (list, tuple)):
        return [mask(item, ignore) for item in value]
    return value


#: How much of an error message its template keeps (tracebacks run long; the head says it).
_TEMPLATE_LIMIT = 2000

_MESSAGE_PARTS = re.compile(
    r"""
    (?P<url>\b[a-z][a-z0-9+.-]*://[^\s'"`<>]+)
    |(?P<quoted>(?<![A-Za-z])'[^'\n]{0,200}'(?![A-Za-z])|"[^"\n]{0,200}"|`[^`\n]{0,200}`)
    |(?P<path>(?:[A-Za-z]:\\|~?/|\.{1,2}/)[^\s'"`,;:()\[\]{}<>]*
      |\b[\w.-]+(?:/[\w.-]+)+)
    |(?P<number>\d+(?:\.\d+)?)
    """,
    re.VERBOSE,
)
_SPACE = re.compile(r"\s+")


def _message_part(match: re.Match[str]) -> str:
    return f"<{match.lastgroup}>"


def error_template(message: str | None) -> str:
    """An error message as a template: volatile tokens, URLs, quoted values, paths and
    numbers masked, whitespace collapsed. The same error about another file, line or id
    gives the same template; a different error gives a different one."""
    if not message:
        return ""
    text = mask_text(message[:_TEMPLATE_LIMIT])
    return _SPACE.sub(" ", _MESSAGE_PARTS.sub(_message_part, text)).strip()


_WORD = re.compile(r"<[a-z]+>|[^\W_]+(?:'[^\W_]+)?")
#: How much of a model's text near-duplicate checks read.
_TEXT_LIMIT = 4000


def text_tokens(text: str) -> frozenset[str]:
    """The distinct words of ``text`` (lowercased, volatile tokens masked, punctuation
    dropped): what near-duplicate model outputs share."""
    return frozenset(_WORD.findall(mask_text(text[:_TEXT_LIMIT]).lower()))
