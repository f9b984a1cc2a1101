"""The Python clients openapi-generator writes (Datadog's, Kubernetes', many vendors') refuse a
value of the wrong type with ``ApiTypeError: Invalid type for variable 'tags'. Required value
type is list and passed type was str at ['body']['tags']``: the field is the variable the
message names (wherever the call nests it), the type the one it requires (``NoneType`` of an
optional field aside), never a parameter named like a word of the message (``type``)."""

from __future__ import annotations

from pytest_agentchaos.repair import ParamRepairer, ToolSpec

MONITOR = ToolSpec.from_schema(
    "create_monitor",
    {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "type": {"type": "string", "enum": ["event alert", "metric alert", "query alert"]},
            "query": {"type": "string"},
            "message": {"type": "string", "description": "Notification text."},
            "tags": {"type": "array", "items": {"type": "string"}},
            "priority": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "options": {
                "type": "object",
                "properties": {
                    "thresholds": {
                        "type": "object",
                        "properties": {"critical": {"type": "number"}},
                    }
                },
            },
        },
        "required": ["type", "query"],
    },
)
QUERY = "avg(last_5m):avg:system.cpu.user{env:prod} > 90"


def test_a_list_sent_as_text_is_read_from_the_clients_message() -> None:
    args = {"type": "metric alert", "query": QUERY, "tags": "env:prod,team:payments"}
    error = (
        "ApiTypeError: Invalid type for variable 'tags'. Required value type is list and "
        "passed type was str at ['body']['tags']"
    )
    task = f"Metric alert on {QUERY}, tagged env:prod and team:payments."
    result = ParamRepairer(MONITOR).repair(args, error, task)
    assert result.ok, result.reason
    assert result.args == {**args, "tags": ["env:prod", "team:payments"]}


def test_a_nested_number_sent_as_text_is_found_by_the_variables_name() -> None:
    args = {"type": "metric alert", "query": QUERY, "options": {"thresholds": {"critical": "90"}}}
    error = (
        "ApiTypeError: Invalid type for variable 'critical'. Required value type is float and "
        "passed type was str at ['body']['options']['thresholds']['critical']"
    )
    result = ParamRepairer(MONITOR).repair(args, error, f"Alert on {QUERY}, critical at 90.")
    assert result.ok, result.reason
    assert result.args["options"] == {"thresholds": {"critical": 90.0}}
    assert result.args["type"] == "metric alert"  # the word "type" of the message is no field
