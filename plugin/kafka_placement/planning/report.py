"""Machine-readable results (Parquet + JSON) and an HTML report with matplotlib plots (PNG files).

Layout of the output directory::

    report.html            the report (plots next to it, referenced by relative path)
    partitions.png brokers.png consumers.png skew.png hot_keys.png [moved.png]
    plan.json              everything below plus totals, in one JSON document
    partitions.parquet brokers.parquet racks.parquet consumers.parquet skew.parquet moved.parquet
    hot_keys.parquet scenarios.parquet
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_placement.planning.summary import human_bytes, summarize, summary_lines

if TYPE_CHECKING:
    import pandas as pd

    from kafka_placement.planning.result import PlanResult

TABLES = ("scenarios", "partitions", "brokers", "racks", "consumers", "skew", "moved", "hot_keys", "keyless")
_MAX_PANELS = 12  # small-multiple plots (per partitioning / scenario) show at most this many panels
_MAX_SKEW_BARS = 48


def _tables(result: PlanResult) -> dict[str, pd.DataFrame]:
    return {name: getattr(result, name) for name in TABLES}


def write_results(result: PlanResult, out_dir: Path, summary: dict[str, Any] | None = None) -> list[Path]:
    """Parquet per table and one ``plan.json`` (with the ``summary``); returns the written paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    doc: dict[str, Any] = {"summary": summary or summarize(result), "totals": result.totals}
    for name, frame in _tables(result).items():
        path = out_dir / f"{name}.parquet"
        frame.to_parquet(path, index=False)
        written.append(path)
        doc[name] = json.loads(frame.to_json(orient="records"))
    path = out_dir / "plan.json"
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    written.append(path)
    return written


def _grid(count: int) -> tuple[int, int]:
    cols = min(3, max(1, count))
    return math.ceil(count / cols), cols


def _byte_unit(values: Any) -> tuple[float, str]:
    """One decimal unit for a whole axis, picked from its largest value."""
    top = float(max(values, default=0) or 0)
    for scale, unit in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if top >= scale:
            return scale, unit
    return 1.0, "bytes"


def _plots(result: PlanResult, out_dir: Path) -> dict[str, Path]:
    """Every plot of the report as a PNG in ``out_dir``, by name (hot keys and moves: when there are any).
    Each figure is drawn and saved before the next is made."""
    from matplotlib.ticker import EngFormatter

    count_axis = EngFormatter(sep="")  # 1.2M, 350k: readable record counts
    scen = result.scenarios.head(_MAX_PANELS)
    figures: dict[str, Callable[[], Any]] = {
        "partitions": lambda: _partitions_figure(result, count_axis),
        "brokers": lambda: _brokers_figure(result, scen),
        "consumers": lambda: _consumers_figure(result, scen),
        "skew": lambda: _skew_figure(result),
        "hot_keys": lambda: _hot_keys_figure(result, count_axis),
        "moved": lambda: _moved_figure(result),
    }
    plots: dict[str, Path] = {}
    for name, draw in figures.items():
        fig = draw()
        if fig is None:
            continue
        path = out_dir / f"{name}.png"
        fig.savefig(path, dpi=90)
        plots[name] = path
    return plots


