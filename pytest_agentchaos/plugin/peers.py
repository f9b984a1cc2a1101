"""Living beside other chaos plugins.

Other plugins also name their options ``--chaos-*`` and their fixture ``chaos``. Ours are
``--agentchaos-*`` and ``agentchaos``; each option also answers to its ``--chaos-*`` name, and
the fixture to ``chaos``, where no other installed plugin has that name. So pytest starts
whatever is installed beside us, neither plugin takes over the other's tests, and the header
says which names are another plugin's.
"""

from __future__ import annotations

import argparse
import os
import re
import types
from collections.abc import Generator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import pytest

from .options import PEERS

if TYPE_CHECKING:
    from ..inject.chaos import Chaos

__all__ = ["OWN_MARKER", "ChaosFixture", "Peers", "has_own_marker", "own_marks"]

#: Where a printed command finds our options when another plugin has a ``--chaos-*`` name.
OWN_PREFIX = "--agentchaos-"
SHORT_PREFIX = "--chaos-"
#: The ``chaos`` marker under its own name (``chaos`` is its short name, unless another plugin
#: has a marker of that name).
OWN_MARKER = "agentchaos"


def _probe() -> None:
    """A function to learn the type ``@pytest.fixture`` makes (pytest exports no name for it)."""


_FIXTURE_TYPE = type(pytest.fixture(_probe))


class Peers:
    """Adds each option's ``--chaos-*`` twin once every installed plugin has added its own
    options, registers the ``chaos`` fixture when no other plugin has one, and reports the names
    that are another plugin's in the header."""

    def __init__(
        self, group: pytest.OptionGroup, options: Sequence[tuple[str, dict[str, Any]]]
    ) -> None:
        self._group = group
        self._options = options
        #: our ``--chaos-*`` names that another plugin has -> that plugin (its distribution)
        self.taken: dict[str, str] = {}
        #: the plugins that have a fixture named ``chaos`` (ours is then ``agentchaos`` alone)
        self.fixture_owners: tuple[str, ...] = ()
        self._marker_shared: bool | None = None

    @property
    def prefix(self) -> str:
        """How printed commands spell our options: ``--chaos-`` unless another plugin has one
        of those names, then ``--agentchaos-`` (which are always ours)."""
        return OWN_PREFIX if self.taken else SHORT_PREFIX

    @pytest.hookimpl(wrapper=True)
    def pytest_load_initial_conftests(
        self, early_config: pytest.Config, parser: pytest.Parser, args: list[str]
    ) -> Generator[None, None, None]:
        """After every installed plugin and the initial conftests added their options (the last
        moment before pytest parses the command line): add the twins no one else has."""
        try:
            return (yield)
        finally:
            self._add_twins(early_config.pluginmanager)

    def _add_twins(self, pluginmanager: pytest.PytestPluginManager) -> None:
        from .options import dest

        for name, attrs in self._options:
            flag = SHORT_PREFIX + name
            try:
                self._group.addoption(flag, dest=dest(name), **{**attrs, "help": argparse.SUPPRESS})
            except (ValueError, argparse.ArgumentError):  # pytest's or argparse's "already added"
                self.taken[flag] = "another plugin"
        if self.taken:
            self.taken.update(_option_owners(pluginmanager, self.taken))

    def pytest_configure(self, config: pytest.Config) -> None:
        """Name our fixture ``chaos`` too, unless an installed plugin has a fixture of that
        name: then each plugin keeps its own, and the header says so."""
        self.fixture_owners = _fixture_owners(config.pluginmanager, "chaos")
        if not self.fixture_owners:
            config.pluginmanager.register(ChaosFixture(), "agentchaos-chaos-fixture")
        config.addinivalue_line(
            "markers",
            f"{OWN_MARKER}(...): the chaos marker by its own name, with the same arguments (the "
            "one to use where another plugin has a chaos marker)",
        )

    def marker_shared(self, config: pytest.Config) -> bool:
        """Whether another plugin registered a marker named ``chaos`` (read once every plugin
        is configured): then ``@pytest.mark.chaos`` is left to it, ours is ``agentchaos``."""
        if self._marker_shared is None:
            from ..harness.spec import MARKERS

            self._marker_shared = any(
                re.split(r"[(:]", str(line), maxsplit=1)[0].strip() == "chaos"
                and str(line) != MARKERS["chaos"]
                for line in config.getini("markers")
            )
        return self._marker_shared

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        """One line per plugin that has some of our names."""
        by_owner: dict[str, list[str]] = {}
        for flag, owner in self.taken.items():
            by_owner.setdefault(owner, []).append(flag)
        lines = []
        for owner, flags in by_owner.items():
            ours = [OWN_PREFIX + flag[len(SHORT_PREFIX) :] for flag in flags]
            lines.append(
                f"agentchaos: {', '.join(flags)} {_are(flags)} {owner}'s here: ours "
                f"{_are(ours)} {', '.join(ours)} (and every option is --agentchaos-*)"
            )
        if self.marker_shared(config):
            lines.append(
                "agentchaos: the marker chaos is another plugin's here: ours is agentchaos "
                "(@pytest.mark.agentchaos(...), the same arguments)"
            )
        if self.fixture_owners:
            lines.append(
                f"agentchaos: the fixture chaos is {' and '.join(self.fixture_owners)}'s here: "
                "ours is agentchaos (a test with a chaos marker gets it)"
            )
        return lines


