"""The rebalance HTML report: before/after bars per broker for each resource, the goals, the table.

Drawn like the ``plan`` report (matplotlib's object API on the Agg canvas, PNGs beside the HTML)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from kafka_placement.cli.rebalance.table import table_text
from kafka_placement.replicas.loads import RebalancePlan
from kafka_placement.replicas.loads.model import RESOURCES

TITLES = {
    "disk": "disk (bytes)",
    "bytes_in": "bytes in (B/s)",
    "bytes_out": "bytes out (B/s)",
    "leader_bytes_in": "leader bytes in (B/s)",
    "leaders": "leaders",
}


def _bars(plan: RebalancePlan, out_dir: Path) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(max(8.0, 0.25 * plan.model.num_brokers + 4), 2.6 * len(RESOURCES)))
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(RESOURCES), 1, squeeze=False)
    ids = [str(int(b)) for b in plan.model.broker_ids]
    x = list(range(len(ids)))
    staying = ~plan.bands.removed
    for r, name in enumerate(RESOURCES):
        ax = axes[r][0]
        ax.bar([i - 0.2 for i in x], plan.before[:, r], width=0.4, label="before", color="#c0c0c0")
        ax.bar([i + 0.2 for i in x], plan.after[:, r], width=0.4, label="after", color="#4878a8")
        if staying.any():
            low, high = plan.bands.lower[staying][0, r], plan.bands.upper[staying][0, r]
            ax.axhspan(low, high, color="#55a868", alpha=0.15, label="band")
        ax.set_title(TITLES[name], fontsize=9)
        ax.set_xticks(x, ids, fontsize=6 if len(ids) > 40 else 8)
        ax.legend(fontsize=7, loc="upper right")
    fig.subplots_adjust(left=0.06, right=0.98, bottom=0.04, top=0.97, hspace=0.6)
    path = out_dir / "brokers.png"
    fig.savefig(path, dpi=80)
    return path


def write_rebalance_report(plan: RebalancePlan, summary: dict[str, Any], out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    bars = _bars(plan, out_dir)
    doc = (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>kafka-placement rebalance</title>'
        "<style>body{font-family:sans-serif;margin:2em;max-width:1400px} img{max-width:100%}</style>"
        "</head><body>\n<h1>kafka-placement rebalance</h1>\n"
        f"<pre>{html.escape(table_text(plan, summary))}</pre>\n"
        f'<h2>Per broker, before and after</h2>\n<img src="{bars.name}" alt="loads per broker">\n'
        "</body></html>\n"
    )
    path = out_dir / "report.html"
    path.write_text(doc, encoding="utf-8")
    return path