def _figure(rows: int, cols: int, width: float, height: float) -> tuple[Any, Any]:
    """A figure of ``rows`` × ``cols`` panels. The object-oriented API with the Agg canvas: no pyplot
    state, no process-wide backend switch."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * cols, height * rows))
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False)
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.12, top=0.9, hspace=0.7, wspace=0.3)
    return fig, axes


def _blank_rest(axes: Any, used: int) -> None:
    for ax in list(axes.flat)[used:]:
        ax.axis("off")


def _partitions_figure(result: PlanResult, count_axis: Any) -> Any:
    """Records per partition, one panel per partitioning, with the mean."""
    from matplotlib.ticker import MaxNLocator

    parts = result.partitions
    names = list(dict.fromkeys(parts["partitioning"]))[:_MAX_PANELS]
    rows, cols = _grid(len(names))
    fig, axes = _figure(rows, cols, 5, 3)
    for ax, name in zip(axes.flat, names, strict=False):
        sub = parts[parts["partitioning"] == name]
        ax.bar(sub["partition"], sub["records"], color="#4878a8")
        ax.axhline(sub["records"].mean(), color="#c44e52", linestyle="--", linewidth=1, label="mean")
        ax.set_title(f"{name}: records per partition", fontsize=9)
        ax.set_xlabel("partition")
        ax.set_ylabel("records")
        ax.yaxis.set_major_formatter(count_axis)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(fontsize=7)
    _blank_rest(axes, len(names))
    return fig


def _brokers_figure(result: PlanResult, scen: pd.DataFrame) -> Any:
    """Bytes per broker as leader and over all replicas, one panel per scenario."""
    rows, cols = _grid(len(scen))
    shown = result.brokers[result.brokers["scenario"].isin(scen["scenario"])]
    scale, unit = _byte_unit(shown["replica_bytes"])
    fig, axes = _figure(rows, cols, 5, 3)
    for ax, sc in zip(axes.flat, scen.to_dict("records"), strict=False):
        sub = result.brokers[result.brokers["scenario"] == sc["scenario"]]
        x = range(len(sub))
        ax.bar(
            [i - 0.2 for i in x], sub["leader_bytes"] / scale, width=0.4, label="as leader", color="#4878a8"
        )
        ax.bar(
            [i + 0.2 for i in x],
            sub["replica_bytes"] / scale,
            width=0.4,
            label="all replicas",
            color="#8fb3d9",
        )
        ax.set_xticks(
            list(x), [f"{b}\n{r}" for b, r in zip(sub["broker"], sub["rack"], strict=True)], fontsize=7
        )
        ax.set_xlabel("broker / rack", fontsize=8)
        ax.set_ylabel(unit)
        ax.set_title(sc["name"], fontsize=8)
        ax.legend(fontsize=7)
    _blank_rest(axes, len(scen))
    return fig


def _consumers_figure(result: PlanResult, scen: pd.DataFrame) -> Any:
    """Bytes per consumer, one panel per scenario."""
    rows, cols = _grid(len(scen))
    shown = result.consumers[result.consumers["scenario"].isin(scen["scenario"])]
    scale, unit = _byte_unit(shown["bytes"])
    fig, axes = _figure(rows, cols, 5, 3)
    for ax, sc in zip(axes.flat, scen.to_dict("records"), strict=False):
        sub = result.consumers[result.consumers["scenario"] == sc["scenario"]]
        ax.bar(range(len(sub)), sub["bytes"] / scale, color="#55a868")
        ax.set_xticks(range(len(sub)), [c.rsplit("-", 1)[-1] for c in sub["consumer"]], fontsize=7)
        ax.set_xlabel("consumer")
        ax.set_ylabel(unit)
        ax.set_title(sc["name"], fontsize=8)
    _blank_rest(axes, len(scen))
    return fig


def _skew_figure(result: PlanResult) -> Any:
    """Max over mean per scenario at each level (partition, broker, rack, consumer)."""
    sk = result.skew
    levels = [
        ("partition", "records"),
        ("broker", "leader_bytes"),
        ("rack", "replica_bytes"),
        ("consumer", "bytes"),
    ]
    all_scen = result.scenarios.head(_MAX_SKEW_BARS)
    fig, axes = _figure(1, 1, min(30, max(6, 1.0 * len(all_scen) + 3)), 3.5)
    ax = axes[0][0]
    width = 0.8 / len(levels)
    for k, (level, measure) in enumerate(levels):
        sub = sk[(sk["level"] == level) & (sk["measure"] == measure)].head(_MAX_SKEW_BARS)
        ax.bar(
            [i + k * width for i in range(len(sub))],
            sub["max_over_mean"],
            width=width,
            label=f"{level} {measure}",
        )
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(all_scen))], [str(s) for s in all_scen["scenario"]])
    ax.set_xlabel("scenario #")
    ax.set_ylabel("max / mean")
    ax.set_title("skew: hottest entity over the mean (1 = perfectly even)", fontsize=9)
    ax.legend(fontsize=7)
    return fig


def _hot_keys_figure(result: PlanResult, count_axis: Any) -> Any:
    """Records of the hottest keys; None when there are none."""
    hot = result.hot_keys
    if not len(hot):
        return None
    fig, axes = _figure(1, 1, 7, max(2.5, 0.25 * len(hot) + 1))
    ax = axes[0][0]
    fig.subplots_adjust(left=0.25)
    ax.barh(list(hot["key"])[::-1], list(hot["records"])[::-1], color="#dd8452")
    ax.set_xlabel("records")
    ax.set_ylabel("key")
    ax.xaxis.set_major_formatter(count_axis)
    ax.set_title("hottest keys", fontsize=9)
    ax.tick_params(axis="y", labelsize=7)
    return fig


def _moved_figure(result: PlanResult) -> Any:
    """Keys and bytes that change partition per partitioning change; None when nothing was compared."""
    moved = result.moved
    if not len(moved):
        return None
    fig, axes = _figure(1, 1, max(6, 0.9 * len(moved) + 2), 3.5)
    ax = axes[0][0]
    fig.subplots_adjust(bottom=0.25)
    labels = [f"{a}\n→ {b}" for a, b in zip(moved["from"], moved["to"], strict=True)]
    ax.bar([i - 0.2 for i in range(len(moved))], moved["keys_fraction"] * 100, width=0.4, label="keys %")
    ax.bar([i + 0.2 for i in range(len(moved))], moved["bytes_fraction"] * 100, width=0.4, label="bytes %")
    ax.set_xticks(range(len(moved)), labels, fontsize=7)
    ax.set_xlabel("partitioning change")
    ax.set_ylabel("% moved")
    ax.set_title("keys and bytes that change partition", fontsize=9)
    ax.legend(fontsize=7)
    return fig


def _table_html(frame: pd.DataFrame, floats: str = "{:.3f}") -> str:
    return str(frame.to_html(index=False, border=0, classes="t", float_format=floats.format, escape=True))


def write_report(
    result: PlanResult,
    out_dir: Path,
    *,
    title: str = "kafka-placement plan",
    source: str = "",
    summary: dict[str, Any] | None = None,
) -> Path:
    """Write ``report.html`` and its PNG plots into ``out_dir``; returns the report path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    plots = _plots(result, out_dir)
    t = result.totals
    lines = summary_lines(summary or summarize(result))
    skew = result.skew.pivot_table(
        index=["scenario", "name"], columns=["level", "measure"], values="max_over_mean"
    ).reset_index()
    skew.columns = [" ".join(str(p) for p in c if p) if isinstance(c, tuple) else c for c in skew.columns]
    gini = result.skew[["scenario", "level", "measure", "entities", "max_over_mean", "cv", "gini"]]
    sections = [
        f"<h1>{html.escape(title)}</h1>",
        f"<p>Source: {html.escape(source)}</p>" if source else "",
        f"<h2>{html.escape(lines[0])}</h2>",
        "<ul>"
        + "".join(f"<li>{html.escape(line.removeprefix('  - '))}</li>" for line in lines[1:])
        + "</ul>",
        f"<p>Records: {t['records']:,} &middot; distinct keys: {t['keys']:,} &middot; bytes: {t['bytes']:,} "
        f"({human_bytes(t['bytes'])}) &middot; keyless (NULL key) records: {t['keyless_records']:,}</p>",
        "<h2>Scenarios</h2>",
        _table_html(result.scenarios),
        "<h2>Skew (max / mean; 1.0 is perfectly even)</h2>",
        _table_html(skew),
        f'<img src="{plots["skew"].name}" alt="skew">',
        "<h2>Per partition</h2>",
        f'<img src="{plots["partitions"].name}" alt="records per partition">',
        "<h2>Per broker (leader and replica bytes)</h2>",
        f'<img src="{plots["brokers"].name}" alt="broker loads">',
        "<h2>Per rack</h2>",
        _table_html(result.racks),
        "<h2>Per consumer</h2>",
        f'<img src="{plots["consumers"].name}" alt="consumer loads">',
    ]
    if "moved" in plots:
        sections += [
            "<h2>Keys and bytes moved between partitionings</h2>",
            _table_html(result.moved),
            f'<img src="{plots["moved"].name}" alt="moved">',
        ]
    if len(result.keyless):
        sections += ["<h2>NULL keys (keyless records)</h2>", _table_html(result.keyless)]
    if "hot_keys" in plots:
        sections += [
            "<h2>Hot keys</h2>",
            _table_html(result.hot_keys),
            f'<img src="{plots["hot_keys"].name}" alt="hot keys">',
        ]
    sections += ["<h2>All skew metrics (max/mean, coefficient of variation, Gini)</h2>", _table_html(gini)]
    style = (
        "body{font-family:sans-serif;margin:2em;max-width:1400px}"
        " table.t{border-collapse:collapse;font-size:12px}"
        " table.t td,table.t th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}"
        " img{max-width:100%}"
    )
    doc = (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{style}</style></head><body>\n" + "\n".join(s for s in sections if s) + "\n</body></html>\n"
    )
    path = out_dir / "report.html"
    path.write_text(doc, encoding="utf-8")
    return path
