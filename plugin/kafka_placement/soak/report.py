"""The soak's HTML report: one self-contained page with the verdict, the figures and an inline SVG
timeline — each member's holdings over time (one row per member, a bar per holding, labelled with its
partition count), every fault as a vertical marker, the reassignment in flight as a band, and the
produce and consume rates per second.

(The plan report, :mod:`kafka_placement.planning.report`, draws a plan's tables with matplotlib; a
timeline of intervals and markers is plain SVG, with no plotting dependency.)
"""

from __future__ import annotations

import html
import json
from collections import Counter
from pathlib import Path
from typing import Any

from kafka_placement.soak.verdict import SoakLogs

__all__ = ["write_report"]

_W, _ROW, _LEFT = 1100, 22, 110
_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1")


def _timeline(
    logs: SoakLogs, move: dict[str, Any] | None = None, outages: dict[str, list[list[float]]] | None = None
) -> str:
    times = [a.t for a in logs.acks] + [c.t for c in logs.consumed] + [o.acquired for o in logs.ownerships]
    if not times:
        return "<p>no events</p>"
    t0, t1 = min(times), max(times + [f.t for f in logs.faults])
    span = max(t1 - t0, 1.0)

    def x(t: float) -> float:
        return _LEFT + (t - t0) / span * (_W - _LEFT - 10)

    members = sorted({o.member for o in logs.ownerships} | {c.member for c in logs.consumed})
    groups = sorted({o.group for o in logs.ownerships})
    color = {g: _COLORS[i % len(_COLORS)] for i, g in enumerate(groups)}
    rate_h = 120
    top = 20
    height = top + len(members) * _ROW + rate_h + 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{height}" font-size="11">']
    if move and move.get("started_t"):  # the reassignment in flight, from its start to its end
        start, end = move["started_t"], move.get("completed_t") or t1
        parts.append(
            f'<rect x="{x(start):.1f}" y="0" width="{max(1.0, x(end) - x(start)):.1f}" height="{height}" '
            f'fill="#edc948" opacity="0.25"><title>reassignment: {move.get("partitions_moved", 0)} '
            f"partitions off broker {move.get('drained_broker')}"
            f"{'' if move.get('completed') else ' (not completed)'}</title></rect>"
        )
    for group, spans in sorted((outages or {}).items()):  # no rebalance of the group could complete
        for start, end, *_ in spans:
            parts.append(
                f'<rect x="{x(start):.1f}" y="0" width="{max(1.0, x(end) - x(start)):.1f}" '
                f'height="{height}" fill="#e15759" opacity="0.15"><title>coordinator of {html.escape(group)} '
                f"offline {end - start:.0f} s</title></rect>"
            )
    for i, member in enumerate(members):
        y = top + i * _ROW
        parts.append(f'<text x="4" y="{y + 14}">{html.escape(member)}</text>')
        for own in (o for o in logs.ownerships if o.member == member):
            end = own.released if own.released is not None else t1
            width = max(1.0, x(end) - x(own.acquired))
            parts.append(
                f'<rect x="{x(own.acquired):.1f}" y="{y + 3}" width="{width:.1f}" height="{_ROW - 6}" '
                f'fill="{color.get(own.group, "#999")}" opacity="0.8"><title>{html.escape(own.group)} '
                f"{html.escape(member)}: partitions {list(own.partitions)}</title></rect>"
            )
    base = top + len(members) * _ROW + 20
    produced = Counter(int(a.t - t0) for a in logs.acks)
    consumed = Counter(int(c.t - t0) for c in logs.consumed)
    peak = max([*produced.values(), *consumed.values(), 1])
    for counts, stroke in ((produced, "#333"), (consumed, "#59a14f")):
        points = " ".join(
            f"{x(t0 + s):.1f},{base + rate_h - counts.get(s, 0) / peak * rate_h:.1f}"
            for s in range(int(span) + 1)
        )
        parts.append(f'<polyline fill="none" stroke="{stroke}" points="{points}"/>')
    parts.append(f'<text x="4" y="{base + 12}">records/s (peak {peak})</text>')
    parts.append(f'<text x="4" y="{base + 26}" fill="#333">produced</text>')
    parts.append(f'<text x="4" y="{base + 40}" fill="#59a14f">consumed (all groups)</text>')
    for fault in logs.faults:
        stroke = "#999" if fault.kind.endswith("-undone") else "#d00"
        parts.append(
            f'<line x1="{x(fault.t):.1f}" x2="{x(fault.t):.1f}" y1="0" y2="{height}" '
            f'stroke="{stroke}" stroke-dasharray="3,3"><title>{html.escape(fault.kind)} '
            f"{html.escape(fault.target)}</title></line>"
        )
    parts.append("</svg>")
    return "\n".join(parts)


def write_report(summary: dict[str, Any], logs: SoakLogs, out_dir: Path) -> Path:
    """``report.html`` and ``summary.json`` in ``out_dir``; returns the HTML path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    legend = ", ".join(sorted({o.group for o in logs.ownerships}))
    rows = "".join(
        f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(json.dumps(v))}</td></tr>"
        for k, v in summary.items()
        if k not in ("faults",)
    )
    faults = "".join(
        f"<li>{html.escape(f['kind'])} {html.escape(f['target'])} at {f['t']}</li>"
        for f in summary.get("faults", [])
    )
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>kafka-placement soak</title>
<style>body{{font-family:sans-serif;margin:1em}}
td,th{{text-align:left;padding:2px 8px;font-size:12px}}</style>
</head><body><h1>Soak: {html.escape(str(summary.get("verdict")))}</h1>
<p>Timeline: one row per member, a bar per holding (colour = group: {html.escape(legend)}; hover for the
partitions); red dashed lines = faults, grey = faults undone; yellow band = the reassignment in flight;
below, records produced and consumed per second.</p>
{_timeline(logs, summary.get("reassignment"), summary.get("coordinator_outages"))}
<h2>Figures</h2><table>{rows}</table><h2>Faults</h2><ol>{faults}</ol></body></html>
"""
    path = out_dir / "report.html"
    path.write_text(page)
    return path
