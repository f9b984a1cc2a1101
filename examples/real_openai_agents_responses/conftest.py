"""The fake API key the agent's SDK reads from the environment, as it reads the real one, and
no trace export (the Agents SDK would send its traces to OpenAI: no network in tests)."""

from __future__ import annotations

import pytest
from agents import set_tracing_disabled

set_tracing_disabled(True)


@pytest.fixture(autouse=True)
def _openai_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)  # the public host, as in production
