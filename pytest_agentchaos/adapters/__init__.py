"""Chaos for agent frameworks' own tools and model calls, through the same injection core as
``chaos.wrap`` (:class:`pytest_agentchaos.inject.intercept.Interceptor`).

Each framework has its module, imported only when one of its objects is wrapped (or the user
imports it): ``adapters.langchain`` (langchain-core tools, LangChain ``create_agent``
middleware, LangGraph), ``adapters.pydantic_ai``, ``adapters.openai_agents`` and
``adapters.mcp_client`` (MCP client sessions, and the clients that hold one). Nothing here
imports a framework: an object's framework is told from the modules of the classes in its type's
MRO, which are loaded already if the object exists.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ChaosConfigError

if TYPE_CHECKING:
    from ..inject.session import ChaosSession

__all__ = ["FRAMEWORKS", "Framework", "framework_of", "require", "wrap_framework_tool"]


@dataclass(frozen=True)
class Framework:
    """An agent framework the adapters know: its tool classes (``module:QualName``, any class
    of a tool's MRO), the packages it needs, and the extra that installs them."""

    name: str
    title: str
    adapter: str
    tool_classes: tuple[str, ...]
    packages: tuple[str, ...]
    extra: str

    def install_hint(self) -> str:
        return f"pip install 'pytest-agentchaos[{self.extra}]'"


FRAMEWORKS: Mapping[str, Framework] = {
    f.name: f
    for f in (
        Framework(
            "langchain",
            "LangChain / LangGraph",
            "pytest_agentchaos.adapters.langchain",
            ("langchain_core.tools.base:BaseTool",),
            ("langchain_core",),
            "langchain",
        ),
        Framework(
            "pydantic_ai",
            "pydantic-ai",
            "pytest_agentchaos.adapters.pydantic_ai",
            ("pydantic_ai.tools:Tool", "pydantic_ai.toolsets.abstract:AbstractToolset"),
            ("pydantic_ai",),
            "pydantic-ai",
        ),
        Framework(
            "openai_agents",
            "OpenAI Agents SDK",
            "pytest_agentchaos.adapters.openai_agents",
            ("agents.tool:FunctionTool",),
            ("agents",),
            "openai-agents",
        ),
        Framework(
            "mcp",
            "MCP",
            "pytest_agentchaos.adapters.mcp_client",
            (
                "mcp.client.session:ClientSession",
                "mcp.client.client:Client",
                "agents.mcp.server:_MCPServerWithClientSession",
                "fastmcp.client.client:Client",
                "pydantic_ai.mcp:MCPToolset",
            ),
            ("mcp",),
            "mcp",
        ),
    )
}

_BY_CLASS = {path: f for f in FRAMEWORKS.values() for path in f.tool_classes}


def framework_of(obj: object) -> Framework | None:
    """The framework whose tool (or toolset) ``obj`` is, from its type's MRO, importing
    nothing; ``None`` for anything else (a plain callable)."""
    try:
        mro = type(obj).__mro__
    except Exception:  # pragma: no cover - a type always has an MRO
        return None
    for cls in mro:
        path = f"{getattr(cls, '__module__', '')}:{getattr(cls, '__qualname__', '')}"
        found = _BY_CLASS.get(path)
        if found is not None:
            return found
    return None


def require(name: str) -> Any:
    """The adapter module of framework ``name``, imported now; one clear error naming the
    extra when the framework is not installed."""
    framework = FRAMEWORKS.get(name)
    if framework is None:
        raise ChaosConfigError(
            f"no adapter for {name!r}: the adapters are {', '.join(sorted(FRAMEWORKS))}"
        )
    missing = [p for p in framework.packages if importlib.util.find_spec(p) is None]
    if missing:
        raise ChaosConfigError(
            f"the {framework.title} adapter needs {', '.join(missing)}: {framework.install_hint()}"
        )
    return importlib.import_module(framework.adapter)


def wrap_framework_tool(
    session: ChaosSession,
    tool: Any,
    framework: Framework,
    *,
    name: str | None = None,
    repair: Any = None,
) -> Any:
    """``tool`` (a framework's tool object) wrapped by its framework's adapter: an object of
    the same type, with the same name, description and argument schema."""
    __tracebackhide__ = True
    return require(framework.name).wrap_tool(session, tool, name=name, repair=repair)
