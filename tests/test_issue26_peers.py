"""Installed beside other chaos plugins: every option is ``--agentchaos-*`` and also
``--chaos-*`` where no other plugin has that name; the fixture is ``agentchaos`` and also
``chaos``, the marker ``agentchaos`` and also ``chaos``, where no other plugin has those names.
pytest always starts, and the header says which names are another plugin's.

A fake peer, installed as a distribution with a ``pytest11`` entry point (as a real one is),
takes each of the names our plugin also uses; the real peers (agentic-chaos, agentchaos-core,
pytest-resilience-agent) are tested where they are installed (CI installs each in turn).
"""

from __future__ import annotations

import importlib.util
import os
import re
import textwrap
from pathlib import Path

import pytest

FAKE_PEER = """
import pytest

def pytest_addoption(parser):
    group = parser.getgroup("fakepeer")
    group.addoption("--chaos", action="store_true", default=False)
    group.addoption("--chaos-seed", type=int, default=None)
    group.addoption("--chaos-report-dir", default=None)

def pytest_configure(config):
    config.addinivalue_line("markers", "chaos(level): the fake peer's chaos")

@pytest.fixture
def chaos(request):
    return ("fakepeer", request.config.getoption("chaos_seed"))
"""

AGENT = """
import pytest

def test_peers_fixture(chaos):
    assert chaos[0] == "fakepeer"
    print("PEER-SEED", chaos[1])

def test_our_fixture(agentchaos):
    print("OUR-SEED", agentchaos.seed, agentchaos.profile.name)

@pytest.mark.chaos(level=3)
def test_peers_marker(request):
    assert "agentchaos" not in request.fixturenames

@pytest.mark.agentchaos(profile="outage")
def test_our_marker(agentchaos):
    assert agentchaos.profile.name == "outage"
"""


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


#: The real peers' modules: a test of ours alone, or beside the fake peer, needs none of them.
REAL_PEERS = ("pytest_agentic_chaos", "agent_chaos", "pytest_resilience_agent")
alone = pytest.mark.skipif(
    any(_installed(m) for m in REAL_PEERS), reason="a real peer is installed here"
)


def _install_fake_peer(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """``fakepeer`` 1.0 as an installed distribution: a folder on ``PYTHONPATH`` with its
    module and ``.dist-info`` (entry point ``pytest11``), found by pytest's auto-loading."""
    site = pytester.mkdir("site")
    (site / "fakepeer.py").write_text(FAKE_PEER, encoding="utf-8")
    info = site / "fakepeer-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakepeer\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pytest11]\nfakepeer = fakepeer\n")
    path = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(site), path) if p))


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", *args)


