"""Metamorphic check of the loop detection: a labelled run re-rendered in another faithful
representation keeps its labels, so the harness's verdict on it must not change.

Each rendering rewrites what the agent's code would see, never what happened:

- ``json_compact`` / ``json_pretty``: a dict or list result as JSON text (compact; indented with
  its keys in reverse order);
- ``json_to_dict``: a result that is JSON text as the data it holds;
- ``mcp_text``: a result as MCP text content (``{"content": [{"type": "text", ...}]}``);
- ``shell_stdout``: a result as a shell wrapper's output (``{"exit_code": 0, "stdout": ...}``);
- ``per_call_fields``: a request id, a duration and a timestamp added to every result (as keys
  of a dict or of JSON text, as ``name=value`` pairs after prose);
- ``state_json`` / ``state_dict``: a state logged as JSON text, a JSON-text state as a dict;
- ``reply_counter``: each model reply prefixed with a running ``Attempt N:``;
- ``reply_punct``: each reply's punctuation and spacing changed (a different change by turn);
- ``reply_fullwidth``: each reply's ASCII punctuation written full width on every other turn;
- ``reply_reorder``: each reply's sentences rotated by one more place each turn;
- ``result_meta``: a result in a ``{"data": ..., "meta": {request id, elapsed}}`` envelope (prose
  behind a log line's time);
- ``args_per_call`` / ``args_json_text``: a fresh request id and bearer token in every call's
  arguments; the arguments as the JSON text a model's tool call carries;
- ``error_json_text`` / ``error_mcp`` / ``error_traceback``: a raised error reported as data (an
  error object as JSON text; MCP ``isError`` text content) or its message as a traceback;
- ``state_snapshot`` / ``state_prose`` / ``state_version``: a state as a checkpoint snapshot
  (values, next, checkpoint id, time), as ``name=value`` prose, stamped with a save version
  and time;
- ``reply_message`` / ``reply_message_json`` / ``reply_log_prefix`` / ``input_messages``: a
  reply as a message (a dict, JSON text), behind a logger's time and level; a turn as a
  message list;
- ``result_lines``: a flat dict result printed as ``name: value`` lines;
- ``chat_history``: each model input as the whole conversation so far;
- compositions (``json_compact+per_call``, ``mcp_text+per_call``, ``state_json+version``).

A **flip** is a case whose verdict moved: a labelled loop found on one rendering and missed on
the other, or a false (or early) alarm on one and not the other. Only the cases a rendering
changes are compared.

Run: ``python bench/loop_rerender.py [-v] [RENDERING ...]`` (dev half only: the test half is
read by no one developing rules). Prints the flips per rendering (``-v``: by case id).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loop_corpus import Case, Score, load, score_case, to_events  # noqa: E402

#: A rendering of one action (with its index among the case's actions of its kind): the new
#: action, or the same object when the rendering does not apply to it.
Render = Callable[[dict[str, Any], int], dict[str, Any]]


def _json_text(value: Any) -> Any:
    if not isinstance(value, str) or value.lstrip()[:1] not in ("{", "["):
        return None
    try:
        return json.loads(value)
    except ValueError:
        return None


def _reordered(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reordered(v) for v in value]
    return value


def _as_text(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def _with_result(action: dict[str, Any], result: Any) -> dict[str, Any]:
    return {**action, "result": result}


def _tool_result(action: dict[str, Any]) -> bool:
    return "tool" in action and "result" in action


def json_compact(action: dict[str, Any], n: int) -> dict[str, Any]:
    if _tool_result(action) and isinstance(action["result"], (dict, list)):
        text = json.dumps(action["result"], ensure_ascii=False, separators=(",", ":"))
        return _with_result(action, text)
    return action


def json_pretty(action: dict[str, Any], n: int) -> dict[str, Any]:
    if _tool_result(action) and isinstance(action["result"], (dict, list)):
        text = json.dumps(_reordered(action["result"]), ensure_ascii=False, indent=2)
        return _with_result(action, text)
    return action


def json_to_dict(action: dict[str, Any], n: int) -> dict[str, Any]:
    if _tool_result(action):
        data = _json_text(action["result"])
        if isinstance(data, (dict, list)):
            return _with_result(action, data)
    return action


def mcp_text(action: dict[str, Any], n: int) -> dict[str, Any]:
    if _tool_result(action) and action["result"] is not None:
        text = _as_text(action["result"])
        return _with_result(action, {"content": [{"type": "text", "text": text}], "isError": False})
    return action


#: Fields by which a result reports its own exit status: a shell wrapper around it would
#: report the same, so those results are not wrapped again.
_OWN_STATUS = ("exit_code", "exitCode", "returncode", "return_code", "success", "ok", "error")


def shell_stdout(action: dict[str, Any], n: int) -> dict[str, Any]:
    result = action.get("result")
    if isinstance(result, dict) and any(k in result for k in _OWN_STATUS):
        return action
    if _tool_result(action) and result is not None:
        text = _as_text(action["result"])
        return _with_result(action, {"exit_code": 0, "stdout": text, "stderr": ""})
    return action


def _per_call(seed: str, n: int) -> dict[str, Any]:
    digest = hashlib.sha256(f"{seed}/{n}".encode()).hexdigest()
    return {
        "request_id": f"req_{digest[:20]}",
        "duration_ms": 7 + int(digest[20:24], 16) % 900,
        "timestamp": f"2026-03-{1 + n // 1440 % 28:02d}T{n // 60 % 24:02d}:{n % 60:02d}:"
        f"{int(digest[24:26], 16) % 60:02d}Z",
    }


def per_call_fields(action: dict[str, Any], n: int) -> dict[str, Any]:
    if not _tool_result(action):
        return action
    result = action["result"]
    fields = _per_call(str(action.get("tool")), n)
    if isinstance(result, dict):
        return _with_result(action, {**result, **fields})
    data = _json_text(result)
    if isinstance(data, dict):
        return _with_result(action, json.dumps({**data, **fields}, ensure_ascii=False))
    if isinstance(result, str):
        pairs = " ".join(f"{k}={v}" for k, v in fields.items())
        return _with_result(action, f"{result}\n({pairs})")
    return action


def state_json(action: dict[str, Any], n: int) -> dict[str, Any]:
    if isinstance(action.get("state"), (dict, list)):
        return {**action, "state": json.dumps(action["state"], ensure_ascii=False)}
    return action


def state_dict(action: dict[str, Any], n: int) -> dict[str, Any]:
    data = _json_text(action.get("state"))
    if isinstance(data, (dict, list)):
        return {**action, "state": data}
    return action


def _reply(action: dict[str, Any]) -> str | None:
    """A model reply in prose (not JSON, not a tool-call message), else None."""
    out = action.get("output") if "model" in action else None
    if not isinstance(out, str) or not out.strip() or _json_text(out) is not None:
        return None
    return out


def _with_reply(action: dict[str, Any], text: str | None) -> dict[str, Any]:
    if text is None or text == action.get("output"):
        return action
    return {**action, "output": text}


def reply_counter(action: dict[str, Any], n: int) -> dict[str, Any]:
    out = _reply(action)
    if out is None:
        return action
    cjk = bool(re.search(r"[\u4e00-\u9fff]", out))
    return _with_reply(action, (f"第{n + 1}次尝试：" if cjk else f"Attempt {n + 1}: ") + out)


_PUNCT_CHANGES: tuple[Callable[[str], str], ...] = (
    lambda s: s,
    lambda s: re.sub(r"[.!。！]\s*$", "", s.rstrip()),
    lambda s: re.sub(r"([,;:，；：]) ?", r"\1  ", s),
    lambda s: "  " + re.sub(r"\.(\s|$)", r"!\1", s) + "\n",
)


def reply_punct(action: dict[str, Any], n: int) -> dict[str, Any]:
    out = _reply(action)
    if out is None or "```" in out:
        return action
    return _with_reply(action, _PUNCT_CHANGES[n % len(_PUNCT_CHANGES)](out))


_FULL_WIDTH = str.maketrans(
    {",": "，", ".": "。", ":": "：", ";": "；", "!": "！", "?": "？", "(": "（", ")": "）"}
)


def reply_fullwidth(action: dict[str, Any], n: int) -> dict[str, Any]:
    out = _reply(action)
    if out is None or "```" in out or n % 2 == 0:
        return action
    # only punctuation that ends or separates (followed by a space or the end), so numbers,
    # paths and names keep their dots
    text = re.sub(r"[,.:;!?](?=\s|$)", lambda m: m.group().translate(_FULL_WIDTH), out)
    return _with_reply(action, text)


_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*")


def reply_reorder(action: dict[str, Any], n: int) -> dict[str, Any]:
    out = _reply(action)
    if out is None or "`" in out or "\n" in out.strip():
        return action
    parts = [p for p in _SENTENCE.split(out.strip()) if p]
    if len(parts) < 2:
        return action
    k = n % len(parts)
    rotated = parts[k:] + parts[:k]
    sep = "" if re.search(r"[\u4e00-\u9fff]", out) else " "
    return _with_reply(action, sep.join(rotated))


def _fresh(seed: str, n: int, length: int = 16) -> str:
    return hashlib.sha256(f"{seed}/{n}".encode()).hexdigest()[:length]


def result_meta(action: dict[str, Any], n: int) -> dict[str, Any]:
    if not _tool_result(action) or action["result"] is None:
        return action
    meta = {"request_id": _fresh(str(action["tool"]), n), "elapsed": f"{0.05 + n % 7 / 13:.3f}s"}
    result = action["result"]
    data = _json_text(result)
    if isinstance(result, (dict, list)):
        return _with_result(action, {"data": result, "meta": meta})
    if data is not None:
        return _with_result(action, json.dumps({"data": data, "meta": meta}, ensure_ascii=False))
    return _with_result(action, f"[{_per_call('log', n)['timestamp']}] {result}")


def args_per_call(action: dict[str, Any], n: int) -> dict[str, Any]:
    if "tool" not in action or not isinstance(action.get("args", {}), dict):
        return action
    args = {
        **action.get("args", {}),
        "client_request_id": _fresh("args" + str(action["tool"]), n, 12),
        "headers": {"Authorization": "Bearer sk-" + _fresh("key", n, 24)},
    }
    return {**action, "args": args}


def error_json_text(action: dict[str, Any], n: int) -> dict[str, Any]:
    if "tool" not in action or "error" not in action:
        return action
    body: dict[str, Any] = {"error": {"type": action["error"]}}
    if action.get("message"):
        body["error"]["message"] = action["message"]
    if action.get("status") is not None:
        body["error"]["status"] = action["status"]
    rest = {k: v for k, v in action.items() if k not in ("error", "message")}
    return {**rest, "result": json.dumps(body, ensure_ascii=False)}


def error_mcp(action: dict[str, Any], n: int) -> dict[str, Any]:
    if "tool" not in action or "error" not in action:
        return action
    message, status = action.get("message") or "", action.get("status")
    text = f"{action['error']}: {message}" if message else action["error"]
    if status is not None and str(status) not in message:
        text += f" (HTTP {status})"
    rest = {k: v for k, v in action.items() if k not in ("error", "message", "status")}
    return {**rest, "result": {"content": [{"type": "text", "text": text}], "isError": True}}


def state_snapshot(action: dict[str, Any], n: int) -> dict[str, Any]:
    if "state" not in action or action["state"] is None:
        return action
    snapshot = {
        "values": action["state"],
        "next": [action["step"]] if "step" in action else [],
        "config": {"configurable": {"thread_id": "t-1", "checkpoint_id": _fresh("ckpt", n)}},
        "created_at": _per_call("state", n)["timestamp"],
    }
    return {**action, "state": snapshot}


def state_prose(action: dict[str, Any], n: int) -> dict[str, Any]:
    state = action.get("state")
    if not isinstance(state, dict) or not state:
        return action
    pairs = (
        f"{k}={v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}"
        for k, v in state.items()
    )
    return {**action, "state": ", ".join(pairs)}


def reply_message(action: dict[str, Any], n: int) -> dict[str, Any]:
    out = _reply(action)
    if out is None:
        return action
    return {**action, "output": {"role": "assistant", "content": out}}


def reply_message_json(action: dict[str, Any], n: int) -> dict[str, Any]:
    out = _reply(action)
    if out is None:
        return action
    message = {"id": "msg_" + _fresh("msg", n), "role": "assistant", "content": out}
    return {**action, "output": json.dumps(message, ensure_ascii=False)}


def input_messages(action: dict[str, Any], n: int) -> dict[str, Any]:
    if "model" not in action or not isinstance(action.get("input"), str):
        return action
    return {**action, "input": [{"role": "user", "content": action["input"]}]}


def args_json_text(action: dict[str, Any], n: int) -> dict[str, Any]:
    """Arguments as the JSON text a model's tool call carries them in."""
    args = action.get("args")
    if "tool" not in action or not isinstance(args, dict) or not args:
        return action
    return {**action, "args": json.dumps(args, ensure_ascii=False)}


