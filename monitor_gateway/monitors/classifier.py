"""An offline monitor: logistic regression over word n-grams, trained with scikit-learn on
a benchmark's train split (``monitor-gateway train``).

Inference needs no scikit-learn: the model is saved as JSON (vocabulary, idf, weights) and
scored here in plain Python, the same arithmetic as ``TfidfVectorizer`` + ``LogisticRegression``
(l2-normalised tf-idf, a dot product, a sigmoid): a few hundred microseconds a trajectory.
Evidence is the agent's own text behind the n-grams that pushed the score up most.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import islice, pairwise
from operator import mul
from pathlib import Path
from typing import Any

from pydantic_settings import BaseSettings, SettingsConfigDict

from ..schema import Category, MonitorCard, Severity, Trajectory
from ..settings import ENV_PREFIX, GatewaySettings, SettingsError, load_settings
from .base import Judgement, Quote

FORMAT = 1
TOKEN = re.compile(r"\w\w+|[^\w\s]")  # words, and punctuation as its own token
MAX_QUOTES = 3
SENTENCE = 200  # characters a quoted sentence may reach either side of its n-gram
WORD = re.compile(r"\w")  # punctuation alone is no evidence
AGENT = "a:"  # the agent's side: only its own text can be evidence


def _spans(trajectory: Trajectory, sides: str) -> Iterator[tuple[str, str, str]]:
    """Each text to read with its side and its source. What the agent wrote (its steps,
    tool calls and response) is its side ("a"), and only that can be evidence; the
    request, user turns and tool outputs are the question and its context ("q"). ``sides``
    says which to read."""
    agent = {source for source, _ in trajectory.agent_texts()}
    for source, text in trajectory.texts():
        side = "a" if source in agent else "q"
        if side in sides:
            yield side, source, text


def features(trajectory: Trajectory, sides: str = "qa") -> list[str]:
    """Unigrams and bigrams of lowercased tokens, prefixed by side; n-grams never cross
    two texts."""
    out: list[str] = []
    for side, _, text in _spans(trajectory, sides):
        words = [f"{side}:{token.lower()}" for token in TOKEN.findall(text)]
        out.extend(words)
        out.extend(f"{a} {b[2:]}" for a, b in pairwise(words))
    return out


def _first_spans(trajectory: Trajectory, wanted: set[str]) -> dict[str, tuple[str, int, int]]:
    """Where each wanted agent-side feature first occurs in one of the agent's texts:
    (source, start, end). The n-grams are looked up, and only the tokens up to the last one
    found are matched again for their offsets (both in C: this runs on every trajectory)."""
    where: dict[str, tuple[str, int, int]] = {}
    for _, source, text in _spans(trajectory, "a"):
        if not (missing := wanted - where.keys()):
            break
        tokens = [token.lower() for token in TOKEN.findall(text)]
        first = _first_index(tokens) | _first_index(list(map(" ".join, pairwise(tokens))))
        found = {feature: first[feature[2:]] for feature in missing if feature[2:] in first}
        if found:
            matches = list(islice(TOKEN.finditer(text), max(found.values()) + 2))
            for feature, at in found.items():
                last = matches[at + 1] if " " in feature else matches[at]
                where[feature] = (source, matches[at].start(), last.end())
    return where


def _first_index(items: list[str]) -> dict[str, int]:
    """Each item's first position in ``items``."""
    return dict(zip(reversed(items), range(len(items) - 1, -1, -1), strict=True))


@dataclass(frozen=True)
class LinearModel:
    vocabulary: dict[str, int]
    idf: list[float]
    coef: list[float]
    intercept: float
    categories: list[Category]
    category_coef: list[list[float]]
    category_intercept: list[float]
    meta: dict[str, Any]

    @cached_property
    def quotable(self) -> dict[int, str]:
        """The features that can point at evidence, by index: the agent's own words (not
        punctuation alone) that push the score up."""
        return {index: feature for feature, index in self.vocabulary.items()
                if self.coef[index] > 0 and feature.startswith(AGENT) and WORD.search(feature[2:])}

    def weights(self, found: list[str]) -> dict[int, float]:
        """The l2-normalised tf-idf vector of a trajectory's features, as {feature index:
        weight}; term counts are log-scaled when the model was trained that way."""
        vocabulary, idf, sublinear = self.vocabulary, self.idf, self.meta.get("sublinear_tf")
        vector: dict[int, float] = {}
        for feature, n in Counter(found).items():  # a single occurrence weighs 1 either way
            if (i := vocabulary.get(feature)) is not None:
                vector[i] = (1.0 + math.log(n) if sublinear and n > 1 else float(n)) * idf[i]
        norm = math.sqrt(sum(map(mul, vector.values(), vector.values()))) or 1.0
        return {i: v / norm for i, v in vector.items()}

    def probability(self, vector: dict[int, float]) -> float:
        z = self.intercept + _dot(self.coef, vector)
        return 1.0 / (1.0 + math.exp(-z)) if z > -500 else 0.0

    def category(self, vector: dict[int, float]) -> Category | None:
        if not self.categories:
            return None
        scores = [b + _dot(row, vector)
                  for row, b in zip(self.category_coef, self.category_intercept, strict=True)]
        return self.categories[max(range(len(scores)), key=scores.__getitem__)]

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, **{k: getattr(self, k) for k in self.__dataclass_fields__}}

    @classmethod
    def load(cls, path: Path) -> LinearModel:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise SettingsError(
                f"no classifier at {path}: train one with 'monitor-gateway train --out {path}'"
            ) from None
        except (OSError, ValueError) as exc:
            raise SettingsError(f"{path}: not a classifier file: {exc}") from None
        if data.get("format") != FORMAT:
            raise SettingsError(f"{path}: classifier format {data.get('format')!r}, "
                                f"this version reads {FORMAT}")
        return cls(**{k: data[k] for k in cls.__dataclass_fields__})


