"""Error classification: is a failure worth retrying, and what kind of failure is it?

An :class:`ErrorClassifier` maps an error to a :class:`ErrorClass`: a kind (``transient``,
``persistent`` or ``unknown``), a category (``timeout``, ``rate_limit``, ``auth``,
``validation``, ``not_found``, ``server_error``, ``connection``, ``llm_refusal`` or
``unknown``), the rule that decided it and any Retry-After the error carries.

Evidence is weighed in a fixed order, most reliable first: an explicit HTTP status, then the
exception (its status, then its type by MRO class *name*, so httpx, requests, urllib3 and SDK
errors are recognised without importing them; ``raise ... from`` causes are followed), then
the message (English and Chinese patterns, and a status the message names, e.g.
``Error code: 429``). Every table is data in a :class:`ClassifierPolicy`.

The classifier is stateful per tool (seed 000's statistical rule): a tool whose transient
failures keep repeating is escalated to persistent, since retrying it is no longer paying off.
"""

from __future__ import annotations

import builtins
import math
import re
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import timezone
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from types import MappingProxyType
from typing import Any, Literal, Protocol, TypeAlias, TypeGuard, cast, get_args

from ..config import check_table
from ..errors import config_error as fail
from ..status import attr as _attr
from ..status import is_status as _is_status
from ..status import status_of as _status_of
from ..trace.events import ModelResult, ToolResult

Kind: TypeAlias = Literal["transient", "persistent", "unknown"]
Category: TypeAlias = Literal[
    "timeout",
    "rate_limit",
    "auth",
    "validation",
    "not_found",
    "server_error",
    "connection",
    "llm_refusal",
    "unknown",
]


class Headers(Protocol):
    """Response headers: a mapping (httpx, requests, a dict) or an ``email.message.Message``
    (urllib); anything whose ``items()`` gives name/value pairs."""

    def items(self) -> Iterable[tuple[str, str]]: ...


#: A table entry: what an HTTP status, an exception name or a pattern means.
Verdict: TypeAlias = tuple[Kind, Category]

KINDS: tuple[Kind, ...] = get_args(Kind)
CATEGORIES: tuple[Category, ...] = get_args(Category)

#: The kind a category has when a table entry names only the category.
CATEGORY_KINDS: Mapping[Category, Kind] = MappingProxyType(
    {
        "timeout": "transient",
        "rate_limit": "transient",
        "connection": "transient",
        "server_error": "transient",
        "auth": "persistent",
        "validation": "persistent",
        "not_found": "persistent",
        "llm_refusal": "persistent",
        "unknown": "unknown",
    }
)

#: Messages longer than this are read at both ends (half each): an HTML error page or a long
#: body cannot make classification slow, and a traceback's last line (the error) is still read.
MAX_MESSAGE = 2048


@dataclass(frozen=True, slots=True)
class ErrorClass:
    """How an error was classified and why.

    ``reason`` names the rule that decided (``status 429``, ``exception ReadTimeout (a
    TimeoutException)``, ``message matches /rate[ _-]?limit/``), so a failure report can say
    why the stack retried or gave up. ``escalated`` is set when a transient error became
    persistent because its tool kept failing.
    """

    kind: Kind
    category: Category
    reason: str
    retry_after: float | None = None
    escalated: bool = False

    @property
    def transient(self) -> bool:
        """Worth retrying (after a backoff)."""
        return self.kind == "transient"

    @property
    def persistent(self) -> bool:
        """Retrying the same call will not help."""
        return self.kind == "persistent"

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form, for trace events."""
        return {
            "kind": self.kind,
            "category": self.category,
            "reason": self.reason,
            "retry_after": self.retry_after,
            "escalated": self.escalated,
        }


@dataclass(frozen=True, slots=True)
class MessageRule:
    """A message pattern (compiled once, case-insensitive) and what a match means."""

    kind: Kind
    category: Category
    pattern: re.Pattern[str]

    @classmethod
    def of(cls, category: Category, regex: str, kind: Kind | None = None) -> MessageRule:
        """A rule for ``regex``; ``kind`` defaults to the category's kind."""
        return cls(kind or CATEGORY_KINDS[category], category, re.compile(regex, re.IGNORECASE))


# -- default tables ---------------------------------------------------------------------------

_T: Kind = "transient"
_P: Kind = "persistent"

