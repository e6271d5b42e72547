"""Every CLI test runs in its own empty working directory: commands that write default files there
(``reassign plan`` saves a rollback file) never litter the checkout."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _own_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