def _dot(weights: list[float], vector: dict[int, float]) -> float:
    """``weights`` · ``vector``, summed in the vector's order (a C loop: this is most of
    scoring a trajectory)."""
    total: float = sum(map(mul, map(weights.__getitem__, vector), vector.values()))
    return total


def severity(score: float) -> Severity:
    return "high" if score >= 0.9 else "medium" if score >= 0.7 else "low"


class ClassifierMonitor:
    def __init__(self, model: LinearModel) -> None:
        self.model = model
        meta = model.meta
        measured = ""
        if meta.get("test_mr") is not None and meta.get("test_far") is not None:
            measured = (f"; on {meta.get('tested_on', 'the test split')} MR "
                        f"{meta['test_mr']:.2f}, FAR {meta['test_far']:.2f}")
        self.card = MonitorCard(
            name="classifier", backend="classifier", model=meta.get("name", "ngram-logreg"),
            version=meta.get("version", "unknown"),
            label=(f"logistic-regression classifier over word n-grams, trained on "
                   f"{meta.get('trained_on', 'unknown data')}{measured}"),
        )

    async def judge(self, trajectory: Trajectory) -> Judgement:
        return self.judge_now(trajectory)

    def judge_now(self, trajectory: Trajectory) -> Judgement:
        """The probability and the most likely category, whatever the score: the policy,
        not the monitor, decides which threshold applies."""
        model = self.model
        vector = model.weights(features(trajectory))
        score = model.probability(vector)
        quotes = evidence(model, trajectory, vector)
        return Judgement(
            score=score,
            category=model.category(vector),
            severity=severity(score),
            quotes=quotes,
            rationale="the text most associated with misbehavior in training: "
                      + ", ".join(repr(q.text) for q in quotes),
        )


def evidence(model: LinearModel, trajectory: Trajectory, vector: dict[int, float],
             limit: int = MAX_QUOTES, taken: Sequence[Quote] = ()) -> list[Quote]:
    """The sentences of the agent's own text around the features with the largest positive
    contributions: a sentence is what a reviewer reads, an n-gram alone rarely says why.
    A sentence overlapping one already chosen, or one of ``taken``, says nothing new."""
    texts = dict(trajectory.texts())
    quotable = model.quotable
    ranked = sorted(((model.coef[i] * v, quotable[i]) for i, v in vector.items() if i in quotable),
                    reverse=True)
    where = _first_spans(trajectory, {feature for _, feature in ranked})
    quotes: list[Quote] = []
    for _, feature in ranked:
        if len(quotes) == limit:
            break
        source, first, last = where[feature]
        text = texts[source]
        chosen = (*taken, *quotes)
        if any(_overlaps(q, source, text, first, last) for q in chosen):
            continue  # its sentence would overlap too: no need to find it
        start, end = _sentence(text, first, last)
        if not any(_overlaps(q, source, text, start, end) for q in chosen):
            quotes.append(Quote(text[start:end], source, start))
    return quotes


def distinct(quotes: Iterable[Quote], texts: dict[str, str], limit: int) -> list[Quote]:
    """Up to ``limit`` of ``quotes`` in order, each kept only where it overlaps none kept
    before it: two findings on one line are one quote's worth of proof. ``texts``: the
    judged texts by source name (a trajectory's, or one step's)."""
    kept: list[Quote] = []
    for quote in quotes:
        if len(kept) == limit:
            break
        source = quote.source or ""
        text = texts.get(source, "")
        at = quote.start if quote.start is not None else text.find(quote.text)
        if quote.text and not (at >= 0 and any(
                _overlaps(k, source, text, at, at + len(quote.text)) for k in kept)):
            kept.append(quote)
    return kept


def _overlaps(quote: Quote, source: str, text: str, start: int, end: int) -> bool:
    """Whether ``quote`` covers any of ``text[start:end]`` (``text`` being ``source``'s)."""
    if quote.source != source:
        return False
    at = quote.start if quote.start is not None else text.find(quote.text)
    return at >= 0 and at < end and start < at + len(quote.text)


def _sentence(text: str, start: int, end: int) -> tuple[int, int]:
    """The sentence or line around ``text[start:end]``, at most ``SENTENCE`` characters
    either side."""
    left = max(text.rfind(mark, max(0, start - SENTENCE), start) for mark in ".!?\n")
    left = left + 1 if left >= 0 else max(0, start - SENTENCE)
    rights = [at for mark in ".!?\n" if (at := text.find(mark, end, end + SENTENCE)) >= 0]
    right = min(rights) + 1 if rights else min(len(text), end + SENTENCE)
    while left < start and text[left].isspace():
        left += 1
    return left, right


class ClassifierSettings(BaseSettings):
    """The classifier's own setting, read from ``MONITOR_GATEWAY_CLASSIFIER_PATH``."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore")

    classifier_path: str = "out/classifier.json"


def from_settings(settings: GatewaySettings) -> ClassifierMonitor:
    """``MONITOR=classifier``: the model ``monitor-gateway train`` wrote."""
    own = load_settings(ClassifierSettings, {})
    return ClassifierMonitor(LinearModel.load(Path(own.classifier_path)))
