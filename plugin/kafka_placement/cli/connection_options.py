"""The connection options every networked subcommand takes, in Kafka's own spelling.

``--bootstrap-server`` (``--bootstrap-servers`` kept as an alias), ``--command-config FILE`` (a Java
client ``.properties`` file, as ``kafka-topics.sh --command-config``), repeatable ``-X key=value``
(librdkafka style) and ``--timeout`` / ``--connect-timeout`` (seconds for every network wait; 15 by
default; where a subcommand's ``--timeout`` already means something else, only
``--connect-timeout``). Subcommands call :func:`add_connection_arguments` on their parser and
:func:`settings_from_args` in their handler.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafka_placement.clients.connection import DEFAULT_TIMEOUT_S, ConnectionSettings, connection_settings
from kafka_placement.errors import ConnectionSettingsError


def add_connection_arguments(
    parser: Any, *, required: bool = False, timeout: bool = True, help_suffix: str = ""
) -> None:
    """Add the connection options to ``parser`` (``required``: a bootstrap address must be given)."""
    group = parser.add_argument_group(
        "connection (as Kafka's tools: --command-config takes a client .properties)"
    )
    group.add_argument(
        "--bootstrap-server",
        "--bootstrap-servers",
        dest="bootstrap_servers",
        metavar="HOST:PORT[,…]",
        required=required,
        help="brokers to bootstrap from" + help_suffix,
    )
    group.add_argument(
        "--command-config", metavar="FILE", help="Java client properties (security.protocol, sasl.*, ssl.*)"
    )
    group.add_argument(
        "-X",
        dest="client_settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="one client setting (repeatable; overrides --command-config)",
    )
    flags = ("--timeout", "--connect-timeout") if timeout else ("--connect-timeout",)
    group.add_argument(
        *flags,
        dest="connect_timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"give up on the cluster after this long (default {DEFAULT_TIMEOUT_S:g})",
    )


def has_connection(args: argparse.Namespace) -> bool:
    """True when the command line names a cluster (an address or a properties file)."""
    # an empty --bootstrap-server counts: it is refused, never taken to mean "the embedded cluster"
    return getattr(args, "bootstrap_servers", None) is not None or bool(getattr(args, "command_config", None))


def settings_from_args(args: argparse.Namespace) -> ConnectionSettings:
    """The :class:`ConnectionSettings` of a parsed command line."""
    bootstrap = getattr(args, "bootstrap_servers", None)
    if bootstrap is not None and not bootstrap.strip():
        raise ConnectionSettingsError("--bootstrap-server is empty; give host:port[,host:port…]")
    return connection_settings(
        bootstrap,
        getattr(args, "command_config", None),
        getattr(args, "client_settings", None) or (),
        timeout_s=float(getattr(args, "connect_timeout", DEFAULT_TIMEOUT_S) or DEFAULT_TIMEOUT_S),
    )
