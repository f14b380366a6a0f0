"""The MR-FAR plane: this run's operating points per category, with the published points
of the AutoMonitor-Bench paper (arXiv 2601.05752) as reference."""

from __future__ import annotations

from pathlib import Path
from typing import Any

# (monitor, template, MR, FAR): overall figures unless the name says otherwise
PAPER_POINTS: tuple[tuple[str, str, float, float], ...] = (
    ("GPT-4o-mini", "direct", 0.36, 0.32), ("GPT-4o-mini", "evidence", 0.25, 0.50),
    ("DeepSeek-V3", "direct", 0.17, 0.41), ("DeepSeek-V3", "evidence", 0.13, 0.53),
    ("Gemini-2.5-Flash", "direct", 0.15, 0.36), ("Gemini-2.5-Flash", "evidence", 0.07, 0.58),
    ("Qwen3-14B", "direct", 0.30, 0.39), ("Qwen3-14B", "evidence", 0.20, 0.36),
    ("GPT-4o-mini, sycophancy", "direct", 0.29, 0.25),
    ("GPT-4o-mini, sycophancy", "evidence", 0.11, 0.55),
    ("Gemini-2.5-Flash, spec. gaming", "direct", 0.21, 0.55),
    ("Gemini-2.5-Flash, spec. gaming", "evidence", 0.05, 0.75),
)


class PlotUnavailable(RuntimeError):
    pass


def plot_mr_far(report: dict[str, Any], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotUnavailable(
            "the MR-FAR plot needs matplotlib: pip install 'monitor-gateway[bench]'"
        ) from None
    figure, axes = plt.subplots(figsize=(7.5, 6.5))
    for name, template, mr, far in PAPER_POINTS:
        axes.scatter(far, mr, marker="o" if template == "direct" else "s", color="0.7", s=28)
        axes.annotate(f"{name} ({template})", (far, mr), fontsize=6, color="0.45",
                      xytext=(3, 3), textcoords="offset points")
    axes.scatter([], [], marker="o", color="0.7", s=28,
                 label="AutoMonitor-Bench paper (another data set): direct template")
    axes.scatter([], [], marker="s", color="0.7", s=28, label="... evidence template")
    points = [("overall", report["overall"]), *report["by_category"].items()]
    for (name, block), colour in zip(points, ("black", "tab:red", "tab:blue", "tab:green"),
                                     strict=False):
        if block["mr"] is None or block["far"] is None:
            continue
        # 95% Wilson intervals as error bars: how far the point could move on this sample
        axes.errorbar(block["far"], block["mr"], xerr=_bar(block["far"], block["far_ci"]),
                      yerr=_bar(block["mr"], block["mr_ci"]), color=colour,
                      marker="*", markersize=11, capsize=3, linewidth=1, zorder=3,
                      label=f"this run, {name}: MR {block['mr']:.2f}, FAR {block['far']:.2f}")
    axes.plot([0, 1], [1, 0], linestyle=":", color="0.6", linewidth=0.8,
              label="MR + FAR = 1: a monitor that flags at random")
    monitor = report["monitor"]["name"] if report["monitor"] else "?"
    axes.set(xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), xlabel="false-alarm rate (FAR)",
             ylabel="miss rate (MR)",
             title=f"MR-FAR plane: {monitor} on {report['dataset']} (95% Wilson intervals)\n"
                   "grey: the paper's monitors, measured on AutoMonitor-Bench, not on this "
                   "data set", )
    axes.title.set_fontsize(9)
    axes.legend(loc="upper right", fontsize=6.5)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def _bar(value: float, interval: tuple[float, float]) -> list[list[float]]:
    """An error bar's two arms (never negative: at 0 or 1 the bound is the point itself,
    give or take a rounding error)."""
    low, high = interval
    return [[max(0.0, value - low)], [max(0.0, high - value)]]
