"""What OpenAI's two APIs (chat completions, responses) share: error bodies and headers,
success headers, and the request checks they word the same way.

Error bodies are ``{"error": {"message", "type", "param", "code"}}``; the type and code per
status are the ones the API sends (a 429 is ``type: "requests"``, ``code:
"rate_limit_exceeded"``; a 502 is Cloudflare's ``cf_bad_gateway`` with the integer code 502).
Headers: ``x-request-id`` (``req_`` and 32 hex digits), ``openai-processing-ms``,
``x-ratelimit-*``; with ``retry_after``, ``retry-after`` (whole seconds, rounded up) and
``retry-after-ms`` -- which the ``openai`` SDK prefers.
"""

from __future__ import annotations

from typing import Any

from .wire import FormatBase, RequestInvalid, hex_id, wait_text, whole_seconds

__all__ = ["OpenAIFormat", "check_schema", "kind_of"]

BAD_JSON = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't "
    "using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was "
    "sent was not valid JSON. If you have trouble figuring out how to fix this, please "
    "contact us through our help center at help.openai.com.)"
)

# status -> (type, code, message); "{wait}" is the retry wait.
_ERRORS: dict[int, tuple[str, Any, str]] = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided. You can "
          "find your API key at https://platform.openai.com/account/api-keys."),
    403: ("request_forbidden", "unsupported_country_region_territory",
          "Country, region, or territory not supported"),
    404: ("invalid_request_error", "model_not_found",
          "The model does not exist or you do not have access to it."),
    408: ("invalid_request_error", None, "Request timed out."),
    409: ("invalid_request_error", None, "The request conflicts with another request. Please "
          "try again."),
    422: ("invalid_request_error", None, "The request could not be processed."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests per min (RPM): "
          "Limit 500, Used 500, Requested 1. Please try again in {wait}. Visit "
          "https://platform.openai.com/account/rate-limits to learn more."),
    500: ("server_error", None, "The server had an error while processing your request. "
          "Sorry about that!"),
    502: ("cf_bad_gateway", 502, "Bad gateway."),
    503: ("server_error", None, "That model is currently overloaded with other requests. You "
          "can retry your request, or contact us through our help center at help.openai.com "
          "if the error persists."),
    504: ("server_error", None, "Gateway timeout."),
}  # fmt: skip


class OpenAIFormat(FormatBase):
    """Errors and headers of the OpenAI API (module doc)."""

    provider = "openai"

    def error(
        self,
        status: int,
        message: str | None = None,
        *,
        retry_after: float | None = None,
        param: str | None = None,
        code: str | None = None,
        n: int = 0,
    ) -> tuple[list[tuple[str, str]], dict[str, Any]]:
        """The headers and body OpenAI sends with ``status`` (module doc); ``message``,
        ``param`` and ``code`` replace the defaults."""
        kind, default_code, default_message = _ERRORS.get(status) or (
            ("server_error", None, "The server had an error while processing your request.")
            if status >= 500
            else ("invalid_request_error", None, "Invalid request.")
        )
        wait = wait_text(retry_after if retry_after is not None else 1.0)
        body = {
            "error": {
                "message": message if message is not None else default_message.format(wait=wait),
                "type": kind,
                "param": param,
                "code": code if code is not None else default_code,
            }
        }
        headers = [("content-type", "application/json"), *self._request_headers(n)]
        if status == 429:
            headers += [
                ("x-ratelimit-limit-requests", "500"),
                ("x-ratelimit-remaining-requests", "0"),
                ("x-ratelimit-reset-requests", wait),
                ("x-ratelimit-limit-tokens", "30000"),
                ("x-ratelimit-remaining-tokens", "30000"),
                ("x-ratelimit-reset-tokens", "0s"),
            ]
        if retry_after is not None:
            headers += [
                ("retry-after", whole_seconds(retry_after)),
                ("retry-after-ms", str(max(0, round(retry_after * 1000)))),
            ]
        return headers, body

    def reject(
        self, exc: RequestInvalid, *, n: int = 0
    ) -> tuple[list[tuple[str, str]], dict[str, Any]]:
        """The 400 OpenAI answers to an invalid request."""
        return self.error(exc.status, exc.message, param=exc.param, code=exc.code, n=n)

    def success_headers(self, *, n: int, stream: bool) -> list[tuple[str, str]]:
        """``content-type`` (JSON, or ``text/event-stream; charset=utf-8``), the request id,
        ``openai-processing-ms`` and roomy ``x-ratelimit-*``."""
        kind = "text/event-stream; charset=utf-8" if stream else "application/json"
        return [
            ("content-type", kind),
            *self._request_headers(n),
            ("x-ratelimit-limit-requests", "500"),
            ("x-ratelimit-remaining-requests", "499"),
            ("x-ratelimit-reset-requests", "120ms"),
            ("x-ratelimit-limit-tokens", "30000"),
            ("x-ratelimit-remaining-tokens", "29000"),
            ("x-ratelimit-reset-tokens", "2s"),
        ]

    def _request_headers(self, n: int) -> list[tuple[str, str]]:
        return [
            ("x-request-id", hex_id("req_", 32, self.api, "request", n)),
            ("openai-version", "2020-10-01"),
            ("openai-processing-ms", "120"),
        ]


def kind_of(value: object) -> str:
    """The JSON type name OpenAI's messages use for ``value``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (int, float)):
        return "number" if isinstance(value, float) else "integer"
    if isinstance(value, list):
        return "array"
    return "object"


def check_schema(schema: object, name: str, param: str) -> dict[str, Any]:
    """A function tool's parameter schema, checked as OpenAI does: a JSON Schema object of
    ``type: "object"``; else :class:`RequestInvalid` with OpenAI's wording."""
    if schema is None:
        return {}
    if not isinstance(schema, dict):
        raise RequestInvalid(
            f"Invalid type for '{param}': expected an object, but got {kind_of(schema)} instead.",
            param=param,
            code="invalid_type",
        )
    kind = schema.get("type", "object")
    if kind != "object":
        shown = kind if isinstance(kind, str) else repr(kind)
        raise RequestInvalid(
            f"Invalid schema for function '{name}': schema must be a JSON Schema of 'type: "
            f'"object"\', got \'type: "{shown}"\'.',
            param=param,
            code="invalid_function_parameters",
        )
    problem = schema_problem(schema)
    if problem is not None:
        raise RequestInvalid(
            f"Invalid schema for function '{name}': {problem}",
            param=param,
            code="invalid_function_parameters",
        )
    return schema


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why ``schema`` is not a valid JSON Schema (2020-12 meta-schema), or ``None``."""
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "(root)"
        return f"In context={where}, {exc.message}"
    return None