def result_lines(action: dict[str, Any], n: int) -> dict[str, Any]:
    """A flat dict result printed by a CLI, one ``name: value`` line each."""
    result = action.get("result")
    if not _tool_result(action) or not isinstance(result, dict) or not result:
        return action
    if any(isinstance(v, (dict, list)) for v in result.values()):
        return action
    return _with_result(action, "\n".join(f"{k}: {v}" for k, v in result.items()))


def error_traceback(action: dict[str, Any], n: int) -> dict[str, Any]:
    """A raised error's message as the traceback a Python tool prints."""
    if "tool" not in action or "error" not in action or not action.get("message"):
        return action
    frame = f'  File "/srv/app/tools/{action["tool"]}.py", line 42, in run\n'
    text = f"Traceback (most recent call last):\n{frame}{action['error']}: {action['message']}"
    return {**action, "message": text}


def state_version(action: dict[str, Any], n: int) -> dict[str, Any]:
    """A dict state with what a checkpointer stamps on every save: a version and a time."""
    state = action.get("state")
    if not isinstance(state, dict):
        return action
    stamp = {"_version": n + 1, "_saved_at": _per_call("saved", n)["timestamp"]}
    return {**action, "state": {**state, **stamp}}


def reply_log_prefix(action: dict[str, Any], n: int) -> dict[str, Any]:
    """Each reply as a logger prints it: a time and a level before it."""
    out = _reply(action)
    if out is None:
        return action
    return _with_reply(action, f"{_per_call('reply', n)['timestamp']} INFO assistant: {out}")


