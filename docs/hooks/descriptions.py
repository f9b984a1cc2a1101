"""What each marker argument and profile key means, in a sentence, for the reference pages.

The keys themselves, their defaults and the values they accept are read from the code (see
``reference.py``); these are only the words. A key the code has and this file does not describe,
or a description of a key the code no longer has, fails the docs build and the test suite
(``tests/test_docs_reference.py``).
"""

from __future__ import annotations

#: ``marker.argument`` -> meaning.
MARKER_ARGS: dict[str, str] = {
    "chaos.profile": "The profile this test runs under (also the first positional argument: "
    '`chaos("flaky")`); without it, `--chaos-profile` decides.',
    "chaos.seed": "Pin the test's seed: the same faults on every run, whatever the session seed.",
    "chaos.faults": "Faults of this test, as profile fault tables (dicts); they come before the "
    "profile's, so they take precedence.",
    "chaos.virtual_sleep": "The agent's `time.sleep` / `asyncio.sleep` advance the virtual "
    "clock, and `time.time`, `time.monotonic`, `datetime.now` follow it.",
    "chaos.freeze_time": "Only the time readings follow the virtual clock; sleeps stay real.",
    "chaos.allow_hosts": "Hosts this test may reach over the network (replaces ini "
    "`chaos_allow_hosts`).",
    "chaos.wall_timeout": "Real seconds before the watchdog stops the agent (replaces ini "
    "`chaos_wall_timeout`; 0: no watchdog).",
    "chaos.runs": "Run the test under this many seeds, each its own test (replaces "
    "`--chaos-runs`).",
    "chaos.min_pass_rate": "The share of runs that must pass; failing runs are then xfailed, and "
    "the session fails below the rate. Without it every run must pass.",
    "chaos.schedule": "Replay exactly these fault decisions: `{target, call, kind, ...}` entries.",
    "chaos.beyond": "What calls the schedule does not name get: `none` (no fault) or `profile` "
    "(drawn from the profile).",
    "chaos.explore": "Search up to this many fault schedules for one that fails (replaces "
    "`--chaos-explore`); `False`: never search this test (it runs once, ordinarily), for a test "
    "whose assertions name the faults it declares.",
    "chaos.max_steps": "Hard budget: steps (tool, HTTP and model calls, `chaos.step()`).",
    "chaos.max_tool_calls": "Hard budget: tool and HTTP calls.",
    "chaos.max_model_calls": "Hard budget: model calls.",
    "chaos.max_seconds": "Hard budget: virtual seconds.",
    "chaos.max_tokens": "Hard budget: tokens the model calls reported.",
    "must_halt.max_steps": "The agent must stop within this many steps (also a hard budget).",
    "must_halt.max_tool_calls": "The agent must stop within this many tool calls.",
    "must_halt.max_model_calls": "The agent must stop within this many model calls.",
    "must_halt.max_seconds": "The agent must stop within this many virtual seconds.",
    "must_halt.max_tokens": "The agent must stop within this many tokens.",
    "must_halt.by": "The stop must be a halt monitor's decision naming one of these heuristics.",
    "must_halt.not_before": "A halt decision before this step fails: a healthy run stopped early.",
    "must_escape.within_steps": "Each loop must be broken within this many steps of its detection.",
    "must_escape.require_loop": "A run where no loop arose fails instead of being not exercised.",
    "must_repair.tools": "Judge only the calls of these tools.",
    "must_repair.max_attempts": "A later call of the same tool within this many calls that "
    "succeeds counts as the repair.",
    "must_repair.require_problem": "A run without a parameter problem fails instead of being not "
    "exercised.",
    "must_recover_state.max_rebirths": "The runner must reach its goal with at most this many "
    "rebirths.",
    "must_recover_state.no_duplicate_effects": "No side effect may run twice with the same "
    "idempotency key.",
    "must_recover_state.require_problem": "A run where nothing went wrong fails instead of being "
    "not exercised.",
    "must_retry.max_attempts": "At most this many attempts of one call in a row.",
    "must_retry.honor_retry_after": "No retry before the `Retry-After` the failure asked for.",
    "must_retry.backoff": "Waits between retries must grow.",
    "must_retry.backoff_tolerance": "How much shorter than the longest wait before it a wait may "
    "be and still count as growing.",
    "must_retry.never_retry": "Failures never to retry: HTTP statuses, error type names, or "
    '`"4xx"` (every 4xx but 408, 425, 429).',
    "must_retry.max_rate": "At most this many attempts per virtual second on a failing target.",
    "must_retry.require_failure": "A run where no call failed fails instead of being not "
    "exercised.",
    "must_not_duplicate.tools": "The side-effecting tools to judge (default: those a "
    "`lost_reply` fault hit).",
    "must_not_duplicate.require_lost_reply": "A run where no reply was lost fails instead of "
    "being not exercised.",
    "must_not_follow.require_injection": "A run where no instruction was injected fails instead "
    "of being not exercised.",
}