DEFAULT_STATUS: Mapping[int, Verdict] = MappingProxyType(
    {
        400: (_P, "validation"),
        401: (_P, "auth"),
        403: (_P, "auth"),
        404: (_P, "not_found"),
        405: (_P, "validation"),
        406: (_P, "validation"),
        407: (_P, "auth"),
        408: (_T, "timeout"),
        409: (_P, "validation"),
        410: (_P, "not_found"),
        411: (_P, "validation"),
        412: (_P, "validation"),
        413: (_P, "validation"),
        414: (_P, "validation"),
        415: (_P, "validation"),
        422: (_P, "validation"),
        429: (_T, "rate_limit"),
        431: (_P, "validation"),
        499: (_T, "connection"),
        500: (_T, "server_error"),
        501: (_P, "server_error"),
        502: (_T, "server_error"),
        503: (_T, "server_error"),
        504: (_T, "timeout"),
        505: (_P, "server_error"),
        524: (_T, "timeout"),
        598: (_T, "timeout"),
        599: (_T, "timeout"),
    }
)

#: Statuses not in the table, by class (4 for 4xx, 5 for 5xx). 1xx-3xx are not errors: they
#: classify nothing, and the exception and message decide (a "200 with an error body").
DEFAULT_STATUS_CLASSES: Mapping[int, Verdict] = MappingProxyType(
    {4: (_P, "unknown"), 5: (_T, "server_error")}
)

#: Exception class names, matched along the MRO (most derived first): builtins, httpx,
#: requests, urllib3, aiohttp, http.client, OpenAI/Anthropic SDKs and our injected faults.
DEFAULT_EXCEPTIONS: Mapping[str, Verdict] = MappingProxyType(
    {
        # timeouts: builtin (also asyncio's and socket.timeout), httpx, requests, urllib3, SDKs
        "TimeoutError": (_T, "timeout"),
        "InjectedTimeout": (_T, "timeout"),
        "TimeoutException": (_T, "timeout"),
        "ConnectTimeout": (_T, "timeout"),
        "ReadTimeout": (_T, "timeout"),
        "WriteTimeout": (_T, "timeout"),
        "PoolTimeout": (_T, "timeout"),
        "Timeout": (_T, "timeout"),
        "ReadTimeoutError": (_T, "timeout"),
        "ConnectTimeoutError": (_T, "timeout"),
        "ServerTimeoutError": (_T, "timeout"),
        "APITimeoutError": (_T, "timeout"),
        "DeadlineExceeded": (_T, "timeout"),
        # connections
        "ConnectionError": (_T, "connection"),
        "InjectedConnectionError": (_T, "connection"),
        "ConnectError": (_T, "connection"),
        "NetworkError": (_T, "connection"),
        "ReadError": (_T, "connection"),
        "WriteError": (_T, "connection"),
        "CloseError": (_T, "connection"),
        "RemoteProtocolError": (_T, "connection"),
        "ProtocolError": (_T, "connection"),
        "ProxyError": (_T, "connection"),
        "NewConnectionError": (_T, "connection"),
        "ChunkedEncodingError": (_T, "connection"),
        "IncompleteRead": (_T, "connection"),
        "RemoteDisconnected": (_T, "connection"),
        "gaierror": (_T, "connection"),
        "ClientConnectionError": (_T, "connection"),
        "ServerDisconnectedError": (_T, "connection"),
        "APIConnectionError": (_T, "connection"),
        "SSLCertVerificationError": (_P, "connection"),
        "CertificateError": (_P, "connection"),
        # bad arguments and requests the server cannot accept
        "ValueError": (_P, "validation"),
        "TypeError": (_P, "validation"),
        "JSONDecodeError": (_P, "validation"),
        "ValidationError": (_P, "validation"),
        "LocalProtocolError": (_P, "validation"),
        "UnsupportedProtocol": (_P, "validation"),
        "InvalidURL": (_P, "validation"),
        "MissingSchema": (_P, "validation"),
        "InvalidSchema": (_P, "validation"),
        "InvalidHeader": (_P, "validation"),
        "BadRequestError": (_P, "validation"),
        "UnprocessableEntityError": (_P, "validation"),
        # credentials and permissions
        "PermissionError": (_P, "auth"),
        "AuthenticationError": (_P, "auth"),
        "PermissionDeniedError": (_P, "auth"),
        # missing things
        "FileNotFoundError": (_P, "not_found"),
        "NotFoundError": (_P, "not_found"),
        # rate limits
        "RateLimitError": (_T, "rate_limit"),
        "TooManyRequests": (_T, "rate_limit"),
        "ResourceExhausted": (_T, "rate_limit"),
        "ThrottlingException": (_T, "rate_limit"),
        # the server's side
        "InternalServerError": (_T, "server_error"),
        "ServiceUnavailable": (_T, "server_error"),
        "ServiceUnavailableError": (_T, "server_error"),
        "OverloadedError": (_T, "server_error"),
        "NotImplementedError": (_P, "server_error"),
        # the model declined
        "ContentFilterFinishReasonError": (_P, "llm_refusal"),
        "ContentPolicyViolationError": (_P, "llm_refusal"),
    }
)

