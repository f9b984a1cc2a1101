"""Keying actions like a stuck agent looks: masking, error signatures, failures returned as data,
and the offline API (``detect_loops``) agreeing with the online observer."""

from __future__ import annotations

import contextlib
import json
import uuid
from pathlib import Path
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from pytest_agentchaos import LoopObserver, LoopPolicy, detect_loops
from pytest_agentchaos.escape.keys import Keyer, failure_text
from pytest_agentchaos.escape.normalize import mask, mask_args, mask_text, mask_value_text
from pytest_agentchaos.escape.texts import error_signature, error_template
from pytest_agentchaos.inject import Chaos
from pytest_agentchaos.trace import Detection, Trace

# -- what is masked, by kind ---------------------------------------------------------------------

VOLATILE = st.one_of(
    st.uuids().map(str),
    st.datetimes().map(lambda d: d.isoformat(timespec="seconds")),
    st.floats(0.001, 999, allow_nan=False).map(lambda f: f"{f:.3f}s"),
    st.integers(1, 99_999).map(lambda n: f"{n}ms"),
    st.integers(1_000_000_000, 1_999_999_999).map(str),  # epoch seconds
    st.text("abcdef0123456789", min_size=7, max_size=40).filter(
        lambda t: any(c.isdigit() for c in t) and any(c.isalpha() for c in t)
    ),
    st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=6, max_size=12).map(
        lambda t: f"/tmp/tmp{t}/out.json"
    ),
)
WORDS = st.text("abcdefghijklmnopqrstuvwxyz ,.:'", min_size=1, max_size=30)


@st.composite
def templated(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """Non-volatile words with volatile slots between them: (words, fillers)."""
    words = draw(st.lists(WORDS, min_size=1, max_size=5))
    fillers = [draw(VOLATILE) for _ in words]
    return words, fillers


def fill(words: list[str], fillers: list[str]) -> str:
    return "".join(f"{w} {f} " for w, f in zip(words, fillers, strict=True))


@settings(max_examples=300)
@given(templated(), st.data())
def test_volatile_tokens_mask_alike_and_content_keeps_calls_apart(
    parts: tuple[list[str], list[str]], data: st.DataObject
) -> None:
    words, fillers = parts
    text = fill(words, fillers)
    # the same content with other volatile values: one masked text
    others = [data.draw(VOLATILE) for _ in fillers]
    same_kinds = [type_of(a) == type_of(b) for a, b in zip(fillers, others, strict=True)]
    if all(same_kinds):
        assert mask_text(text) == mask_text(fill(words, others))
    # other content with the same volatile values: never merged
    changed = data.draw(st.lists(WORDS, min_size=len(words), max_size=len(words)))
    if changed != words:
        assert mask_text(fill(changed, fillers)) != mask_text(text)


def type_of(token: str) -> str:
    """The placeholder a volatile token masks to (it is alone in the text)."""
    return mask_text(f" {token} ").strip()


@settings(max_examples=300)
@given(
    st.sampled_from(["0123456789abcdef", "0123456789"]).flatmap(
        lambda alphabet: st.integers(7, 40).flatmap(
            lambda n: st.tuples(*(st.text(alphabet, min_size=n, max_size=n) for _ in "ab"))
        )
    ),
    st.sampled_from(["run {} failed", '{{"run": "{}"}}', "job={}", "{}"]),
)
@example(("fd494efb3258", "750838365711"), "run {} failed")  # a hex id that drew only digits
@example(("a81f02c4e9", "1733000000"), "{}")  # ... and one that looks like epoch seconds
def test_ids_of_one_alphabet_and_length_mask_alike_whatever_they_drew(
    ids: tuple[str, str], shape: str
) -> None:
    """A service's ids come from one alphabet at one length; which characters a lap drew (all
    digits now and then) does not change what its result keys to."""
    first, second = ids
    if any(c.isdigit() for c in first) and any(c.isdigit() for c in second):
        assert mask_text(shape.format(first)) == mask_text(shape.format(second))
        assert mask({"run": first}) == mask({"run": second})


@settings(max_examples=300)
@given(st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), VOLATILE,
              st.text(max_size=40)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["q", "request_id", "took_ms", "created_at", "page", "id", "note"]),
        inner, max_size=4),
    max_leaves=20,
))  # fmt: skip
@example("0d0d0000000")  # a duration, then digits the letter before hid from the first pass
def test_masking_is_idempotent(value: Any) -> None:
    once = mask(value)
    assert mask(once) == once
    args = mask_args(value)
    assert mask_args(args) == args
    text = json.dumps(value, default=str)
    assert mask_text(mask_text(text)) == mask_text(text)