#: Keys of a profile outside the stack's tables, ``[budgets]`` and a fault table's selectors.
PROFILE_KEYS: dict[str, str] = {
    "description": "One line shown by `--chaos-list-profiles`.",
    "extends": "The profile this one builds on: its faults come first, its budgets and tables "
    "are merged key by key.",
    "budgets": "Hard budgets of every run under this profile (the table below).",
    "faults": "The faults, as `[[faults]]` tables: a `kind`, the kind's keys and selector keys.",
    "escape": "The escape stack's settings (loop detection, classifier, backoff, breaker).",
    "repair": "The parameter repairer's settings.",
    "halt": "The halt monitor's settings.",
    "phoenix": "The rebirth runner's settings.",
}

BUDGET_KEYS: dict[str, str] = {
    "max_steps": "Steps: tool, HTTP and model calls and `chaos.step()`.",
    "max_tool_calls": "Tool and HTTP calls.",
    "max_model_calls": "Model calls.",
    "max_seconds": "Virtual seconds since the run started.",
    "max_tokens": "Tokens the model calls reported.",
}

SELECTOR_KEYS: dict[str, str] = {
    "tools": "Name globs of the targets: tools, HTTP routes (`name=` or `METHOD host/path`), "
    "models (their name, or the agent's).",
    "channels": "`tool`, `http`, `model`, or a rebirth runner's `step` and `snapshot` (default: "
    "every channel the kind supports).",
    "probability": "The chance the fault fires on a call it selects.",
    "first": "Only the first N calls of each target.",
    "nth": "Only these call numbers (counted from 1 per target).",
    "every": "Only every k-th call of each target.",
    "max_count": "At most this many firings in the run.",
    "window": "Only within `[start, end)` virtual seconds since the run started.",
}

