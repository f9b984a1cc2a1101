"""Fail early and quietly: a halt monitor that needs the sentence model fails when it is built
(one line naming the extra, and a suggestion the API takes); the example suites print no
config warnings without the dev extra; the thread note names only threads the agent started."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pytest_agentchaos.errors import ChaosConfigError
from pytest_agentchaos.halt import HaltMonitor, LexicalEmbedder, SentenceEmbedder

ROOT = Path(__file__).resolve().parents[1]


def test_without_the_extra_the_monitor_fails_where_it_is_built(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_agent="""
        from pytest_agentchaos.halt import HaltMonitor, SentenceEmbedder

        def agent(monitor, outputs):
            for output in outputs:
                try:  # an agent that swallows its model call's errors, as many do
                    if monitor.observe(output).halt:
                        return "halted"
                except Exception:
                    pass
            return "done"

        def test_agent(agentchaos, monkeypatch):
            monkeypatch.setattr(SentenceEmbedder, "available", staticmethod(lambda: False))
            monitor = HaltMonitor.for_run(agentchaos, task="Find the March invoice")
            agent(monitor, ["I will look for it.", "Let me search for the invoice."])
        """
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            '>       monitor = HaltMonitor.for_run(agentchaos, task="Find the March invoice")',
            "E       pytest_agentchaos.errors.ChaosConfigError: HaltMonitor: semantic repetition "
            "needs the 'semantic' extra: pip install 'pytest-agentchaos[semantic]' "
            "(torch's CPU build first: pip install torch --index-url "
            'https://download.pytorch.org/whl/cpu), or pass embedder="lexical" (no model)',
        ]
    )
    assert not [line for line in result.outlines if "pytest_agentchaos/halt/" in line]


@pytest.mark.parametrize("embedder", ["lexical", LexicalEmbedder()], ids=["text", "object"])
def test_what_the_message_suggests_needs_no_model(
    monkeypatch: pytest.MonkeyPatch, embedder: object
) -> None:
    from pytest_agentchaos.halt.embed import MISSING_EXTRA

    assert 'embedder="lexical"' in MISSING_EXTRA
    monkeypatch.setattr(SentenceEmbedder, "available", staticmethod(lambda: False))
    monitor = HaltMonitor(task="Find order 1234", embedder=embedder)  # type: ignore[arg-type]
    outputs = ["Looking up the order."] + ["The order API timed out, trying again."] * 3
    assert [monitor.observe(o).halt for o in outputs][-1]
    with pytest.raises(ChaosConfigError, match=r"^HaltMonitor: .*\[semantic\]"):
        HaltMonitor(task="Find order 1234")


def test_the_docs_suggest_what_the_message_does() -> None:
    for page in ("docs/production/halt.md", "docs/troubleshooting.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        assert 'embedder="lexical"' in text
        assert "embedder=LexicalEmbedder()" not in text


@pytest.mark.skipif(SentenceEmbedder.available(), reason="the semantic extra is installed")
def test_a_real_install_without_the_extra_fails_at_build() -> None:
    with pytest.raises(ChaosConfigError, match=r"needs the 'semantic' extra"):
        HaltMonitor(task="Find order 1234")


def _run_examples(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("asyncio", ["installed", "not installed"])
def test_the_example_suites_print_no_config_warning(asyncio: str) -> None:
    """``pytest examples`` from the project's root reads the examples' own config: without
    pytest-asyncio (``-p no:asyncio`` stands for a venv without the dev extra) no option is
    unknown, and with it pytest-asyncio is off there (its options are the tests')."""
    blocked = ("-p", "no:asyncio") if asyncio == "not installed" else ()
    result = _run_examples(*blocked, "--co", "-q", "examples/ring")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Warning" not in output and "warning" not in output, output
    assert result.stdout.startswith("ring/test_ring_chaos.py::"), output  # rootdir examples/


def test_the_projects_tests_keep_their_asyncio_config() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'asyncio_mode = "auto"' in text


def test_the_thread_note_names_only_threads_the_agent_started(pytester: pytest.Pytester) -> None:
    pytest.importorskip("tqdm")
    pytester.makepyfile(
        test_agent="""
        import threading

        from tqdm import tqdm

        STOP = threading.Event()

        def test_agent(agentchaos):
            for _ in tqdm(range(3), disable=False):  # tqdm starts its monitor thread
                pass
            threading.Thread(target=STOP.wait, name="my-poller", daemon=True).start()
            assert any(t.name == "tqdm_monitor" for t in threading.enumerate())
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "note: test_agent.py::test_agent: agent threads still running after the test: "
            "my-poller (daemon)"
        ]
    )
    assert "tqdm_monitor" not in result.stdout.str()