def test_results_lose_their_noise_but_arguments_keep_what_the_call_is_about() -> None:
    result = {
        "rows": 3,
        "request_id": "req_9f8e7d6c5b4a",
        "fetched_at": "2025-03-14T09:26:53Z",
        "load_time_ms": 412,
        "charge_id": "ch_3MqBw2LkdIwHu7ix",
        "log": f"done in 1.83s, pid 4127, wrote /tmp/tmpa8f3k2/out.json, trace {uuid.uuid4()}",
    }
    assert mask(result) == {
        "rows": 3,
        "request_id": "<volatile>",
        "fetched_at": "<volatile>",
        "load_time_ms": "<volatile>",
        "charge_id": "<volatile>",
        "log": "done in <duration>, pid <n>, wrote <tmp>/out.json, trace <uuid>",
    }
    args = {"order_id": "ord_5521", "date": "2025-03-14", "timeout": "30s", "X-Request-Id": "r1"}
    assert mask_args(args) == {**args, "X-Request-Id": "<volatile>"}
    assert mask(result, ignore=["rows"])["rows"] == "<volatile>"


def test_error_templates_and_signatures() -> None:
    a = "File '/srv/app/a.py', line 12: NameError: name 'foo' is not defined"
    b = "File '/srv/app/b.py', line 40: NameError: name 'bar' is not defined"
    assert error_template(a) == error_template(b)
    assert error_template(a) != error_template("TypeError: unsupported operand")
    # an error that echoes its input has one signature whatever the input
    one = error_signature('column "created" does not exist', {"sql": "select created"})
    two = error_signature('column "made_on" does not exist', {"sql": "select made_on"})
    assert one == two == "column does not exist"
    assert error_signature("relation does not exist", {}) != one


def test_failures_returned_as_data_are_seen() -> None:
    assert failure_text({"exit_code": 1, "stderr": "no such file"}) == "no such file"
    assert failure_text({"exit_code": 0, "stdout": "ok"}) is None
    assert failure_text({"isError": True, "content": "boom"}) == "boom"
    assert failure_text({"success": False, "error": {"code": 7}}) == '{"code": 7}'
    assert failure_text("Not Found", status=404) == "Not Found"
    assert failure_text({"rows": []}) is None
    keyer = Keyer()
    k1 = keyer.tool(
        "sh",
        {"cmd": "pip install torch==2.1"},
        result={"exit_code": 1, "stderr": "No matching distribution found for torch==2.1"},
    )
    k2 = keyer.tool("sh", {"cmd": "pip install torch==1.9"}, result={
        "exit_code": 1, "stderr": "No matching distribution found for torch==1.9"})  # fmt: skip
    assert k1 != k2 and k1.coarse == k2.coarse is not None


def test_an_error_body_under_an_error_status_is_told_by_what_its_error_says() -> None:
    # an HTTP API's error object as JSON text, with a 4xx status: read as its type and
    # message (as the same error raised would be), not as JSON text whose masked quoted
    # values make every error body alike
    def body(message: str) -> str:
        return json.dumps({"error": {"type": "ApiError", "message": message, "status": 422}})

    assert failure_text(body("Ticket is locked"), status=422) == "ApiError: Ticket is locked"
    assert failure_text('{"rows": []}', status=500) == '{"rows": []}'
    keyer = Keyer()
    args = {"ticket": {"status": "solved"}}
    k1 = keyer.tool("PUT /t/7", args, result=body("Ticket is locked"), status=422)
    k2 = keyer.tool("PUT /t/7", args, result=body("Requester email is invalid"), status=422)
    k3 = keyer.tool("PUT /t/7", args, result=body("Ticket is locked"), status=422)
    assert k1.coarse != k2.coarse and k1.coarse == k3.coarse is not None


def test_an_error_body_a_shell_wrapper_printed_is_its_failure() -> None:
    # curl prints an HTTP API's error body and exits 0: the JSON text of the standard output
    # is read as the data it holds, as the same body returned as the result is
    body = json.dumps({"code": 230002, "msg": "Bot is not in the chat", "error": {"id": "x"}})
    printed = {"exit_code": 0, "stdout": body, "stderr": ""}
    assert failure_text(printed) == failure_text(body) is not None
    assert failure_text({"exit_code": 0, "stdout": '{"rows": [], "ok": true}'}) is None
    assert failure_text({"exit_code": 0, "stdout": "error: shown, not raised"}) is None
    keyer = Keyer()
    k1 = keyer.tool("sh", {"cmd": "curl -X POST https://api/send"}, result=printed)
    assert k1.coarse is not None and "failed" in k1.coarse