_CJK_SORRY = r"(?:很|非常)?抱歉[,，。!！\s]*(?:但是?[,，\s]*)?"

#: Message rules by family, tried in this order; the first match decides. Specific families
#: come first (a refusal or a rate limit names itself), generic ones last ("server error",
#: "try again later"); timeouts precede connections ("connection timed out" is a timeout).
_RULES: tuple[tuple[Category, Kind | None, tuple[str, ...]], ...] = (
    # an LLM declining: model output, never a tool's error text
    ("llm_refusal", None, (
        r"\bI(?:'|’| a)?m sorry,? but I (?:can(?:no|'|’)?t|won(?:'|’)t|am unable|am not able)",
        r"\bI (?:can(?:no|'|’)?t|won(?:'|’)t|am unable to|am not able to) "
        r"(?:help|assist|comply|fulfil+|provide that|do that)\b",
        r"\bas an AI(?: language model| assistant| model)?\b",
        r"\bcannot fulfil+ (?:that|this|your) request|rejected as a result of our safety system",
        r"\b(?:violates?|against) (?:our|my|the) (?:content|usage|safety) polic",
        r"content[ _](?:policy|filter|management polic)",
        _CJK_SORRY + r"我(?:无法|不能|没办法|没有办法)",
        r"作为(?:一个|一名)?(?:AI|人工智能)(?:语言模型|助手|模型)?",
        r"根据我的使用(?:条款|政策|准则)",
        r"我无法(?:提供|协助|回答|满足|完成|帮助)",
    )),
    ("rate_limit", None, (
        r"rate[ _-]?limit",
        r"too many requests|too many 429 error responses",
        r"throttl",
        r"quota",
        r"\b(?:requests|tokens) per (?:min|minute|second|sec|day|hour)\b",
        r"resource (?:has been )?exhausted|resource_exhausted",
        r"\bslow ?down\b|reduce your request rate",
        r"限流|被限制了?访问频率",
        r"(?:请求|访问|调用)(?:速度)?(?:过于|太过|太|过)?(?:频繁|过快)",
        r"频率(?:超限|过高|超过限制|限制)",
        r"(?:调用)?次数(?:超限|超过限制|已用完)",
        r"并发(?:数|量)?(?:过高|超限|超过限制|过大)",
        r"配额|额度(?:不足|已用)",
    )),
    ("auth", None, (
        r"unauthori[sz]ed|not authori[sz]ed|\bforbidden\b",
        r"permission[ _]denied|access[ _]denied",
        r"insufficient[ _](?:permissions?|scopes?|privileges)",
        r"(?:invalid|incorrect|missing|expired|revoked|bad) "
        r"(?:api[ _-]?key|token|credentials?|access[ _]token|auth(?:entication|orization)?\b)",
        r"invalid_api_key|api[ _-]?key (?:is )?(?:invalid|not valid|expired|missing|required)",
        r"authenticat(?:ion|e)[ _-]?(?:failed|error|required)|not authenticated",
        r"could not validate credentials",
        r"未授权|权限",
        r"(?:鉴权|认证|身份验证|登录)(?:失败|失效|已?过期)",
        r"(?:api ?key|密钥|令牌|token)\s*(?:无效|错误|已?过期|不正确)",
        r"无效的\s*(?:api ?key|密钥|令牌|token)",
    )),
    ("not_found", None, (
        r"(?<![a-z])not[ _]?found",
        r"does(?: not|n't|n’t) exist",
        r"no such (?:file|directory|key|table|column|user|model|resource|tool|bucket|object)",
        r"\bunknown (?:model|tool|endpoint|resource|user)\b",
        r"不存在|未找到|找不到|查无|无此(?:用户|记录|资源|文件)",
    )),
    ("validation", None, (
        r"bad request|unprocessable|malformed",
        r"invalid[ _](?:request|parameters?|params?|arguments?|values?|input|json|format)",
        r"invalid[ _](?:type|field|enum|date|syntax|url)",
        r"validation (?:error|failed)|failed validation|schema validation",
        r"is not (?:a )?valid\b|is not of type\b|is a required property",
        r"not a valid (?:json|date|email|url|uuid|integer|number)",
        r"missing (?:\d+ )?(?:required )?(?:positional |keyword(?:-only)? )?"
        r"(?:arguments?|parameters?|fields?|property|properties|key)\b",
        r"unexpected keyword argument|positional arguments? but \d+ (?:was|were) given",
        r"expecting (?:value|property name|',' delimiter|':' delimiter)",
        r"invalid literal for|could not convert",
        r"(?:must|should) be (?:a|an|one of|of type|greater|less|at least|at most|between"
        r"|positive|non-?negative|valid)\b",
        r"out of range|maximum context length|context[ _]length[ _]exceeded",
        r"unsupported (?:parameter|value|media type|format)",
        r"url is missing|no scheme supplied|missing (?:an? )?(?:scheme|protocol)\b",
        r"参数(?:错误|无效|缺失|不合法|非法|有误|校验失败|格式)|非法参数",
        r"缺少(?:必要|必填|必需)?参数",
        r"格式(?:错误|不正确|有误|非法)|(?:校验|验证)失败|类型(?:错误|不匹配)|不合法",
    )),
    ("timeout", None, (
        r"timed?[ _-]?out|deadline[ _]exceeded|took too long",
        r"超时|响应时间过长",
    )),
    ("connection", "persistent", (
        r"certificate verify failed|self[ -]signed certificate|certificate has expired",
        r"hostname mismatch",
    )),
    ("connection", None, (
        r"connection (?:refused|reset|aborted|error|closed|failed|lost|dropped|was closed)",
        r"connect call failed|(?:could not|couldn't|cannot|can't|unable to|failed to) "
        r"(?:connect|establish a new connection|reach)",
        r"name or service not known|nodename nor servname|failure in name resolution",
        r"getaddrinfo failed|no such host",
        r"network (?:error|is unreachable|unreachable|is down)|no route to host|broken pipe",
        r"server disconnected|remote (?:end|host|server) closed|peer closed connection",
        r"incomplete ?(?:chunked )?read|EOF occurred in violation of protocol|socket hang up",
        r"connection broken|illegal status line",
        r"\b(?:ECONNREFUSED|ECONNRESET|ENETUNREACH|EHOSTUNREACH|EPIPE|ENOTFOUND|EAI_AGAIN)\b",
        r"连接(?:失败|被拒绝?|被重置|中断|断开|错误|异常|已关闭)|拒绝连接|无法连接",
        r"网络(?:错误|异常|不可达|不通|连接失败)",
    )),
    ("server_error", "persistent", (
        r"not implemented",
    )),
    ("server_error", None, (
        r"internal[ _]server[ _]error|\bserver error\b|server had an error|internal error",
        r"service[ _](?:is )?(?:temporarily )?unavailable|temporarily unavailable",
        r"bad gateway|overloaded|server (?:is )?busy|upstream (?:error|connect error)",
        r"backend error|too many 5\d\d error responses",
        r"服务器(?:内部)?(?:错误|异常)|内部错误|服务(?:暂时|暂)?不可用",
        r"(?:服务器|系统|服务)繁忙|负载(?:已)?(?:饱和|过高)|过载",
    )),
    # last resorts: a wrapper's words, and pleas to retry that name no cause
    ("connection", None, (
        r"max retries exceeded",
    )),
    ("unknown", "transient", (
        r"try again later|please retry|稍后(?:再|重)试",
    )),
)  # fmt: skip

