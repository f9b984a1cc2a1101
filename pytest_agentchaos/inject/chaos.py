"""``Chaos``: the object behind the ``chaos`` fixture, usable without pytest too."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..adapters import framework_of, require, wrap_framework_tool
from ..clock.clock import Clock, VirtualClock
from ..clock.patch import install as install_clock
from ..config import fail
from ..errors import RunClosed
from ..faults.plan import FaultPlan, FaultSpec, parse_faults
from ..profiles.budgets import Budgets
from ..profiles.profile import Profile, inline_profile
from ..saferepr import safe_repr
from ..trace.trace import Trace
from ..trace.values import DEFAULT_MAX_VALUE, capture
from .callables import tool_name, wrap
from .model import TokenCounter, wrap_model
from .network import AllowList
from .session import ChaosSession

if TYPE_CHECKING:
    from .http import ChaosRouter
    from .providers import ParsedRequest
    from .scripted import ProviderEndpoint

F = TypeVar("F", bound=Callable[..., Any])
#: a tool: a callable, or a framework's tool object (a langchain-core BaseTool is no callable)
T = TypeVar("T")


class Chaos:
    """Inject a profile's faults into an agent's tools, HTTP and model calls, on virtual time.

    Build one with :meth:`create` (the pytest fixture does); call :meth:`close` when done.
    """

    def __init__(
        self, session: ChaosSession, profile: Profile, allow: AllowList | None = None
    ) -> None:
        self.session = session
        self.profile = profile
        #: hosts an HTTP request with no declared route may still reach (see ``chaos.http``)
        self.allow = allow if allow is not None else AllowList()
        self._http: ChaosRouter | None = None
        self._httpx2_routed = False  # httpx2's transports go through the router (see wire)
        self._virtual_sleep = False  # the agent's own sleeps are virtual

    @classmethod
    def create(
        cls,
        profile: Profile | None = None,
        *,
        seed: int = 0,
        faults: Sequence[FaultSpec | Mapping[str, Any]] = (),
        budgets: Budgets | None = None,
        clock: Clock | None = None,
        test_id: str = "",
        schedule: Sequence[Mapping[str, Any]] | None = None,
        schedule_beyond: str = "none",
        freeze_time: bool = False,
        virtual_sleep: bool = False,
        allow_hosts: AllowList | None = None,
        max_value: int = DEFAULT_MAX_VALUE,
    ) -> Chaos:
        """A chaos run: ``faults`` (``FaultSpec`` objects, or fault tables as dicts, as a
        profile writes them) go before the profile's; ``budgets`` override the profile's.

        With ``schedule`` (e.g. ``Trace.schedule()`` of an earlier run) the run replays those
        decisions instead of drawing (``schedule_beyond="profile"``: the calls it does not name
        are drawn from the faults as without one; ``"none"``: they are fault-free).
        ``freeze_time`` / ``virtual_sleep`` make global time
        follow the virtual clock (see :func:`pytest_agentchaos.clock.install`).
        ``allow_hosts`` lets HTTP requests without a declared route through to those hosts;
        ``max_value`` caps each value the trace records (JSON characters).
        """
        profile = profile or inline_profile("none")
        given: tuple[FaultSpec, ...]
        if isinstance(faults, (Mapping, str, bytes)) or any(
            not isinstance(f, FaultSpec) for f in faults
        ):  # fault tables as a profile or marker writes them: checked the same way
            raw = [faults] if isinstance(faults, Mapping) else faults
            given = parse_faults(raw, "Chaos.create(): faults")
        else:
            given = tuple(f for f in faults if isinstance(f, FaultSpec))
        specs = (*given, *profile.faults)
        plan = (
            FaultPlan.from_schedule(schedule, specs, beyond=schedule_beyond, seed=seed)
            if schedule is not None
            else FaultPlan(specs, seed)
        )
        effective = profile.budgets.override(budgets) if budgets is not None else profile.budgets
        the_clock = clock if clock is not None else VirtualClock()
        if (freeze_time or virtual_sleep) and not isinstance(the_clock, VirtualClock):
            raise ValueError("freeze_time and virtual_sleep need a VirtualClock (the default)")
        session = ChaosSession(
            plan,
            budgets=effective,
            clock=the_clock,
            seed=seed,
            profile=profile.name,
            test_id=test_id,
            max_value=max_value,
        )
        session.trace.meta["faults"] = capture([f.to_dict() for f in specs], max_value)
        chaos = cls(session, profile, allow_hosts)
        chaos._virtual_sleep = virtual_sleep
        if (freeze_time or virtual_sleep) and isinstance(the_clock, VirtualClock):
            try:
                handle = install_clock(the_clock, freeze=freeze_time, patch_sleep=virtual_sleep)
            except BaseException:
                session.close()
                raise
            session.add_cleanup(handle.uninstall)
        return chaos

    # -- injection -----------------------------------------------------------------------

    def wrap(
        self,
        fn: T,
        name: str | None = None,
        schema: Mapping[str, Any] | None = None,
        *,
        repair: Any = None,
    ) -> T:
        """Wrap a sync or async tool; name, signature and docstring are kept. ``repair``: a
        ``ParamRepairer`` that checks (and repairs) every call's arguments after the faults
        and before the tool runs, writing ``Repair`` events to this run's trace and reading
        relative dates against its clock.

        A framework's tool object (a langchain-core ``BaseTool``, a pydantic-ai ``Tool`` or
        toolset, an Agents SDK ``FunctionTool``) comes back as an object of its own type with
        the same name, description and argument schema, its calls going through the plan
        before the real tool runs (see :mod:`pytest_agentchaos.adapters`); its schema is the
        tool's own, so ``schema`` must not be given.

        An MCP client session (an ``mcp.ClientSession``, an entered ``mcp.Client``, an Agents
        SDK ``MCPServer*``) comes back as the same object, its tool calls going through the
        plan, faults delivered as MCP delivers them; ``repair=True`` repairs each tool's
        arguments against its listed ``inputSchema`` (or pass a mapping of tool name ->
        ``ParamRepairer``). See :mod:`pytest_agentchaos.adapters.mcp_client`."""
        __tracebackhide__ = True
        if name is not None:
            _check_name(name, "chaos.wrap(): name", "tool")
        framework = framework_of(fn)
        if framework is not None:
            if schema is not None:
                raise TypeError(
                    f"chaos.wrap(): a {framework.title} tool brings its own argument schema; "
                    "do not pass schema="
                )
            if framework.name == "mcp":  # a session's repairers follow the run's [repair]
                mcp = require(framework.name)
                policy = self.profile.policy("repair") if repair is True else None
                return mcp.wrap_tool(self.session, fn, name=name, repair=repair, policy=policy)  # type: ignore[no-any-return]
            return wrap_framework_tool(self.session, fn, framework, name=name, repair=repair)  # type: ignore[no-any-return]
        return wrap(self.session, fn, name=name, schema=schema, repair=repair)  # type: ignore[type-var]

    def wrap_tools(
        self,
        tools: Mapping[str, Any] | Sequence[Any],
        schemas: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> Any:
        """Wrap a name -> tool mapping (or a list of tools); returns the same shape. A tool is
        a callable or a framework's tool object (see :meth:`wrap`); ``schemas`` maps a tool's
        name to its parameter schema. Every tool is checked before any is wrapped."""
        __tracebackhide__ = True
        where = "chaos.wrap_tools()"
        entries: list[tuple[str | None, Any]]
        if isinstance(tools, Mapping):
            entries = list(tools.items())
            for key, tool in entries:
                _check_name(key, f"{where}: tools", "tool", key=True)
                _check_tool(tool, f"{where}: tools[{safe_repr(key, 80)}]")
        elif isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence):
            raise TypeError(
                f"{where}: tools: expected a mapping of name -> tool or a list of tools, "
                f"got {safe_repr(tools, 80)}"
            )
        else:
            for i, tool in enumerate(tools):
                _check_tool(tool, f"{where}: tools[{i}]")
            entries = [(None, tool) for tool in tools]
        if schemas is not None and not isinstance(schemas, Mapping):
            raise fail(
                f"{where}: schemas",
                f"expected a mapping of tool name -> JSON Schema, got {safe_repr(schemas, 80)}",
            )
        schemas = schemas or {}
        names = [key if key is not None else _tool_name(tool) for key, tool in entries]
        unknown = sorted(str(k) for k in schemas if k not in names)
        if unknown:
            raise fail(
                f"{where}: schemas",
                f"a schema for {unknown[0]!r}, which is not among the tools: {', '.join(names)}",
            )
        wrapped = []
        for (key, tool), name in zip(entries, names, strict=True):  # a loop: no frame to show
            wrapped.append(self.wrap(tool, name=key, schema=schemas.get(name)))
        if isinstance(tools, Mapping):
            return {key: tool for (key, _), tool in zip(entries, wrapped, strict=True)}
        return wrapped

    def model(self, fn: F, name: str = "model", tokens: TokenCounter | None = None) -> F:
        """Wrap a model-call function; ``tokens(output)`` reports usage (default: ``.usage``)."""
        __tracebackhide__ = True
        _check_name(name, "chaos.model(): name", "model")
        return wrap_model(self.session, fn, name=name, tokens=tokens)

    def step(self, label: str | None = None, state: Any = None) -> int:
        """Count one agent step; returns the step index. ``label`` names the node a graph
        agent entered; ``state`` (any data; volatile fields are masked) is what it reports of
        its state there: the same state seen again with nothing new in between is a loop."""
        __tracebackhide__ = True
        if label is not None and not isinstance(label, str):
            raise TypeError(
                f"chaos.step(): label: expected the name of the step (a string) or None, "
                f"got {safe_repr(label, 80)}"
            )
        return self.session.step(label, state)

    @property
    def http(self) -> ChaosRouter:
        """A started respx router: declare routes on it; the plan's faults apply to them."""
        if self._http is None:
            if self.session._closed:
                raise RunClosed(
                    "chaos.http: this chaos run has ended; declare routes in the test that "
                    "uses them"
                )
            from .http import ChaosRouter  # httpx and respx load on first use

            router = ChaosRouter(self.session, allow=self.allow)
            router.start()
            self._http = router
            self.session.add_cleanup(lambda: router.stop(quiet=True))
            from .wire import intercept_httpx2

            intercept_httpx2(self)  # httpx2 clients (the openai and anthropic SDKs') too
        return self._http

    def provider(
        self,
        provider: str,
        script: Sequence[Any] | None = None,
        *,
        respond: Callable[[ParsedRequest], Any] | None = None,
        base_url: str | None = None,
        name: str | Callable[[ParsedRequest], str] | None = None,
    ) -> ProviderEndpoint:
        """Answer a provider's API on the run's router with scripted model turns.

        ``provider``: ``"openai"`` (Chat Completions and Responses) or ``"anthropic"``
        (Messages). The agent's real SDK client (sync or async, streamed or not) talks to it
        as to the provider's public host, or to ``base_url`` (an OpenAI-compatible endpoint
        anywhere else). ``script``: the model's turns in order, each ``{"content": "text"}``,
        ``{"tool_calls": [{"name": "search", "arguments": {"q": "x"}}]}`` or both, with
        optional ``"usage": {"input_tokens": n, "output_tokens": m}`` and
        ``"finish_reason"``; or ``respond=fn(request)`` returning such a turn for each parsed
        request. ``name``: the target the calls are filed under (default: the request's
        model); or a function of the parsed request returning the name of the agent that
        sent it (a multi-agent app's agents share one client: tell them apart by their
        system prompt), each agent then its own target. The plan's ``model`` faults arrive
        on the wire as the provider sends them. Returns the endpoint; its ``requests`` are
        the parsed requests the agent sent.
        """
        __tracebackhide__ = True
        from .scripted import ProviderEndpoint
        from .wire import intercept_httpx2

        if self.session._closed:
            raise RunClosed(
                "chaos.provider(): this chaos run has ended; declare the endpoint in the test "
                "that uses it"
            )
        endpoint = ProviderEndpoint(
            self.session,
            provider,
            script=script,
            respond=respond,
            base_url=base_url,
            name=name,
            virtual_sleep=self._virtual_sleep,
        )
        for other in self.http.endpoints:
            if other.serves(endpoint):
                raise ValueError(
                    f"chaos.provider(): {endpoint.provider} at {endpoint.base_url} is already "
                    "answered by an endpoint of this run: give one endpoint the whole script "
                    "(or respond=fn), or another base_url"
                )
        self.http.endpoints.append(endpoint)
        self.session.provider_endpoints.append(endpoint)
        intercept_httpx2(self, load=True)  # the SDKs send through httpx2
        return endpoint

    # -- state ---------------------------------------------------------------------------

    @property
    def trace(self) -> Trace:
        """The run's trace: every call, fault, step and halt recorded so far."""
        return self.session.trace

    @property
    def seed(self) -> int:
        """The seed this run's fault plan draws from (unused when it replays a schedule)."""
        return self.session.seed

    @property
    def clock(self) -> Clock:
        """The run's clock (a :class:`VirtualClock` unless ``create`` was given another)."""
        return self.session.clock

    @property
    def budgets(self) -> Budgets:
        """The run's hard budgets: the profile's, with any overrides applied."""
        return self.session.budgets

    @property
    def plan(self) -> FaultPlan:
        """The run's fault plan."""
        return self.session.plan

    def close(self) -> None:
        """Stop the HTTP router and restore global time; safe to call twice."""
        self.session.close()

    def __enter__(self) -> Chaos:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.session.end()
        finally:
            self.close()

    def __repr__(self) -> str:
        return (
            f"<Chaos profile={safe_repr(self.profile.name, 80)} seed={self.seed} "
            f"steps={self.session.steps} faults={len(self.trace.faults())}>"
        )


def _check_name(name: object, where: str, what: str, *, key: bool = False) -> str:
    """A name given explicitly (or a key of ``wrap_tools``' mapping): a non-empty string."""
    __tracebackhide__ = True
    if not isinstance(name, str) or not name.strip():
        each = " as each key" if key else ""
        raise fail(where, f"expected a non-empty {what} name{each}, got {safe_repr(name, 80)}")
    return name


def _check_tool(tool: object, where: str) -> None:
    """A tool ``wrap_tools`` can wrap: a callable or a framework's tool object."""
    __tracebackhide__ = True
    if not callable(tool) and framework_of(tool) is None:
        raise TypeError(
            f"{where}: expected a tool (a function, a callable object or a framework's tool), "
            f"got {safe_repr(tool, 80)}"
        )


def _tool_name(tool: Any) -> str:
    """The name ``wrap`` gives an unnamed tool (a framework's tool keeps its own)."""
    if framework_of(tool) is not None:
        found = getattr(tool, "name", None)
        return found if isinstance(found, str) else type(tool).__name__
    return tool_name(tool)