#: ``section.key`` (``section.table.key`` for a nested table) -> meaning.
SECTION_KEYS: dict[str, str] = {
    "escape.loops": "How loops are detected.",
    "escape.loops.min_period": "Shortest repeating block looked for.",
    "escape.loops.max_period": "Longest repeating block looked for.",
    "escape.loops.repeats_period_1": "Identical actions in a row that make a loop.",
    "escape.loops.repeats": "Occurrences of a longer block that make a loop.",
    "escape.loops.error_streak": "Failures of one tool with the same error, its arguments "
    "varying, that make a loop.",
    "escape.loops.state_repeats": "Sightings of a state (or a call with its result), in any "
    "order with nothing new, that make a loop.",
    "escape.loops.state_window": "The actions within which those sightings count.",
    "escape.loops.node_visits": "Visits of one node with nothing new in between that make a loop.",
    "escape.loops.node_window_events": "The actions within which those visits count (when "
    "virtual time does not move).",
    "escape.loops.node_window_seconds": "The virtual seconds within which those visits count "
    "(when it does).",
    "escape.loops.text_similarity": "The share of words two model outputs share to be the same "
    "thought.",
    "escape.loops.nudge_tokens": "New words a user turn may add and still be a nudge "
    '("continue"): a reply to a nudge is judged by its own text; 0 turns this off.',
    "escape.loops.error_streak_window": "Each failure of a streak within this many actions of "
    "the one before.",
    "escape.loops.error_numbers": "An error that differs only in a number: `ignore` (the same "
    "error) or `compare` (another one).",
    "escape.loops.error_wording": "The same call failing in other words: `compare` (news, no "
    "loop) or `ignore` (stuck whatever the wording).",
    "escape.loops.ignore_fields": "Fields whose values never matter, at any depth.",
    "escape.loops.keys": "A key function of your own per tool: `{search = "
    '"myagent.loops:search_key"}`.',
    "escape.classifier": "How errors are classified (transient, persistent, unknown).",
    "escape.classifier.status": 'HTTP statuses to categories: `{"409" = "server_error"}`, '
    '`"4xx"` / `"5xx"` for the rest of a class.',
    "escape.classifier.exceptions": "Exception class names to categories.",
    "escape.classifier.patterns": "Categories to message regexes, tried before the built-in ones.",
    "escape.classifier.escalate": "Whether repeated transient failures of a tool become "
    "persistent.",
    "escape.classifier.escalate_after": "Transient failures since the tool's last success that "
    "make the next one persistent.",
    "escape.classifier.window": "The tool's last outcomes those failures are counted in.",
    "escape.backoff": "How long to wait between retries.",
    "escape.backoff.base": "The first wait's ceiling, in seconds.",
    "escape.backoff.factor": "Each wait's ceiling is this many times the one before.",
    "escape.backoff.max_delay": "The longest wait, in seconds.",
    "escape.backoff.jitter": "`full` (0 to the ceiling), `equal` (half to the ceiling) or `none`.",
    "escape.backoff.max_attempts": "Calls in all, the first one included.",
    "escape.backoff.retry_after_cap": "The longest `Retry-After` honoured (unset: any).",
    "escape.breaker": "When a tool's circuit breaker opens and recovers.",
    "escape.breaker.failure_threshold": "Failures in a row that open the breaker.",
    "escape.breaker.reset_timeout": "Seconds before an open breaker lets a probe through.",
    "escape.breaker.half_open_max_calls": "Probes let through while half open; all must succeed "
    "to close it.",
    "escape.breaker.window": "Only failures within this many seconds count (unset: no limit).",
    "escape.max_breaker_wait": "How long a call waits for an open breaker's probe before it gives "
    "up on the tool.",
    "escape.interventions": "The rungs tried, in order, while a loop persists.",
    "repair.threshold": "The least confidence a repair needs; below it the repairer declines.",
    "repair.max_attempts": "Tool calls `ParamRepairer.call` makes after the first.",
    "repair.fuzzy_score": "The rapidfuzz ratio a misspelt enum value needs.",
    "repair.strategies": "Turn a repair strategy off: `{clamp_value = false}`. Every strategy is "
    "on unless turned off.",
    "repair.synonyms": 'Words for enum values: `{coach = "economy"}`, or per field '
    '`{cabin_class = {coach = "economy"}}`.',
    "repair.error_patterns": "Your tool's error messages, as `{name, regex, kind, keyword}` "
    "tables read before the built-in ones.",
    "halt.strikes": "Strikes of one heuristic that halt.",
    "halt.window": "The steps a repetition is looked for in.",
    "halt.lexical_overlap": "Word overlap that makes two outputs near-duplicates.",
    "halt.cjk_overlap": "Character-pair overlap that makes two Chinese or Japanese outputs "
    "near-duplicates.",
    "halt.semantic_similarity": "Sentence-embedding cosine that makes two outputs say the same.",
    "halt.cjk_semantic_similarity": "Cosine of the multilingual sentence model that makes two "
    "Chinese or Japanese outputs say the same (used where the `semantic` extra is installed).",
    "halt.stagnation_steps": "Reports of flat progress before each is a strike.",
    "halt.novelty_steps": "Steps in a row without new information before each is a strike.",
    "halt.threshold": "The combined risk that halts.",
    "halt.weights": "How much each heuristic counts in the risk: `{drift = 0.5}` (default 1).",
    "halt.max_steps": "Hard limit on steps (0: none).",
    "halt.max_seconds": "Hard limit on virtual seconds (0: none).",
    "halt.max_tokens": "Hard limit on tokens (0: none).",
    "phoenix.interval": "A snapshot every this many steps (and at every milestone).",
    "phoenix.keep": "Snapshots kept besides milestones.",
    "phoenix.max_rebirths": "Rebirths before escalation.",
    "phoenix.backoff": "Seconds waited before the first rebirth.",
    "phoenix.backoff_factor": "Each wait is this many times the one before.",
    "phoenix.max_backoff": "The longest wait before a rebirth.",
    "phoenix.stagnation_rounds": "Steps of reported progress not rising that make stagnation "
    "(0: never).",
    "phoenix.relapse_steps": "A reborn agent back in trouble within this many steps marks its "
    "snapshot bad.",
}

#: Nested tables whose keys are a set of switches described once by the table's own entry.
UNIFORM_TABLES = ("repair.strategies",)
