"""Where the Kafka clients' own log lines go when a subcommand runs: set once, for every subcommand.

librdkafka's lines (``FAIL`` when a broker restarts, ``REQTMOUT`` …) reach the Python logger
:data:`~kafka_placement.clients.connection.LIBRDKAFKA_LOGGER` (the connection settings give every
confluent client that logger). Here they are shown from ``--librdkafka-log-level`` (or
``KAFKA_PLACEMENT_LIBRDKAFKA_LOG_LEVEL``) up, default ``CRITICAL`` (``WARNING`` with ``--debug``), each
as ``librdkafka: …`` on its own line of stderr.
"""

from __future__ import annotations

import logging
import os
import sys

from tqdm import tqdm

from kafka_placement.errors import InvalidArgumentError

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL", "OFF")
ENV = "KAFKA_PLACEMENT_LIBRDKAFKA_LOG_LEVEL"


class _OwnLines(logging.Handler):
    """``librdkafka: …`` on stderr, any live progress line cleared first."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            tqdm.write(f"librdkafka: {record.getMessage()}", file=sys.stderr)
        except Exception:
            self.handleError(record)


def configure_librdkafka_log(level: str | None, debug: bool) -> None:
    """Show librdkafka's lines from ``level`` (the option, else the environment, else the default) up."""
    from kafka_placement.clients.connection import LIBRDKAFKA_LOGGER

    chosen = (level or os.environ.get(ENV) or ("WARNING" if debug else "CRITICAL")).strip().upper()
    if chosen not in LEVELS:
        raise InvalidArgumentError(f"librdkafka log level {chosen!r} is not one of {', '.join(LEVELS)}")
    logger = logging.getLogger(LIBRDKAFKA_LOGGER)
    logger.handlers = [_OwnLines()]
    logger.propagate = False
    logger.setLevel(logging.CRITICAL + 1 if chosen == "OFF" else getattr(logging, chosen))
