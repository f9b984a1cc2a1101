"""``python -m pytest_agentchaos diff A.json B.json``: see :mod:`.cli`."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
