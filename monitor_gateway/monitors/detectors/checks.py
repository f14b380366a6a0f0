"""The registry of checks, laid out as Bandit lays out its plugins: each finding a detector
can give is a ``Check`` (an id, a category, whether it flags on its own, why it matters),
registered by the family module that gives it, and a finding is made only through its
check, so a name no check registers cannot be emitted.

A check is ``decisive`` (flags on its own wherever it fires), ``soft`` (evidence, never
decisive alone), ``supporting`` (evidence only beside another finding: agreeing with the
user is no misbehavior unless something else is wrong) or ``conditional`` (what the request
or the rest of the code says decides each time: "don't touch production" makes a
force-push decisive). Two rules apply to every family after its checks and are not a
check's own: a request that asks for insecure code on purpose makes the code family's
safety findings soft, and a finding on a line the user wrote is dropped where the agent
only showed it and made soft where it ran it (``detectors._theirs``).

The offline monitor's features are built from the registered id (``d:<family>.<name>``),
so a check renamed without a retrain fails the test that reads the shipped model's
features, instead of silently weighing nothing. ``docs/checks.md`` lists every check.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from ...schema import Category
from ..base import Quote
from .parts import Signal

Decisive = Literal["decisive", "soft", "supporting", "conditional"]


class UnregisteredCheck(KeyError):
    """A finding asked for by a name no family registered."""


@dataclass(frozen=True, slots=True)
class Check:
    """One kind of finding. ``why`` says what it found; a finding may say it more exactly
    (which data a deletion wipes). ``or_category``: the category a finding takes instead
    where its context says so (a false claim the user pressed on the agent is sycophancy,
    not a made-up result)."""

    id: str
    category: Category
    decisive: Decisive
    why: str
    or_category: Category | None = None

    @property
    def supporting(self) -> bool:
        return self.decisive == "supporting"

    @property
    def family(self) -> str:
        return self.id.partition(".")[0]

    def found(self, quote: Quote, decisive: bool | None = None, why: str | None = None,
              category: Category | None = None) -> Signal:
        """This check's finding at ``quote``. A conditional check is told whether this one
        is decisive; the others are what they are registered as (told otherwise, they
        raise: the registry would be wrong)."""
        if decisive is None:
            if self.decisive == "conditional":
                raise ValueError(f"{self.id} is conditional: say whether this finding is "
                                 "decisive")
            decisive = self.decisive == "decisive"
        elif self.decisive != "conditional" and decisive != (self.decisive == "decisive"):
            raise ValueError(f"{self.id} is registered {self.decisive}, not "
                             f"{'decisive' if decisive else 'soft'}")
        if category is not None and category not in (self.category, self.or_category):
            raise ValueError(f"{self.id} is registered {self.category}, not {category}")
        return Signal(self.id, category or self.category, decisive,
                      self.why if why is None else why, quote)


REGISTRY: dict[str, Check] = {}


class Family(Mapping[str, Check]):
    """A family's checks by their name within it (``shell.CHECKS["tls_off"]``)."""

    def __init__(self, name: str, checks: dict[str, Check]) -> None:
        self.name = name
        self._checks = checks

    def __getitem__(self, name: str) -> Check:
        try:
            return self._checks[name]
        except KeyError:
            raise UnregisteredCheck(f"{self.name}.{name}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._checks)

    def __len__(self) -> int:
        return len(self._checks)


def family(name: str, table: dict[str, tuple[Category, Decisive, str]
                                  | tuple[Category, Decisive, str, Category]]) -> Family:
    """Registers a family's checks: ``{name: (category, decisive, why[, or_category])}``."""
    checks: dict[str, Check] = {}
    for short, (category, decisive, why, *other) in table.items():
        check = Check(f"{name}.{short}", category, decisive, why, *other)
        if check.id in REGISTRY:
            raise ValueError(f"check {check.id} is registered twice")
        REGISTRY[check.id] = checks[short] = check
    return Family(name, checks)


def get(check_id: str) -> Check:
    """The registered check of that id."""
    try:
        return REGISTRY[check_id]
    except KeyError:
        raise UnregisteredCheck(check_id) from None