def chat_history(case_actions: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each model call's input as the whole conversation so far (OpenAI messages): a system
    prompt, then each earlier turn and reply, then its own turn."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful agent."}]
    out = []
    for action in case_actions:
        if "model" not in action:
            out.append(action)
            continue
        turn = action.get("input")
        reply = action.get("output")
        if not isinstance(turn, str):  # no turn logged, or one already structured: kept
            out.append(action)
            if isinstance(reply, str):
                messages.append({"role": "assistant", "content": reply})
            continue
        messages.append({"role": "user", "content": turn})
        new = {**action, "input": list(messages)}
        if isinstance(reply, str):
            messages.append({"role": "assistant", "content": reply})
        out.append(new)
    return out


def _turn(action: dict[str, Any]) -> str | None:
    turn = action.get("input") if "model" in action else None
    if not isinstance(turn, str) or not turn.strip() or _json_text(turn) is not None:
        return None
    return turn


def input_punct(action: dict[str, Any], n: int) -> dict[str, Any]:
    """Each user turn's case, punctuation and spacing changed (a different change by turn)."""
    turn = _turn(action)
    if turn is None:
        return action
    changes = (
        lambda s: s,
        lambda s: s[:1].upper() + s[1:] + ("" if s.rstrip()[-1:] in ".!?。！？" else "."),
        lambda s: "  " + s.lower() + " ",
        lambda s: re.sub(r"[.!。！]\s*$", "", s.rstrip()) + "!",
    )
    return {**action, "input": changes[n % len(changes)](turn)}


