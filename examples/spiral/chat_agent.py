"""A small LLM-loop agent watched by the halt monitor (seed 004, the semantic spiral).

Each turn the agent builds a prompt (the task, its last replies, the last tool result and any
nudge from its supervisor), asks the model and reads the reply:

- ``FINAL: <answer>`` ends the run: the task is done;
- a line ``CALL <tool> <argument>`` runs one of its tools; the result (or the tool's error)
  goes into the next prompt;
- anything else is a thought, kept for the next prompt.

After every model and tool call (once its retries are over) it asks its
:class:`~pytest_agentchaos.halt.Responder` what to do about the halt monitor's latest decision:
a ``nudge`` puts the responder's message into the next prompt, a stopping action
(``terminate``, ``escalate``) ends the run. Transient errors (timeouts, dropped connections,
429 and 5xx) are retried with exponential backoff on the ``sleep`` it is given (in a chaos
test, the virtual clock's), so a flaky model or tool does not end the run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_agentchaos.halt import Responder

#: Replies from the model that are shown again in the next prompt.
MEMORY = 3


class Stopped(Exception):
    """The responder decided the run must stop (raised inside the agent, caught by it)."""


@dataclass
class ChatResult:
    """How a run ended. ``status``: ``done`` (the model gave its FINAL answer), ``halted``
    (the responder stopped it) or ``out_of_turns``. ``nudges``: the nudge messages the agent
    was given."""

    status: str
    answer: str = ""
    turns: int = 0
    replies: list[str] = field(default_factory=list)
    nudges: list[str] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.status == "done"


def transient(error: BaseException) -> bool:
    """Worth retrying as it is: a timeout, a dropped connection, 429 or a 5xx status."""
    status = getattr(error, "status", None)
    if isinstance(status, int):
        return status == 429 or status >= 500
    return isinstance(error, (TimeoutError, ConnectionError))


class ChatAgent:
    """The loop described in the module's docstring.

    ``model``: ``prompt -> reply text``. ``tools``: name -> function of one text argument (or
    none). ``responder``: answers the halt monitor's decisions (None: nobody watches).
    ``sleep``: how the agent waits before a retry. ``max_turns``: the agent's own limit."""

    def __init__(
        self,
        task: str,
        model: Callable[[str], str],
        *,
        tools: Mapping[str, Callable[..., Any]] | None = None,
        responder: Responder | None = None,
        sleep: Callable[[float], Any] = lambda seconds: None,
        max_turns: int = 100,
        max_attempts: int = 8,
    ) -> None:
        self.task = task
        self.model = model
        self.tools = dict(tools or {})
        self.responder = responder
        self.sleep = sleep
        self.max_turns = max_turns
        self.max_attempts = max_attempts
        self.nudge = ""
        self.nudges: list[str] = []
        self.tool_note = ""

    def run(self) -> ChatResult:
        """Run until the FINAL answer, a stop from the responder, or ``max_turns``."""
        result = ChatResult("out_of_turns")
        try:
            for turn in range(1, self.max_turns + 1):
                result.turns = turn
                reply = str(self._call(self.model, self.prompt(result.replies)))
                result.replies.append(reply)
                if reply.lstrip().startswith("FINAL:"):
                    result.status, result.answer = "done", reply.split("FINAL:", 1)[1].strip()
                    return result
                call = next((ln for ln in reply.splitlines() if ln.startswith("CALL ")), None)
                self.tool_note = self._use_tool(call[5:].strip()) if call else ""
        except Stopped:
            result.status = "halted"
        finally:
            result.nudges = list(self.nudges)
        return result

    def prompt(self, replies: list[str]) -> str:
        """The task, the last :data:`MEMORY` replies, the last tool result and any nudge."""
        lines = [f"Task: {self.task}"]
        lines += [f"You said: {reply}" for reply in replies[-MEMORY:]]
        if self.tool_note:
            lines.append(self.tool_note)
        if self.nudge:  # for one prompt only
            lines.append(f"Supervisor: {self.nudge}")
            self.nudge = ""
        lines.append("Reply with your next step, CALL <tool> <argument>, or FINAL: <answer>.")
        return "\n".join(lines)

    def _use_tool(self, request: str) -> str:
        name, _, argument = request.partition(" ")
        tool = self.tools.get(name)
        if tool is None:
            return f"Tool {name}: no such tool; tools: {', '.join(self.tools) or 'none'}"
        try:
            output = self._call(tool, *([argument] if argument else []))
        except Stopped:
            raise
        except Exception as error:  # the tool's own failure is news for the model
            return f"Tool {name} failed: {type(error).__name__}: {error}"
        return f"Tool {name}: {output}"

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``, retrying transient errors. The responder is asked once the call is
        over (its output, or the error the agent gives up on): every attempt is a step the
        monitor reads, but while a retry is pending there is nothing to decide."""
        attempt = 0
        while True:
            attempt += 1
            try:
                output = fn(*args)
            except Exception as error:
                if transient(error) and attempt < self.max_attempts:
                    self.sleep(min(2.0 ** (attempt - 1), 30.0))
                    continue
                self._check()
                raise
            self._check()
            return output

    def _check(self) -> None:
        if self.responder is None:
            return
        action = self.responder.respond()
        if action.kind == "nudge":
            self.nudge = action.message
            self.nudges.append(action.message)
        if action.stop:
            raise Stopped(action.message)