@alone
def test_pytest_starts_beside_a_peer_that_has_our_names_and_says_so(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install_fake_peer(pytester, monkeypatch)
    pytester.makepyfile(test_agent=AGENT)
    result = _run(
        pytester, "-s", "-v", "--strict-markers", "--chaos-seed=7", "--agentchaos-seed=11"
    )
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines_random(
        [
            "agentchaos: --chaos-seed, --chaos-report-dir are fakepeer 1.0's here: ours are "
            "--agentchaos-seed, --agentchaos-report-dir (and every option is --agentchaos-*)",
            "agentchaos: the marker chaos is another plugin's here: ours is agentchaos "
            "(@pytest.mark.agentchaos(...), the same arguments)",
            "agentchaos: the fixture chaos is fakepeer 1.0's here: ours is agentchaos (a test "
            "with a chaos marker gets it)",
            "agentchaos: profile=none seed=11 (replay with --agentchaos-seed=11)",
            "*PEER-SEED 7*",  # the peer's option went to the peer
            "*OUR-SEED * none*",
            "session seed 11: replay with --agentchaos-seed=11",
        ]
    )
    # the peer's marked test is the peer's: it is no chaos test of ours
    rows = [line for line in result.outlines if line.startswith("PASSED  ")]
    assert len(rows) == 2 and not any("test_peers_marker" in row for row in rows), rows
    # every printed replay command names options this session gives to us
    assert not re.search(r"replay: pytest \S+ --chaos-", result.stdout.str())


@alone
def test_a_failing_test_beside_a_peer_prints_a_replay_command_that_replays_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install_fake_peer(pytester, monkeypatch)
    pytester.makepyfile(
        test_agent="""
        def test_agent(agentchaos):
            print("SEED", agentchaos.seed)
            assert False
        """
    )
    result = _run(pytester, "-s", "--chaos-seed=7", "--agentchaos-seed=5")
    result.assert_outcomes(failed=1)
    first = re.search(r"\bSEED (\d+)", result.stdout.str())
    line = next(line for line in result.outlines if line.startswith("replay: pytest "))
    assert line == "replay: pytest test_agent.py::test_agent --agentchaos-seed=5", line
    again = _run(pytester, "-s", *line.split()[2:])
    assert first and re.search(rf"\bSEED {first.group(1)}\b", again.stdout.str())


@alone
def test_without_peers_each_option_answers_to_both_names(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
        import pytest

        def test_short(chaos, agentchaos):
            assert chaos is agentchaos
            print("SEEDS", chaos.seed, chaos.profile.name)

        @pytest.mark.agentchaos(profile="outage")
        def test_long_marker(chaos):
            assert chaos.profile.name == "outage"
        """
    )
    short = pytester.runpytest("-s", "--chaos-seed=3", "--chaos-profile=flaky")
    long = pytester.runpytest("-s", "--agentchaos-seed=3", "--agentchaos-profile=flaky")
    for result in (short, long):
        result.assert_outcomes(passed=2)
        result.stdout.fnmatch_lines(
            ["agentchaos: profile=flaky seed=3 (replay with --chaos-seed=3)"]
        )
        assert "another plugin" not in result.stdout.str()
        assert "is fakepeer" not in result.stdout.str()
    seeds = [re.findall(r"\bSEEDS \d+ \w+", r.stdout.str()) for r in (short, long)]
    assert seeds[0] == seeds[1] != []
    listed = pytester.runpytest("--agentchaos-list-profiles")
    assert listed.ret == 0 and "flaky" in listed.stdout.str()


@alone
def test_a_conftest_chaos_fixture_is_the_users_own_and_no_clash(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import pytest

        @pytest.fixture
        def chaos(agentchaos):
            return ("mine", agentchaos)
        """
    )
    pytester.makepyfile(test_agent="def test_agent(chaos):\n    assert chaos[0] == 'mine'\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert "the fixture chaos is" not in result.stdout.str()


# -- the real peers, where installed (CI installs each in turn, never two at once) ----------

PEER_SUITE = textwrap.dedent(
    """
    import pytest

    def test_ours_by_its_own_name(agentchaos):
        tool = agentchaos.wrap(lambda q: q, name="search")
        assert tool("x") == "x"

    @pytest.mark.agentchaos(profile="outage", virtual_sleep=True)
    def test_our_marker_by_its_own_name(agentchaos):
        tool = agentchaos.wrap(lambda q: q, name="search")
        with pytest.raises(Exception):
            tool("x")
    """
)


@pytest.mark.skipif(not _installed("pytest_agentic_chaos"), reason="agentic-chaos not installed")
def test_beside_agentic_chaos(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_peer=PEER_SUITE
        + textwrap.dedent(
            """
            @pytest.mark.chaos(faults=["rate_limit_storm"], must_recover=True)
            def test_theirs(chaos):
                assert type(chaos).__module__ == "pytest_agentic_chaos.plugin"
            """
        )
    )
    result = _run(pytester, "--chaos-report-dir", str(pytester.path / "theirs"), "-v")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines_random(
        [
            "agentchaos: --chaos-report-dir is agentic-chaos *'s here: ours is "
            "--agentchaos-report-dir *",
            "agentchaos: the fixture chaos is agentic-chaos *'s here: ours is agentchaos *",
            "agentchaos: the marker chaos is another plugin's here: *",
        ]
    )


@pytest.mark.skipif(not _installed("agent_chaos"), reason="agentchaos-core not installed")
def test_beside_agentchaos_core(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_peer=PEER_SUITE
        + textwrap.dedent(
            """
            from agent_chaos import chaos as agentchaos_core

            @agentchaos_core(runs=3, seed=1)
            def test_theirs(chaos_tracer, chaos):
                assert chaos is not None  # ours: agentchaos-core has no fixture of that name
            """
        )
    )
    result = _run(pytester, "--chaos", "--chaos-runs=2", "--chaos-seed=4", "--agentchaos-seed=9")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines_random(
        [
            "agentchaos: --chaos-seed, --chaos-runs are agentchaos-core *'s here: ours are "
            "--agentchaos-seed, --agentchaos-runs *",
            "agentchaos: profile=none seed=9 (replay with --agentchaos-seed=9)",
        ]
    )


@pytest.mark.skipif(
    not _installed("pytest_resilience_agent"), reason="pytest-resilience-agent not installed"
)
def test_beside_pytest_resilience_agent(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_peer=PEER_SUITE
        + textwrap.dedent(
            """
            import httpx

            @pytest.mark.resilience(scenarios=["llm_5xx"])
            def test_theirs(chaos):
                # theirs, not ours: our network guard would refuse this request
                assert type(chaos).__name__ == "ChaosController"
                response = httpx.post("https://gateway.local/v1/chat/completions", json={})
                assert response.status_code >= 500
            """
        )
    )
    result = _run(pytester, "-v")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        ["agentchaos: the fixture chaos is pytest-resilience-agent *'s here: ours is agentchaos *"]
    )


def test_the_peer_suite_runs_without_peers_too(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_peer=PEER_SUITE)
    _run(pytester).assert_outcomes(passed=2)


def test_peer_tests_are_in_this_file_for_ci() -> None:
    """``.ci/run`` runs this file with each real peer installed in turn."""
    ci = Path(__file__).resolve().parents[1] / ".ci" / "run"
    text = ci.read_text(encoding="utf-8")
    assert "tests/test_issue26_peers.py" in text
    assert "agentic-chaos==0.8" in text and "agentchaos-core==0.2" in text
