"""Halt quality on the labelled runs in ``fixtures/spirals/``, and the cost of a step.

Every run is fed step by step to a fresh ``HaltMonitor`` at its defaults (the sentence model
of the ``semantic`` extra where installed; ``--lexical`` for the lexical embedder). A spiral
is caught when the monitor halts no earlier than one step before the step its label justifies
(three strikes); a halt earlier than that, or any halt of a healthy run however late, is a
false positive. Printed: precision and recall (goal >= 0.95 both), per kind and per language,
and the steps between the justified step and the halt.

Cost: ms per ``observe()`` over the corpus, next to the seed's way (every pair in the window
encoded again, uncached) timed on the same steps in the same process, as a ratio; and how many
texts were encoded per new text (goal: one). Goal: < 15 ms per step. Machines are noisy: the
step's cost is printed also in units of one uncached encode timed in the same process.

Run: .venv/bin/python bench/bench_halt_corpus.py [-v] [--lexical]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from spiral_corpus import Run, load  # noqa: E402

from pytest_agentchaos.halt import HaltMonitor, LexicalEmbedder, SentenceEmbedder  # noqa: E402
from pytest_agentchaos.halt.embed import cosine  # noqa: E402

EARLY = 1  # a halt this many steps before the justified one still counts as caught


@dataclass
class Tally:
    spirals: int = 0
    caught: int = 0
    early: int = 0
    healthy: int = 0
    false_halts: int = 0

    def add(self, run: Run, halted: int | None) -> str:
        if run.spiral:
            self.spirals += 1
            assert run.halt_at is not None
            if halted is None:
                return "missed"
            if halted < run.halt_at - EARLY:
                self.early += 1
                return "early"
            self.caught += 1
            return "caught"
        self.healthy += 1
        if halted is not None:
            self.false_halts += 1
            return "false"
        return "quiet"

    @property
    def precision(self) -> float:
        positives = self.caught + self.early + self.false_halts
        return self.caught / positives if positives else 1.0

    @property
    def recall(self) -> float:
        return self.caught / self.spirals if self.spirals else 1.0


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    lexical = "--lexical" in argv or not SentenceEmbedder.available()
    runs = load()
    total = Tally()
    by: dict[str, Tally] = defaultdict(Tally)
    delays: list[int] = []
    lines: list[str] = []
    step_times: list[float] = []
    encoded = texts = 0
    if not lexical:
        SentenceEmbedder().encode(["warm up"])  # the model loads once per process: not a step
    for run in runs:
        monitor = HaltMonitor(task=run.task, embedder="lexical" if lexical else None)
        halted = None
        for i, step in enumerate(run.steps):
            start = time.perf_counter()
            decision = monitor.observe(step.output, step.tool, step.ok, step.progress,
                                       error=step.error, args=step.args)  # fmt: skip
            step_times.append((time.perf_counter() - start) * 1000)
            if decision.halt:
                halted = i
                break
        encoded += monitor.embedder.encoded
        texts += len({s.output for s in run.steps[: (halted or len(run.steps) - 1) + 1]})
        label = total.add(run, halted)
        for key in (f"kind:{run.kind}", f"lang:{run.language}"):
            by[key].add(run, halted)
        if run.spiral and halted is not None and run.halt_at is not None:
            delays.append(halted - run.halt_at)
        if label in ("missed", "early", "false"):
            why = monitor.history[-1].reason if monitor.history else ""
            lines.append(f"  [{label}] {run.id} ({run.kind}, {run.language}): halted at "
                         f"{halted}, justified at {run.halt_at}; {why[:200]}")  # fmt: skip
    print(f"{len(runs)} runs: {total.spirals} spirals, {total.healthy} healthy; embedder: "
          f"{'lexical' if lexical else 'sentence model (MiniLM)'}")  # fmt: skip
    print(f"{'':<22} {'runs':>5} {'caught':>6} {'early':>5} {'false':>5} {'prec':>5} {'recall':>6}")
    for key in sorted(by):
        t = by[key]
        print(f"{key:<22} {t.spirals + t.healthy:>5} {t.caught:>6} {t.early:>5} "
              f"{t.false_halts:>5} {t.precision:>5.2f} {t.recall:>6.2f}")  # fmt: skip
    print(f"precision {total.precision:.3f}, recall {total.recall:.3f}; caught {total.caught}/"
          f"{total.spirals}, early {total.early}, false halts of healthy runs "
          f"{total.false_halts}/{total.healthy}")  # fmt: skip
    if delays:
        print(f"steps from the justified step to the halt: median {statistics.median(delays):+g}, "
              f"max {max(delays):+d}")  # fmt: skip
    # the mean is the cost per step (a step that encodes pays for those that need not)
    per_step = statistics.fmean(step_times)
    print(f"observe(): mean {per_step:.3f} ms per step (median "
          f"{statistics.median(step_times):.3f}, p90 "
          f"{statistics.quantiles(step_times, n=10)[-1]:.3f}); texts encoded per distinct "
          f"text {encoded / max(texts, 1):.2f}")  # fmt: skip
    ratio = _seed_ratio(runs, lexical)
    encode_ms = _encode_ms(runs, lexical)
    print(f"one encode of a corpus text, uncached, in this process: {encode_ms:.3f} ms; a step "
          f"costs {per_step / encode_ms if encode_ms else 0:.2f} encodes on average")  # fmt: skip
    if verbose:
        print("\n".join(lines))
    ok = total.precision >= 0.95 and total.recall >= 0.95 and per_step < 15
    print(f"RESULT bench_halt_corpus: precision={total.precision:.3f} recall={total.recall:.3f} "
          f"ms_per_step={per_step:.3f} seed_ratio={ratio:.2f} goal precision>=0.95 recall>=0.95 "
          f"ms_per_step<15 {'PASS' if ok else 'FAIL'}")  # fmt: skip
    return 0 if ok else 1


def _encode_ms(runs: list[Run], lexical: bool, sample: int = 60) -> float:
    """The mean time of one encode of one corpus text, uncached: the unit that the cost of a
    step is made of, measured in this process so that a loaded machine shows in both."""
    embedder = LexicalEmbedder() if lexical else SentenceEmbedder()
    texts = list(dict.fromkeys(s.output for run in runs for s in run.steps if s.output))
    chosen = texts[:: max(1, len(texts) // sample)][:sample]
    start = time.perf_counter()
    for text in chosen:
        embedder.encode([text])
    return (time.perf_counter() - start) * 1000 / max(len(chosen), 1)


def _seed_ratio(runs: list[Run], lexical: bool, window: int = 6, sample: int = 4) -> float:
    """Our cost per step over the seed's (each step encodes itself and every text in its
    window again, uncached), on the first ``sample`` runs, timed in this process."""
    embedder = LexicalEmbedder() if lexical else SentenceEmbedder()
    chosen = runs[:sample]
    start = time.perf_counter()
    for run in chosen:
        monitor = HaltMonitor(task=run.task, embedder=embedder)
        for step in run.steps:
            monitor.observe(
                step.output, step.tool, step.ok, step.progress, error=step.error, args=step.args
            )
    ours = time.perf_counter() - start
    start = time.perf_counter()
    for run in chosen:
        outputs = [s.output for s in run.steps]
        for i, text in enumerate(outputs):
            for old in outputs[max(0, i - window) : i]:
                a, b = embedder.encode([text, old])
                cosine(a, b)
    seed = time.perf_counter() - start
    print(f"the seed's way (every pair encoded): {seed:.3f} s; ours {ours:.3f} s on "
          f"{len(chosen)} runs: {ours / seed if seed else 0:.2f}x")  # fmt: skip
    return ours / seed if seed else 0.0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