def input_counter(action: dict[str, Any], n: int) -> dict[str, Any]:
    """Each user turn numbered by the harness that sends it (``[turn 4]``)."""
    turn = _turn(action)
    if turn is None:
        return action
    return {**action, "input": f"[turn {n + 1}] {turn}"}


def reply_markdown(action: dict[str, Any], n: int) -> dict[str, Any]:
    """Each reply's markdown written another way on every other turn: ``*`` bullets for ``-``,
    ``1)`` for ``1.``, the first line in bold."""
    out = _reply(action)
    if out is None or "```" in out or n % 2 == 0:
        return action
    text = re.sub(r"(?m)^(\s*)- ", r"\1* ", out)
    text = re.sub(r"(?m)^(\s*)(\d+)\. ", r"\1\2) ", text)
    head, sep, rest = text.partition("\n")
    if head.strip() and not head.lstrip().startswith(("*", "#", "|")):
        text = f"**{head.strip()}**{sep}{rest}"
    return _with_reply(action, text)


_APOLOGIES = ("", "Sorry about that! ", "Apologies for the confusion. ", "You're right, my bad. ")
_APOLOGIES_ZH = ("", "抱歉！", "不好意思，", "您说得对，是我的疏忽。")


def reply_apology(action: dict[str, Any], n: int) -> dict[str, Any]:
    """Each reply opened with another apology (none on the first): the same reply said again
    in a new wrapping of words, as a model re-prompted says it."""
    out = _reply(action)
    if out is None:
        return action
    table = _APOLOGIES_ZH if re.search(r"[\u4e00-\u9fff]", out) else _APOLOGIES
    return _with_reply(action, table[n % len(table)] + out)


def _compose(*renders: Render) -> Render:
    def render(action: dict[str, Any], n: int) -> dict[str, Any]:
        for one in renders:
            action = one(action, n)
        return action

    return render