#: The built-in message rules, compiled once.
DEFAULT_PATTERNS: tuple[MessageRule, ...] = tuple(
    MessageRule.of(category, regex, kind) for category, kind, regexes in _RULES for regex in regexes
)
# A refusal is recognised before a status the message names: the refusal is the finding
# (Azure reports its content filter as "Error code: 400 - ... content management policy").
_REFUSALS = tuple(rule for rule in DEFAULT_PATTERNS if rule.category == "llm_refusal")
_OTHERS = tuple(rule for rule in DEFAULT_PATTERNS if rule.category != "llm_refusal")

_PHRASES = "|".join(re.escape(s.phrase) for s in HTTPStatus if 400 <= s.value < 600 and s.phrase)
#: Where a message names an HTTP status: "HTTP 429", "Error code: 401 - {...}", httpx's
#: "Client error '404 Not Found'", requests' "503 Server Error: ...", "状态码：429".
_MESSAGE_STATUS = re.compile(
    r"\b(?:HTTP(?:/\d(?:\.\d)?)?|status(?:[ _]?code)?|error(?:[ _]?code)?|code)"
    r"\s*[:=]?\s*\(?([45]\d\d)\b"
    r"|\b([45]\d\d) (?:Client|Server) Error\b"
    rf"|\b([45]\d\d) (?:{_PHRASES}|Overloaded)\b"
    r"|状态码\s*[:：]?\s*([45]\d\d)(?!\d)",
    re.IGNORECASE,
)

