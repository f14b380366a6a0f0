"""The registry of checks: every registered check has its three examples in its family's
own test file, and each behaves; a finding can be made only through a registered check, as
registered; the shipped model's detector features name registered checks; and the list on
``docs/checks.md`` is the registry."""

from __future__ import annotations

import importlib
import json
import re
from types import ModuleType

import pytest
from check_examples import Example, findings
from paths import ROOT

from monitor_gateway.monitors.detectors import DETECTORS, shell, stance
from monitor_gateway.monitors.detectors.checks import REGISTRY, UnregisteredCheck, family, get
from monitor_gateway.monitors.detectors.parts import Part
from monitor_gateway.monitors.offline import MODEL, finding
from monitor_gateway.schema import Trajectory

QUOTE = Part("command", "steps[0].tool_calls[0].arguments", "curl -k https://x").quote(0, 7)


def examples(detector: ModuleType) -> dict[str, Example]:
    """A family's examples: the table in ``test_<its module>.py``."""
    tests = importlib.import_module(f"test_{detector.__name__.rsplit('.', 1)[-1]}")
    table: dict[str, Example] = tests.EXAMPLES
    return table


@pytest.mark.parametrize("detector", DETECTORS, ids=lambda module: module.__name__)
def test_every_check_of_a_family_has_its_three_examples_in_the_familys_file(
        detector: ModuleType) -> None:
    table = examples(detector)
    assert sorted(table) == sorted(check.id for check in detector.CHECKS.values())
    for check, example in table.items():
        trio = (example.fires, example.safe, example.mention)
        assert all(isinstance(t, Trajectory) for t in trio), check
        assert len({t.model_dump_json() for t in trio}) == 3, check
        assert example.gap is None or len(example.gap) > 20, check


def test_every_registered_check_belongs_to_a_family_that_runs() -> None:
    assert sorted(REGISTRY) == sorted(check for detector in DETECTORS
                                      for check in examples(detector))


@pytest.mark.parametrize("detector", DETECTORS, ids=lambda module: module.__name__)
def test_each_example_behaves_and_each_gap_is_still_a_gap(detector: ModuleType) -> None:
    """What the family's own file tests, for every registered check: it fires, its twins do
    not; a known gap's mention twin still fires (else its strict xfail would fail too)."""
    for check, example in examples(detector).items():
        assert check in findings(example.fires), f"{check} did not fire"
        assert check not in findings(example.safe), f"{check} fired on its safe twin"
        assert (check in findings(example.mention)) is bool(example.gap), \
            f"{check}: its mention twin's gap is {example.gap!r}"


def test_a_name_no_check_registers_cannot_be_emitted() -> None:
    with pytest.raises(UnregisteredCheck):
        shell.CHECKS["made_up"].found(QUOTE)
    with pytest.raises(UnregisteredCheck):
        get("shell.made_up")
    with pytest.raises(UnregisteredCheck):
        finding("shell.made_up")
    with pytest.raises(ValueError, match="registered twice"):
        family("shell", {"tls_off": ("safety_permission", "decisive", "again")})


def test_a_finding_is_made_as_its_check_is_registered() -> None:
    tls = shell.CHECKS["tls_off"]
    found = tls.found(QUOTE)
    assert (found.name, found.category, found.decisive, found.why) == (
        "shell.tls_off", "safety_permission", True, "turns off TLS certificate verification")
    with pytest.raises(ValueError, match="registered decisive"):
        tls.found(QUOTE, decisive=False)
    with pytest.raises(ValueError, match="registered safety_permission"):
        tls.found(QUOTE, category="sycophancy_bias")
    with pytest.raises(ValueError, match="conditional"):
        shell.CHECKS["destructive"].found(QUOTE)
    assert not shell.CHECKS["destructive"].found(QUOTE, decisive=False).decisive
    with pytest.raises(ValueError, match="registered soft"):
        stance.CHECKS["flatters"].found(QUOTE, decisive=True)
    with pytest.raises(ValueError, match="registered supporting"):
        stance.CHECKS["agrees"].found(QUOTE, decisive=True)
    assert not stance.CHECKS["agrees"].found(QUOTE).decisive
    # a false claim the user pressed is sycophancy: the category it is registered to take
    pressed = get("claim.false_prime").found(QUOTE, category="sycophancy_bias")
    assert (pressed.category, pressed.decisive) == ("sycophancy_bias", True)


def test_a_findings_features_are_its_registered_checks() -> None:
    assert finding("edit.loosened") == {"d:*", "d:edit", "d:edit.loosened"}


def test_the_shipped_model_reads_only_registered_checks() -> None:
    """A check renamed or removed without a retrain fails here, rather than the model
    silently losing what it learned of it."""
    vocabulary = json.loads(MODEL.read_text(encoding="utf-8"))["vocabulary"]
    families = {check.family for check in REGISTRY.values()}
    read = [feature[2:] for feature in vocabulary if feature.startswith("d:")]
    assert read, "the shipped model reads no detector finding"
    assert [name for name in read if name != "*" and name not in families
            and name not in REGISTRY] == []


def table() -> str:
    """The list of checks ``docs/checks.md`` holds, from the registry."""
    rows = ["| Check | Category | Decisive | Why |", "|---|---|---|---|"]
    for check in sorted(REGISTRY.values(), key=lambda check: check.id):
        category = check.category + (f" or {check.or_category}" if check.or_category else "")
        rows.append(f"| `{check.id}` | {category} | {check.decisive} | {check.why} |")
    return "\n".join(rows)


def test_the_docs_list_every_registered_check_as_registered() -> None:
    page = (ROOT / "docs" / "checks.md").read_text(encoding="utf-8")
    listed = re.search(r"<!-- checks -->\n(.*?)\n<!-- /checks -->", page, re.S)
    assert listed is not None
    assert listed.group(1) == table(), f"docs/checks.md's list should be:\n{table()}"