class ChaosFixture:
    """The fixture ``chaos``: ``agentchaos`` under its short name (registered when no other
    installed plugin has a fixture of that name)."""

    @pytest.fixture
    def chaos(self, agentchaos: Chaos) -> Chaos:
        """Inject the test's chaos profile into tools, HTTP and model calls, on virtual time
        (the fixture ``agentchaos``, under its short name).

        ``chaos.wrap(fn)`` / ``chaos.wrap_tools(...)`` / ``chaos.http`` / ``chaos.model(fn)`` /
        ``chaos.step()``; ``chaos.trace``, ``chaos.seed``, ``chaos.profile``, ``chaos.clock``.
        """
        return agentchaos


class _Mark(NamedTuple):
    """An ``agentchaos`` mark as the ``chaos`` mark it stands for."""

    name: str
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]


def own_marks(node: Any, name: str | None = None) -> list[Any]:
    """``node``'s marks that are ours, closest first (``iter_markers``' order), optionally only
    those named ``name``: an ``agentchaos`` mark as ``chaos``, a ``chaos`` mark unless another
    plugin has a marker of that name."""
    peers = node.config.pluginmanager.get_plugin(PEERS)
    shared = isinstance(peers, Peers) and peers.marker_shared(node.config)
    found: list[Any] = []
    for mark in node.iter_markers():
        if mark.name == OWN_MARKER:
            mark = _Mark("chaos", mark.args, mark.kwargs)
        elif mark.name == "chaos" and shared:
            continue
        if name is None or mark.name == name:
            found.append(mark)
    return found


def has_own_marker(node: Any) -> bool:
    """Whether ``node`` has any marker of ours (see :func:`own_marks`)."""
    from ..harness.spec import MARKERS

    keywords = node.keywords
    if not any(name in keywords for name in (*MARKERS, OWN_MARKER)):
        return False
    return any(mark.name in MARKERS for mark in own_marks(node))


def _are(names: Sequence[str]) -> str:
    return "is" if len(names) == 1 else "are"


def _distributions(pluginmanager: pytest.PytestPluginManager) -> dict[int, str]:
    """Installed plugins (by ``id``) -> their distribution's name and version."""
    return {
        id(plugin): f"{dist.project_name} {dist.version}"
        for plugin, dist in pluginmanager.list_plugin_distinfo()
    }


def _is_ours(obj: object) -> bool:
    module = obj.__name__ if isinstance(obj, types.ModuleType) else type(obj).__module__
    return module.split(".")[0] == "pytest_agentchaos"


def _option_owners(
    pluginmanager: pytest.PytestPluginManager, flags: Iterable[str]
) -> dict[str, str]:
    """Which installed plugin has each of ``flags``: each other plugin's ``pytest_addoption``
    (the ones that take the parser alone) run again on a parser of their own."""
    wanted, found = set(flags), dict[str, str]()
    dists = _distributions(pluginmanager)
    for impl in pluginmanager.hook.pytest_addoption.get_hookimpls():
        owner = dists.get(id(impl.plugin))
        if owner is None or _is_ours(impl.plugin) or set(impl.argnames) != {"parser"}:
            continue
        scratch = pytest.Parser(_ispytest=True)
        try:
            impl.function(parser=scratch)
        except Exception:  # noqa: BLE001 - only a name for the header is lost
            continue
        for flag in wanted - set(found):
            try:
                scratch.addoption(flag)
            except (ValueError, argparse.ArgumentError):
                found[flag] = owner
    return found


def _fixture_owners(pluginmanager: pytest.PytestPluginManager, name: str) -> tuple[str, ...]:
    """The plugins (installed ones by their distribution) that define a fixture called ``name``,
    read as pytest reads a plugin's fixtures. A conftest's fixture of that name is the user's
    own override, and is not counted; nor are pytest's own plugins."""
    owners = []
    dists = _distributions(pluginmanager)
    for plugin_name, plugin in pluginmanager.list_name_plugin():
        if plugin is None or _is_ours(plugin) or _is_conftest_or_pytest(plugin):
            continue
        holder = plugin if isinstance(plugin, types.ModuleType) else type(plugin)
        try:
            names = dir(holder)
        except Exception:  # noqa: BLE001 - an odd plugin object: it defines no fixture we see
            continue
        for attr in names:
            try:
                value = getattr(holder, attr, None)
            except Exception:  # noqa: BLE001
                continue
            if type(value) is _FIXTURE_TYPE and getattr(value, "name", attr) == name:
                owners.append(dists.get(id(plugin), plugin_name))
                break
    return tuple(owners)


def _is_conftest_or_pytest(plugin: object) -> bool:
    if not isinstance(plugin, types.ModuleType):
        return type(plugin).__module__.startswith("_pytest.")
    if plugin.__name__.startswith("_pytest."):
        return True
    return os.path.basename(getattr(plugin, "__file__", None) or "") == "conftest.py"