_UNITS = {
    "ms": 0.001,
    "millisecond": 0.001,
    "milliseconds": 0.001,
    "毫秒": 0.001,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "秒": 1.0,
    "秒钟": 1.0,
    "m": 60.0,
    "min": 60.0,
    "mins": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "分钟": 60.0,
}
_DURATION = (
    r"(?:(?P<mins>\d+)m(?=\d))?(?P<value>\d+(?:\.\d+)?)\s*"
    r"(?P<unit>ms|milliseconds?|secs?|seconds?|s|mins?|minutes?|m)?(?![a-z])"
)
#: "retry after 30s", "Retry-After: 30", "Please try again in 6ms", "try again in 1m26.4s",
#: "请在30秒后重试", "请 2 分钟后再试".
_MESSAGE_RETRY = (
    re.compile(r"retry[ _-]?after\s*[:=]?\s*" + _DURATION, re.IGNORECASE),
    re.compile(r"(?:try again|retry(?:ing)?) in\s*" + _DURATION, re.IGNORECASE),
    re.compile(r"(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>毫秒|秒钟?|分钟)\s*(?:之?后)\s*(?:再|重)"),
)


# -- the policy -------------------------------------------------------------------------------

_DEFAULT_AFTER = 5
_DEFAULT_WINDOW = 10


