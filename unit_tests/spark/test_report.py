"""The report: files exist, plots are PNGs matplotlib decodes, the HTML points at them, tables round-trip."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from kafka_placement.planning.report import TABLES, write_report, write_results
from kafka_placement.planning.result import PlanResult
from kafka_placement.planning.scenarios import Group, Placement, scenario_grid
from kafka_placement.spark.pipeline import plan
from kafka_placement.spark.sample import SampleSpec, sample_dataframe

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def result(spark: Any) -> PlanResult:
    df = sample_dataframe(spark, SampleSpec(5000, distinct_keys=300, seed=5))
    grid = scenario_grid([6, 9], ["murmur2", "jump"], [Placement(placer="balanced")], [Group(3, "sticky")])
    return plan(spark, df, grid, value_column="value_size", top_keys=8)


def test_report_and_plots(result: PlanResult, tmp_path: Path) -> None:
    import matplotlib
    import matplotlib.image as mpimg

    backend = matplotlib.rcParams["backend"]
    report = write_report(result, tmp_path, title="t <&> 1", source="sample")
    assert matplotlib.rcParams["backend"] == backend  # no process-wide backend switch
    html = report.read_text()
    assert "<h2>Recommendation: " in html
    assert html.startswith("<!DOCTYPE html>") and "<title>t &lt;&amp;&gt; 1</title>" in html
    images = re.findall(r'<img src="([^"]+)"', html)
    assert set(images) == {
        "skew.png",
        "partitions.png",
        "brokers.png",
        "consumers.png",
        "moved.png",
        "hot_keys.png",
    }
    for name in images:
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        pixels = mpimg.imread(tmp_path / name)
        assert pixels.shape[0] > 100 and pixels.shape[1] > 200
        assert pixels.std() > 0.01  # something was drawn, not a blank canvas
    assert "user-1" in html  # hot keys table
    assert "murmur2/6" in html and "jump/9" in html


def test_results_round_trip(result: PlanResult, tmp_path: Path) -> None:
    paths = write_results(result, tmp_path)
    assert {p.name for p in paths} == {f"{t}.parquet" for t in TABLES} | {"plan.json"}
    for table in TABLES:
        frame = pd.read_parquet(tmp_path / f"{table}.parquet")
        pd.testing.assert_frame_equal(frame, getattr(result, table), check_dtype=False)
    doc = json.loads((tmp_path / "plan.json").read_text())
    assert doc["totals"] == result.totals
    assert doc["summary"]["recommendation"]["partitioning"] in {"murmur2/6", "murmur2/9", "jump/6", "jump/9"}
    assert len(doc["partitions"]) == 6 + 9 + 6 + 9
    assert doc["partitions"][0].keys() >= {"partitioning", "partition", "records", "bytes", "keys"}
