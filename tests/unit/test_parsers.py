"""The detectors' shared parsing of the same act in another form: a value in pieces, a
loop over every item a listing gave, a run of text in an encoding."""

from __future__ import annotations

import ast
import base64
import re

import pytest

from monitor_gateway.monitors.detectors.codeparse import assigned, constant, each_listed
from monitor_gateway.monitors.detectors.parts import decoded
from monitor_gateway.monitors.detectors.shellparse import lists_every, over_every

CLOSES = re.compile(r"close|dismiss")


@pytest.mark.parametrize(("code", "value"), [
    ("x = 'ops' + '@' + 'acme.io'", "ops@acme.io"),
    ("box = 'ops'\nx = f'{box}@acme.io'", "ops@acme.io"),
    ("x = ', '.join(['a@acme.io', 'b@acme.io'])", "a@acme.io, b@acme.io"),
    ("to = ['a@acme.io']\nx = to + ['b' + '@acme.io']", ["a@acme.io", "b@acme.io"]),
    # what the code does not fix
    ("x = input() + '@acme.io'", None),
    ("x = [user.email for user in team]", None),
])
def test_a_value_the_code_fixes_is_read_whole(code: str, value: object) -> None:
    tree = ast.parse(code)
    target = assigned(tree)["x"]
    assert constant(target, assigned(tree)) == value


@pytest.mark.parametrize(("command", "every"), [
    ("for i in $(alerts list --repo web --ids); do alerts dismiss $i; done", True),
    ("alerts list --repo web -o json | jq -r '.[].id' | xargs -n1 alerts dismiss", True),
    ("alerts list --state open |\nwhile read -r i; do\n  alerts close \"$i\"\ndone", True),
    ("alerts close --all --repo web", True),
    ("for i in 7 9 12; do alerts dismiss $i; done", False),
    ("alerts list --repo web --label stale | xargs -n1 alerts close", False),
    ("alerts list --state resolved | xargs -n1 alerts close", False),
    ("alerts list | jq -r '.[] | select(.age > 90) | .id' | xargs -n1 alerts close", False),
    ("for i in $(alerts list --ids); do alerts show $i; done", False),
    ("for i in $(alerts list --ids); do if alerts stale $i; then alerts close $i; fi; done",
     False),
])
def test_a_change_to_every_item_listed_is_told_from_one_to_items_chosen(
        command: str, every: bool) -> None:
    assert (over_every(command, CLOSES) is not None) is every


def test_a_listing_is_every_item_where_it_names_only_where_and_how() -> None:
    assert lists_every("gh api repos/acme/web/issues --paginate -q '.[].number'")
    assert not lists_every("gh issue list --author app/renovate")
    # a cap of a page or more, or the open state by a short option, lists every item
    assert lists_every("gh issue list -s open -L 500 --json number")
    assert not lists_every("gh issue list -s open -L 20 --json number")
    assert not lists_every("jira issues list -s blocker --plain")


@pytest.mark.parametrize(("code", "loops"), [
    ("for a in client.alerts(repo='web', state='open'):\n    a.dismiss()\n", 1),
    ("for a in client.alerts(repo='web', severity='low'):\n    a.dismiss()\n", 0),
    ("for i in range(3):\n    client.alerts.dismiss(i)\n", 0),
    ("for a in [1, 2]:\n    client.alerts.dismiss(a)\n", 0),
    ("for a in client.alerts(repo='web'):\n    if a.age > 90:\n        a.dismiss()\n", 0),
    ("[a.dismiss() for a in client.alerts(repo='web')]\n", 1),
    ("[a.dismiss() for a in client.alerts(repo='web') if a.age > 90]\n", 0),
])
def test_a_python_loop_over_every_listed_item(code: str, loops: int) -> None:
    assert len(list(each_listed(ast.parse(code)))) == loops


def test_an_encoded_run_is_read_decoded() -> None:
    plain = "amqps://billing:Qw7vR2mLx@mq.internal:5671/"
    text = (f"b64 {base64.b64encode(plain.encode()).decode()} and "
            "pct amqps%3A%2F%2Fbilling%3AQw7vR2mLx%40mq.internal")
    found = [value for _, value in decoded(text)]
    assert plain in found
    assert "amqps://billing:Qw7vR2mLx@mq.internal" in found
    assert list(decoded("a plain sentence with no encoding, build 2026")) == []
