"""Missing reference jars: the error tells a pip user (no source checkout) how to fetch them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kafka_placement.conformance.jars import JavaReferenceUnavailable, admin_utils_jars, class_path
from kafka_placement.versions import KAFKA_VERSION


def test_missing_jars_name_the_maven_command_on_the_shipped_pom(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAFKA_PLACEMENT_JAVA_CACHE", str(tmp_path))
    for fetch in (class_path, admin_utils_jars):
        with pytest.raises(JavaReferenceUnavailable) as info:
            fetch()
        message = str(info.value)
        pom = re.search(r"mvn -q -f (\S+) ", message)
        assert pom is not None and Path(pom.group(1)).is_file()  # the pom ships inside the package
        assert f"-Dkafka.version={KAFKA_VERSION}" in message and str(tmp_path) in message
