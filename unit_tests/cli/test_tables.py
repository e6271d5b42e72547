"""The CLI's text tables."""

from __future__ import annotations

from kafka_placement.cli.tables import format_table


def test_format_table_aligns_numbers_right() -> None:
    text = format_table(["name", "n", "ratio"], [["a", 1234, 1.5], ["bbb", 5, 10.25]])
    assert text.splitlines() == [
        "name      n   ratio",
        "----  -----  ------",
        "a     1,234   1.500",
        "bbb       5  10.250",
    ]