@dataclass(frozen=True, slots=True)
class ClassifierPolicy:
    """The classifier's tables and escalation settings; plain data from a profile.

    ``patterns`` are extra message rules, tried before the built-in ones. Escalation: a
    transient failure of a tool becomes persistent when, among that tool's last ``window``
    outcomes since its last success (this failure included), at least ``escalate_after`` were
    transient failures.
    """

    status: Mapping[int, Verdict] = field(default_factory=lambda: DEFAULT_STATUS)
    status_classes: Mapping[int, Verdict] = field(default_factory=lambda: DEFAULT_STATUS_CLASSES)
    exceptions: Mapping[str, Verdict] = field(default_factory=lambda: DEFAULT_EXCEPTIONS)
    patterns: tuple[MessageRule, ...] = ()
    escalate: bool = True
    escalate_after: int = _DEFAULT_AFTER
    window: int = _DEFAULT_WINDOW

    def __post_init__(self) -> None:
        _check_escalation(self.escalate, self.escalate_after, self.window, "ClassifierPolicy")

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], where: str = "classifier") -> ClassifierPolicy:
        """Validate an ``[escape.classifier]`` table; entries extend the default tables.

        Keys: ``status`` (``{"409" = "server_error"}``, ``"4xx"``/``"5xx"`` for the rest of a
        class), ``exceptions`` (class name -> category), ``patterns`` (category -> regexes),
        ``escalate``, ``escalate_after``, ``window``. A table entry is a category name or
        ``{category = ..., kind = ...}`` (either may be left out). Errors name ``where``, the
        key and what is allowed.
        """
        allowed = ("status", "exceptions", "patterns", "escalate", "escalate_after", "window")
        check_table(raw, allowed, where, "classifier")

        status = dict(DEFAULT_STATUS)
        classes = dict(DEFAULT_STATUS_CLASSES)
        for key, value in _table(raw, "status", where).items():
            at = f"{where}: status.{key}"
            text = str(key).strip().lower()
            if text in ("4xx", "5xx"):
                digit = int(text[0])
                classes[digit] = _verdict(value, classes[digit], at)
                continue
            code = _status_key(key)
            if code is None:
                raise fail(at, "expected an HTTP status 100-599, '4xx' or '5xx' as the key")
            status[code] = _verdict(value, status.get(code), at)

        exceptions = dict(DEFAULT_EXCEPTIONS)
        for key, value in _table(raw, "exceptions", where).items():
            at = f"{where}: exceptions.{key}"
            if not isinstance(key, str) or not key.isidentifier():
                raise fail(at, "expected an exception class name (e.g. 'ReadTimeout') as the key")
            exceptions[key] = _verdict(value, exceptions.get(key), at)

        rules: list[MessageRule] = []
        for key, value in _table(raw, "patterns", where).items():
            at = f"{where}: patterns.{key}"
            category = _category(key, at)
            items = [value] if isinstance(value, (str, Mapping)) else value
            if not isinstance(items, list):
                raise fail(at, f"expected a list of regular expressions, got {value!r}")
            rules.extend(_rule(category, item, f"{at}[{i}]") for i, item in enumerate(items))

        escalate = raw.get("escalate", True)
        after = raw.get("escalate_after", _DEFAULT_AFTER)
        window = raw.get("window", max(_DEFAULT_WINDOW, after) if _is_count(after) else 0)
        _check_escalation(escalate, after, window, where)
        return cls(
            status=MappingProxyType(status),
            status_classes=MappingProxyType(classes),
            exceptions=MappingProxyType(exceptions),
            patterns=tuple(rules),
            escalate=escalate,
            escalate_after=after,
            window=window,
        )

    def status_verdict(self, status: int) -> Verdict | None:
        """What an HTTP status means; ``None`` for statuses that are not errors."""
        verdict = self.status.get(status)
        if verdict is None:
            verdict = self.status_classes.get(status // 100)
        return verdict


def _check_escalation(escalate: object, after: object, window: object, where: str) -> None:
    if not isinstance(escalate, bool):
        raise fail(f"{where}: escalate", f"expected true or false, got {escalate!r}")
    if not _is_count(after):
        raise fail(f"{where}: escalate_after", f"expected an integer >= 1, got {after!r}")
    if not _is_count(window) or window < after:
        raise fail(
            f"{where}: window", f"expected an integer >= escalate_after ({after}), got {window!r}"
        )


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _table(raw: Mapping[str, Any], key: str, where: str) -> Mapping[Any, Any]:
    value = raw.get(key, {})
    if not isinstance(value, Mapping):
        raise fail(f"{where}: {key}", f"expected a table/dict, got {value!r}")
    return value


def _status_key(key: Any) -> int | None:
    if isinstance(key, bool):
        return None
    if isinstance(key, int):
        code = key
    elif isinstance(key, str) and key.strip().isdigit():
        code = int(key)
    else:
        return None
    return code if 100 <= code <= 599 else None


def _category(value: Any, at: str) -> Category:
    if value not in CATEGORIES:
        raise fail(at, f"unknown category {value!r}; allowed: {', '.join(CATEGORIES)}")
    return cast(Category, value)


def _kind(value: Any, at: str) -> Kind:
    if value not in KINDS:
        raise fail(at, f"unknown kind {value!r}; allowed: {', '.join(KINDS)}")
    return cast(Kind, value)


def _verdict(value: Any, default: Verdict | None, at: str) -> Verdict:
    """A category name, or ``{category, kind}`` with either left to ``default``/the category."""
    if isinstance(value, str):
        category = _category(value, at)
        return CATEGORY_KINDS[category], category
    if not isinstance(value, Mapping) or not value:
        raise fail(at, f"expected a category name or {{category = ..., kind = ...}}, got {value!r}")
    extra = sorted(str(k) for k in value if k not in ("category", "kind"))
    if extra:
        raise fail(at, f"unknown key {extra[0]!r}; allowed: category, kind")
    if "category" in value:
        category = _category(value["category"], f"{at}.category")
    else:
        category = default[1] if default is not None else "unknown"
    kind = _kind(value["kind"], f"{at}.kind") if "kind" in value else CATEGORY_KINDS[category]
    return kind, category


def _rule(category: Category, item: Any, at: str) -> MessageRule:
    kind: Kind | None = None
    regex = item
    if isinstance(item, Mapping):
        extra = sorted(str(k) for k in item if k not in ("pattern", "kind"))
        if extra or "pattern" not in item:
            raise fail(at, "expected a regex or {pattern = ..., kind = ...}")
        regex = item["pattern"]
        kind = _kind(item["kind"], f"{at}.kind") if "kind" in item else None
    if not isinstance(regex, str) or not regex:
        raise fail(at, f"expected a non-empty regular expression, got {regex!r}")
    try:
        return MessageRule.of(category, regex, kind)
    except re.error as exc:
        raise fail(at, f"invalid regular expression {regex!r}: {exc}") from None


# -- the classifier ---------------------------------------------------------------------------


class _Window:
    """A tool's outcomes since its last success: the last ``size`` of them, and how many of
    those were transient failures (kept as a running count: O(1) per outcome)."""

    __slots__ = ("outcomes", "transient")

    def __init__(self, size: int) -> None:
        self.outcomes: deque[bool] = deque(maxlen=size)
        self.transient = 0

    def push(self, transient: bool) -> None:
        outcomes = self.outcomes
        if len(outcomes) == outcomes.maxlen and outcomes[0]:
            self.transient -= 1
        outcomes.append(transient)
        self.transient += transient


class ErrorClassifier:
    """Classifies errors and escalates tools whose transient failures keep repeating.

    ``classify`` is O(1) in the length of the run. The state is per tool and reset by
    ``record_success``; one classifier serves one run (not thread-safe). ``wall`` gives the
    current epoch time for Retry-After HTTP-dates when the response has no ``Date`` header.
    """

    def __init__(
        self,
        policy: ClassifierPolicy | None = None,
        *,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.policy = policy if policy is not None else ClassifierPolicy()
        self._wall = wall
        self._windows: dict[str, _Window] = {}

    def classify(
        self,
        error: BaseException | int | str | None = None,
        tool: str | None = None,
        *,
        status: int | None = None,
        message: str | None = None,
        exception: str | None = None,
        headers: Headers | None = None,
    ) -> ErrorClass:
        """Classify one failure (of ``tool``, if given, which then counts toward escalation).

        ``error`` is an exception, an HTTP status or a message. ``exception`` names an
        exception class when only its name is known (a trace's ``error_type``).
        """
        exc: BaseException | None = None
        if isinstance(error, BaseException):
            exc = error
        elif isinstance(error, bool):
            raise TypeError(f"cannot classify {error!r}")
        elif isinstance(error, int):
            status = error if status is None else status
        elif isinstance(error, str):
            message = error if message is None else message
        elif error is not None:
            raise TypeError(f"cannot classify {type(error).__name__} {error!r}")

        result = self._decide(exc, status, message, exception)
        retry_after = self._retry_after(exc, headers, message)
        if retry_after is not None:
            result = replace(result, retry_after=retry_after)
        return self._escalate(result, tool) if tool is not None else result

    def classify_event(self, event: ToolResult | ModelResult) -> ErrorClass | None:
        """Classify a traced result: ``None`` for a success (which resets its tool)."""
        name = event.tool if isinstance(event, ToolResult) else event.model
        if event.ok:
            self.record_success(name)
            return None
        status = event.status if isinstance(event, ToolResult) else None
        return self.classify(
            None,
            name,
            status=status,
            message=event.message,
            exception=event.error_type,
        )

    def record_success(self, tool: str) -> None:
        """``tool`` succeeded: its transient failures no longer count toward escalation."""
        self._windows.pop(tool, None)

    def reset(self, tool: str | None = None) -> None:
        """Forget the failures of ``tool``, or of every tool."""
        if tool is None:
            self._windows.clear()
        else:
            self._windows.pop(tool, None)

    def transient_failures(self, tool: str) -> int:
        """How many transient failures of ``tool`` count toward escalation right now."""
        window = self._windows.get(tool)
        return window.transient if window is not None else 0

    # -- internals ----------------------------------------------------------------------------

    def _escalate(self, result: ErrorClass, tool: str) -> ErrorClass:
        policy = self.policy
        if not policy.escalate:
            return result
        window = self._windows.get(tool)
        if window is None:
            window = self._windows[tool] = _Window(policy.window)
        window.push(result.transient)
        if not result.transient or window.transient < policy.escalate_after:
            return result
        reason = (
            f"{result.reason}; escalated to persistent: {window.transient} transient failures "
            f"of tool {tool!r} in its last {len(window.outcomes)} outcomes since its last "
            f"success (escalate_after={policy.escalate_after}, window={policy.window})"
        )
        return ErrorClass("persistent", result.category, reason, result.retry_after, True)

    def _decide(
        self,
        exc: BaseException | None,
        status: int | None,
        message: str | None,
        exception: str | None,
    ) -> ErrorClass:
        policy = self.policy
        if _is_status(status):
            verdict = policy.status_verdict(status)
            if verdict is not None:
                return ErrorClass(*verdict, f"status {status}")
        chain = list(_chain(exc))
        for i, current in enumerate(chain):
            cause = f" (cause of {type(chain[0]).__name__})" if i else ""
            code = _status_of(current)
            if code is not None:
                verdict = policy.status_verdict(code)
                if verdict is not None:
                    reason = f"status {code} (from {type(current).__name__}){cause}"
                    return ErrorClass(*verdict, reason)
            found = self._by_type(type(current))
            if found is not None:
                return ErrorClass(*found[0], f"{found[1]}{cause}")
        if exception:
            found = self._by_name(exception)
            if found is not None:
                return ErrorClass(*found[0], found[1])
        texts = [message] if message is not None else []
        texts += [_text(e) for e in chain]
        for text in texts:
            decided = self._by_message(_clip(text))
            if decided is not None:
                return decided
        return ErrorClass("unknown", "unknown", "no status, exception or message rule matched")

    def _by_type(self, cls: type[BaseException]) -> tuple[Verdict, str] | None:
        table = self.policy.exceptions
        for base in cls.__mro__:
            verdict = table.get(base.__name__)
            if verdict is not None:
                via = "" if base is cls else f" (a {base.__name__})"
                return verdict, f"exception {cls.__name__}{via}"
        return None

    def _by_name(self, name: str) -> tuple[Verdict, str] | None:
        bare = name.rsplit(".", 1)[-1]
        builtin = getattr(builtins, bare, None)
        if isinstance(builtin, type) and issubclass(builtin, BaseException):
            return self._by_type(builtin)
        verdict = self.policy.exceptions.get(bare)
        return (verdict, f"exception {bare}") if verdict is not None else None

    def _by_message(self, text: str) -> ErrorClass | None:
        if not text:
            return None
        found = _first_rule(self.policy.patterns, text) or _first_rule(_REFUSALS, text)
        if found is not None:
            return found
        for match in _MESSAGE_STATUS.finditer(text):
            code = int(next(g for g in match.groups() if g))
            verdict = self.policy.status_verdict(code)
            if verdict is not None:
                return ErrorClass(*verdict, f"message names status {code}")
        return _first_rule(_OTHERS, text)

    def _retry_after(
        self,
        exc: BaseException | None,
        headers: Headers | None,
        message: str | None,
    ) -> float | None:
        if exc is not None:
            value = _attr(exc, "retry_after")
            if _is_number(value):
                return max(0.0, float(value))
        for source in _header_sources(exc, headers):
            seconds = retry_after_from_headers(source, self._wall)
            if seconds is not None:
                return seconds
        for text in (message, _text(exc) if exc is not None else None):
            if text:
                seconds = retry_after_from_message(_clip(text))
                if seconds is not None:
                    return seconds
        return None


def retry_after_from_headers(
    headers: Headers, wall: Callable[[], float] = time.time
) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (delay-seconds or an
    HTTP-date, measured from the response's ``Date`` header if it has one, else ``wall()``).

    Header names are matched case-insensitively; a date in the past means 0.
    """
    lowered = {str(k).lower(): v for k, v in _items(headers)}
    millis = _number(lowered.get("retry-after-ms"))
    if millis is not None:
        return max(0.0, millis / 1000)
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    seconds = _number(raw)
    if seconds is not None:
        return max(0.0, seconds)
    when = _http_date(raw)
    if when is None:
        return None
    now = _http_date(lowered.get("date"))
    return max(0.0, when - (now if now is not None else wall()))


def retry_after_from_message(text: str) -> float | None:
    """Seconds to wait that a message asks for ("retry after 30s", "try again in 6ms",
    "请在30秒后重试"), or ``None``."""
    for pattern in _MESSAGE_RETRY:
        match = pattern.search(text)
        if match is None:
            continue
        groups = match.groupdict()
        unit = (groups.get("unit") or "s").lower()
        seconds = float(match["value"]) * _UNITS.get(unit, 1.0)
        if groups.get("mins"):
            seconds += int(match["mins"]) * 60
        return seconds
    return None


def _first_rule(rules: Iterable[MessageRule], text: str) -> ErrorClass | None:
    for rule in rules:
        match = rule.pattern.search(text)
        if match is not None:
            reason = f"message matches /{rule.pattern.pattern}/: {match.group(0)!r}"
            return ErrorClass(rule.kind, rule.category, reason)
    return None


def _chain(exc: BaseException | None, limit: int = 8) -> Iterator[BaseException]:
    """``exc`` and the exceptions it was raised from (``__cause__``, unsuppressed
    ``__context__``), without cycles."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen and len(seen) < limit:
        seen.add(id(exc))
        yield exc
        if exc.__cause__ is not None:
            exc = exc.__cause__
        elif not exc.__suppress_context__:
            exc = exc.__context__
        else:
            exc = None


def _header_sources(exc: BaseException | None, headers: Headers | None) -> Iterator[Headers]:
    if headers is not None:
        yield headers
    if exc is None:
        return
    for found in (_attr(exc, "headers"), _attr(_attr(exc, "response"), "headers")):
        if callable(getattr(found, "items", None)):
            yield cast(Headers, found)


def _items(headers: Headers) -> Iterable[tuple[str, str]]:
    try:
        return list(headers.items())
    except Exception:  # a response object whose headers cannot be read (e.g. closed)
        return []


def _clip(text: str) -> str:
    if len(text) <= MAX_MESSAGE:
        return text
    half = MAX_MESSAGE // 2
    return f"{text[:half]}\n{text[-half:]}"


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # an exception whose __str__ fails still classifies by its type
        return ""


def _is_number(value: object) -> TypeGuard[int | float]:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def _number(raw: object) -> float | None:
    if raw is None:
        return None
    try:
        value = float(str(raw).strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _http_date(raw: object) -> float | None:
    if raw is None:
        return None
    try:
        when = parsedate_to_datetime(str(raw).strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000": RFC 5322 says UTC with unknown local zone
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp()
