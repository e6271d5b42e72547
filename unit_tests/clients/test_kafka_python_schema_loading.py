"""A user's test output is theirs: kafka-python's schema loader's 218 DeprecationWarnings (Python 3.11 and
3.12) never show in a project that uses our pytest plugin and clients, and the user's own warnings all do."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

from kafka_placement.clients.kafka_python.schema_loading import quiet_schema_loading

pytest_plugins = ["pytester"]

#: importlib.resources.read_text / open_text warn on Python 3.11 and 3.12 only (3.13 undeprecated them)
LEGACY_RESOURCES_WARN = sys.version_info < (3, 13)

USERS_TESTS = """
import importlib.resources
import warnings


def test_with_kafka_python_and_our_clients(pytestconfig):
    assert pytestconfig.pluginmanager.has_plugin("kafka_placement")
    from kafka import KafkaProducer  # noqa: F401
    from kafka_placement.clients.kafka_python.partitioners import JavaDefaultPartitioner

    assert JavaDefaultPartitioner() is not None


def test_the_users_own_warnings():
    importlib.resources.read_text("json", "__init__.py")  # deprecated on 3.11/3.12: two warnings
    warnings.warn("the user's own", DeprecationWarning)
"""


def test_a_project_with_our_plugin_shows_only_its_own_warnings(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_users=USERS_TESTS)
    # a fresh interpreter, as the user's: kafka-python not yet imported when our plugin loads
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist")
    own = 3 if LEGACY_RESOURCES_WARN else 1
    text = result.stdout.str()
    warned = sorted({line.strip() for line in result.stdout.lines if "Warning" in line})
    assert result.parseoutcomes().get("warnings", 0) == own, warned[:20]
    result.assert_outcomes(passed=2, warnings=own)
    assert "kafka/protocol/schemas/load_json.py" not in text
    assert "the user's own" in text


@pytest.mark.skipif(not LEGACY_RESOURCES_WARN, reason="Python 3.13+: kafka-python's loader raises none")
def test_kafka_python_alone_still_raises_them() -> None:
    # what the test above would see without us: kafka-python's import warns once or twice per schema
    code = (
        "import warnings\n"
        "with warnings.catch_warnings(record=True) as log:\n"
        "    warnings.simplefilter('always')\n"
        "    import kafka\n"
        "print(sum('is deprecated' in str(w.message) for w in log))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert int(out) >= 200


def test_the_quiet_block_touches_nothing_else() -> None:
    before = list(warnings.filters)
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always")
        with quiet_schema_loading():
            warnings.warn("read_text is deprecated", DeprecationWarning, stacklevel=1)  # this module: kept
            warnings.warn("open_text is deprecated", UserWarning, stacklevel=1)  # other category: kept
            warnings.warn_explicit(
                "read_text is deprecated",
                DeprecationWarning,
                "load_json.py",
                14,
                module="kafka.protocol.schemas.load_json",
            )  # kafka-python's: ignored
            warnings.warn_explicit(
                "open_text is deprecated",
                DeprecationWarning,
                "_legacy.py",
                80,
                module="importlib.resources._legacy",
            )  # read_text's inner one: ignored
            warnings.warn_explicit(
                "something else",
                DeprecationWarning,
                "load_json.py",
                14,
                module="kafka.protocol.schemas.load_json",
            )  # another message: kept
        warnings.warn_explicit(
            "open_text is deprecated",
            DeprecationWarning,
            "_legacy.py",
            80,
            module="importlib.resources._legacy",
        )  # after the block: kept
    assert [str(w.message) for w in log] == [
        "read_text is deprecated",
        "open_text is deprecated",
        "something else",
        "open_text is deprecated",
    ]
    assert warnings.filters == before