RENDERINGS: dict[str, Render] = {
    "json_compact": json_compact,
    "json_pretty": json_pretty,
    "json_to_dict": json_to_dict,
    "mcp_text": mcp_text,
    "shell_stdout": shell_stdout,
    "per_call_fields": per_call_fields,
    "state_json": state_json,
    "state_dict": state_dict,
    "reply_counter": reply_counter,
    "reply_punct": reply_punct,
    "reply_fullwidth": reply_fullwidth,
    "reply_reorder": reply_reorder,
    "result_meta": result_meta,
    "args_per_call": args_per_call,
    "error_json_text": error_json_text,
    "error_mcp": error_mcp,
    "state_snapshot": state_snapshot,
    "state_prose": state_prose,
    "reply_message": reply_message,
    "reply_message_json": reply_message_json,
    "input_messages": input_messages,
    "args_json_text": args_json_text,
    "result_lines": result_lines,
    "error_traceback": error_traceback,
    "state_version": state_version,
    "reply_log_prefix": reply_log_prefix,
    "input_punct": input_punct,
    "input_counter": input_counter,
    "reply_markdown": reply_markdown,
    "reply_apology": reply_apology,
    "json_compact+per_call": _compose(json_compact, per_call_fields),
    "mcp_text+per_call": _compose(per_call_fields, mcp_text),
    "state_json+version": _compose(state_version, state_json),
}
#: Renderings of the whole run (each action seen with the ones before it).
RUN_RENDERINGS: dict[str, Any] = {
    "chat_history": chat_history,
}


#: A rendering of the whole run: its actions -> the actions re-rendered.
RunRender = Callable[[Sequence[dict[str, Any]]], list[dict[str, Any]]]


def rerender_run(case: Case, render: RunRender) -> Case | None:
    """``case`` re-rendered by a rendering of the whole run, or None when nothing changed."""
    actions = tuple(render(case.actions))
    return None if actions == case.actions else replace(case, actions=actions)


def rerender(case: Case, render: Render) -> Case | None:
    """``case`` with every action re-rendered (labels kept), or None when nothing changed.
    Each action is passed its index among the actions of the same tool (or model), so
    per-call values differ from call to call as they do in a real run."""
    counts: dict[str, int] = {}
    actions = []
    changed = False
    for action in case.actions:
        who = str(action.get("tool", action.get("model", "")))
        n = counts[who] = counts.get(who, -1) + 1
        new = render(action, n)
        changed |= new is not action
        actions.append(new)
    return replace(case, actions=tuple(actions)) if changed else None


#: Every rendering by name, of one action or of the whole run.
ALL: dict[str, Any] = {**RENDERINGS, **RUN_RENDERINGS}

Harness = Callable[[Sequence[Any]], list[tuple[int, str]]]


def verdict(case: Case, detector: Harness) -> tuple[tuple[bool, ...], int]:
    """What the bench scores on one case: per labelled loop whether it was found, and how many
    alarms were false or early."""
    events, owner = to_events(case)
    found = [(owner[i], kind) for i, kind in detector(events) if 0 <= i < len(owner)]
    score = Score("one")
    score_case(case, found, score)
    missed = {line.split(": loop at ")[1] for line in score.missed}
    hits = tuple(f"{lp.start} (period {lp.period}) not found" not in missed for lp in case.loops)
    return hits, len(score.false)


def flips(
    cases: Sequence[Case], render: Render, detector: Harness
) -> tuple[int, list[tuple[str, str]]]:
    """How many cases ``render`` changes, and each flip as (case id, what moved)."""
    changed = 0
    out = []
    for case in cases:
        if render in RUN_RENDERINGS.values():
            other = rerender_run(case, render)
        else:
            other = rerender(case, render)
        if other is None:
            continue
        changed += 1
        before, after = verdict(case, detector), verdict(other, detector)
        if before == after:
            continue
        what = []
        lost = sum(a and not b for a, b in zip(before[0], after[0], strict=True))
        won = sum(b and not a for a, b in zip(before[0], after[0], strict=True))
        if lost:
            what.append(f"{lost} loop(s) missed")
        if won:
            what.append(f"{won} loop(s) found")
        if after[1] != before[1]:
            what.append(f"false/early alarms {before[1]} -> {after[1]}")
        out.append((case.id, ", ".join(what)))
    return changed, out


def main(argv: list[str]) -> int:
    from bench_loop_corpus import harness

    verbose = "-v" in argv
    names = [a for a in argv if not a.startswith("-")] or list(ALL)
    cases = load(split="dev")
    total = 0
    for name in names:
        changed, moved = flips(cases, ALL[name], harness)
        total += len(moved)
        print(f"{name:<16} {changed:4d} cases re-rendered, {len(moved):3d} flipped")
        if verbose:
            for case_id, what in moved:
                print(f"    {case_id}: {what}")
    print(f"RESULT loop_rerender: split=dev flips={total}")
    return 0 if total == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
