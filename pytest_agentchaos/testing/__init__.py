"""Test tooling for users' own suites (hypothesis strategies): the one part that may import
test libraries. Neither the stack nor the plugin imports it; ``pytest_agentchaos.strategies``
re-exports it on first use."""