def test_an_error_keeps_its_short_words_when_a_rewritten_text_holds_them() -> None:
    # a message rewritten each time shares "to", "at", "is" with the refusal by chance: the
    # refusal's signature stays one; a value it echoes is still taken out
    error = "Unable to create record: the number is unverified. Verify it at twilio.com"
    bodies = ["See you at 10.", "Reply C to cancel.", "This is a reminder.", "Confirmed"]
    signatures = {error_signature(error, {"Body": b}) for b in bodies}
    assert len(signatures) == 1
    one, two = (error_signature(f"Recipient {n} is unverified", {"To": n}) for n in ("ann", "bob"))
    assert one == two == "recipient is unverified"


def test_near_duplicate_model_text_shares_a_key_and_other_text_does_not() -> None:
    keyer = Keyer(LoopPolicy())
    a = keyer.model("m", output="I will search for the flight prices again now (attempt 3).")
    b = keyer.model("m", output="I will search for the flight prices again now (attempt 4).")
    c = keyer.model("m", output="The cheapest flight is TP 1234 at 412 EUR; booking it.")
    assert a == b != c


# -- the offline API agrees with the online observer -----------------------------------------


ACTIONS = st.lists(
    st.one_of(
        st.tuples(st.just("call"), st.sampled_from(["a", "b", "c"]), st.sampled_from(["x", "y"])),
        st.tuples(st.just("fail"), st.sampled_from(["a", "b"]), st.sampled_from(["E1", "E2"])),
        st.tuples(st.just("step"), st.sampled_from(["n1", "n2", "n3"]),
                  st.sampled_from([None, "s1", "s2"])),
    ),
    max_size=60,
)  # fmt: skip


def run(actions: list[tuple[str, str, str | None]]) -> Trace:
    with Chaos.create() as chaos:
        LoopObserver.watch(chaos.trace)

        def tool(q: str, out: str) -> str:
            if out.startswith("E"):
                raise ValueError(f"{out}: no result for {q} at 2025-03-14T09:26:53Z")
            return f"{out} (took 0.{len(q)}3s)"

        wrapped = chaos.wrap(tool, name="search")
        for kind, what, detail in actions:
            if kind == "step":
                chaos.step(what, state=None if detail is None else {"phase": detail})
                continue
            with contextlib.suppress(ValueError):  # the agent swallows its tool's errors
                wrapped(what, detail)
    return chaos.trace


@settings(max_examples=150, deadline=None)
@given(ACTIONS)
def test_detect_loops_over_a_recorded_run_equals_what_the_run_detected(
    actions: list[tuple[str, str, str | None]],
) -> None:
    trace = run(actions)
    online = [e for e in trace if isinstance(e, Detection) and e.detector == "loop_observer"]
    assert detect_loops(trace) == online
    assert detect_loops(Trace.from_json(trace.to_json())) == online
    assert detect_loops(trace.to_dict()) == online
    for d in online:  # each points at the event that raised it, just before it
        assert d.at_event is not None and trace.events[d.at_event].step == d.step


def test_detect_loops_reads_a_saved_trace_file(tmp_path: Path) -> None:
    trace = run([("call", "a", "x")] * 4 + [("call", "b", "x")])
    target = tmp_path / "run.json"
    trace.write(target)
    found = detect_loops(target)
    assert [d.kind for d in found] == ["loop", "loop_broken"]
    assert found == detect_loops(str(target))


def test_a_calls_id_named_in_prose_by_two_words_is_masked_another_id_is_not() -> None:
    first = mask_value_text("Request to broker b-2:9092 timed out (correlation id 14390).")
    second = mask_value_text("Request to broker b-2:9092 timed out (correlation id 55063).")
    assert first == second
    assert mask_value_text("request ID 7f3a2 ok") == mask_value_text("request ID 9c01e ok")
    # an id of what the text is about stays
    assert mask_value_text("order id 8812 shipped") != mask_value_text("order id 8813 shipped")
    assert mask_value_text("user id 42") == "user id 42"


def test_a_request_signature_is_a_credential_in_the_arguments() -> None:
    """Open platforms sign each request (``sign``, ``api_sig``): a hash of the call's
    parameters, its time and a secret, fresh on every call."""
    a = {"order_sn": "261127-04881", "sign": "D1EE3CF8A674109C2F9EB84D9A9D78DC"}
    b = {"order_sn": "261127-04881", "sign": "3FD0096C65E5E38EFEA56B2B14AF5604"}
    assert mask_args(a) == mask_args(b)
    assert mask_args({**a, "order_sn": "261127-04882"}) != mask_args(b)
    assert mask_args({"api_sig": "ab12"}) == mask_args({"api_sig": "cd34"})
