"""The MR-FAR plot: drawn for any figures a replay can produce, zero rates included."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.plot import plot_mr_far
from replay.scoring import Confusion

pytest.importorskip("matplotlib", reason="plots need the bench extra")


@pytest.mark.parametrize(("tp", "fn", "fp", "tn"), [
    (3010, 0, 0, 3010),  # perfect on this set: MR 0 and FAR 0
    (0, 10, 10, 0),  # wrong on everything: MR 1 and FAR 1
    (600, 400, 30, 970),
])
def test_the_plane_is_drawn_at_the_edges_too(tmp_path: Path, tp: int, fn: int, fp: int,
                                             tn: int) -> None:
    block = Confusion(tp, fn, fp, tn).summary()
    report = {"monitor": {"name": "m"}, "dataset": "d", "overall": block,
              "by_category": {"sycophancy_bias": block}}
    plot_mr_far(report, tmp_path / "plane.png")
    assert (tmp_path / "plane.png").read_bytes()[:4] == b"\x89PNG"
