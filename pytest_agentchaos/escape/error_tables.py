"""The classifier's data: kinds, categories and the default tables of what errors mean.

A :class:`~pytest_agentchaos.escape.classifier_policy.ClassifierPolicy` starts from these
tables: HTTP statuses (:data:`DEFAULT_STATUS`, then :data:`DEFAULT_STATUS_CLASSES` for the rest
of 4xx/5xx), exception class names (:data:`DEFAULT_EXCEPTIONS`) and message rules
(:data:`DEFAULT_PATTERNS`, English and Chinese). Everything here is read-only data, compiled
once at import.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from types import MappingProxyType
from typing import Literal, TypeAlias, get_args

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
        # RFC 8470: a server that will not process early data asks the client to send it
        # again once the handshake completes
        425: (_T, "connection"),
        429: (_T, "rate_limit"),
        431: (_P, "validation"),
        # the caller cancelled (Google APIs' CANCELLED; nginx logs it for a client that left):
        # a client error like any other 4xx but 408 / 425 / 429, which retrying repeats
        499: (_P, "connection"),
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
        # the builtin ConnectionError's subclasses, by name (a trace gives only the name)
        "ConnectionResetError": (_T, "connection"),
        "ConnectionAbortedError": (_T, "connection"),
        "ConnectionRefusedError": (_T, "connection"),
        "BrokenPipeError": (_T, "connection"),
        # botocore (boto3, aiobotocore)
        "EndpointConnectionError": (_T, "connection"),
        "ConnectionClosedError": (_T, "connection"),
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
#: :data:`DEFAULT_PATTERNS` split for the classifier: a refusal is recognised before a status
#: the message names, the other rules after it: the refusal is the finding (Azure reports its
#: content filter as "Error code: 400 - ... content management policy").
REFUSAL_PATTERNS: tuple[MessageRule, ...] = tuple(
    rule for rule in DEFAULT_PATTERNS if rule.category == "llm_refusal"
)
OTHER_PATTERNS: tuple[MessageRule, ...] = tuple(
    rule for rule in DEFAULT_PATTERNS if rule.category != "llm_refusal"
)

_PHRASES = "|".join(re.escape(s.phrase) for s in HTTPStatus if 400 <= s.value < 600 and s.phrase)
#: Where a message names an HTTP status: "HTTP 429", "Error code: 401 - {...}", httpx's
#: "Client error '404 Not Found'", requests' "503 Server Error: ...", "状态码：429".
MESSAGE_STATUS = re.compile(
    r"\b(?:HTTP(?:/\d(?:\.\d)?)?|status(?:[ _]?code)?|error(?:[ _]?code)?|code)"
    r"\s*[:=]?\s*\(?([45]\d\d)\b"
    r"|\b([45]\d\d) (?:Client|Server) Error\b"
    rf"|\b([45]\d\d) (?:{_PHRASES}|Overloaded)\b"
    r"|状态码\s*[:：]?\s*([45]\d\d)(?!\d)",
    re.IGNORECASE,
)
