"""Loading kafka-python without filling our users' test output with its schema loader's warnings.

kafka-python 3.0.x builds its protocol classes from Kafka's JSON message schemas when ``kafka`` is first
imported (109 schemas), reading each one with ``importlib.resources.read_text``. On Python 3.11 and 3.12
that function is deprecated, and every read raises two ``DeprecationWarning``\\ s: ``read_text is
deprecated`` (attributed to ``kafka.protocol.schemas.load_json``, kafka-python's loader) and ``open_text
is deprecated`` (raised by ``read_text`` itself, so attributed to ``importlib.resources._legacy``). A
user's project with our pytest plugin saw all 218 in its summary. (Python 3.13 undeprecated both.)

:func:`quiet_schema_loading` ignores exactly those two — that category, those messages, from those two
modules — and only while its block runs (``warnings.catch_warnings`` restores the filters after it), so
no other warning of the user's is touched, before, during or after. :func:`load_kafka_python` imports
``kafka`` once inside it; the kafka-python adapters (this package) call it when they are imported, which
is before any of our code — the pytest plugin included — first imports ``kafka``. A class built later
from more schemas with ``load_json=`` (ConsumerGroupDescribe from the ``kafka-clients`` jar,
``consumer_group_describe.message_classes``: two more warnings per class, once per process) belongs
inside :func:`quiet_schema_loading` too.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

#: (message, module) of each warning kafka-python's schema loader raises per schema, as regexes.
SCHEMA_LOADER_WARNINGS = (
    (r"read_text is deprecated", r"kafka\.protocol\.schemas\.load_json\Z"),
    (r"open_text is deprecated", r"importlib\.resources\._legacy\Z"),
)


@contextmanager
def quiet_schema_loading() -> Iterator[None]:
    """Within the block, kafka-python's schema loader's two DeprecationWarnings are ignored; nothing else
    changes, and the warning filters are as before once it ends."""
    with warnings.catch_warnings():
        for message, module in SCHEMA_LOADER_WARNINGS:
            warnings.filterwarnings("ignore", message=message, category=DeprecationWarning, module=module)
        yield


def load_kafka_python() -> bool:
    """Import ``kafka`` (loading its message schemas) inside :func:`quiet_schema_loading`, once per process.
    False when kafka-python is not installed (the adapter that needs it says so when used)."""
    if "kafka" in sys.modules:
        return True
    with quiet_schema_loading():
        try:
            importlib.import_module("kafka")
        except ImportError:
            return False
    return True
