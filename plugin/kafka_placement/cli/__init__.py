"""The ``kafka-placement`` command.

One module per subcommand (``plan``, ``audit``, ``reassign``, ``demo``, ``conformance``, ``cluster``);
each exposes ``register(subparsers)`` that adds its parser and sets ``handler`` to a function
``(argparse.Namespace) -> int``. Heavy imports (Spark, JPype, clients) happen inside handlers so
``kafka-placement --help`` stays fast.

Errors are handled here, once, for every subcommand: a user error (our typed errors, a bad option, a
file that cannot be read or written, a missing optional dependency) is one line
``kafka-placement <cmd>: error: …`` and exit code 2; exit 1 is kept for "ran, found problems". Anything
else is a bug: still one line (never a traceback), saying to re-run with ``--debug`` (or
``KAFKA_PLACEMENT_DEBUG=1``), which shows the traceback.

SIGTERM unwinds like Ctrl-C (exit 143): every ``finally`` runs, so a soak or a test cluster leaves no
containers, fault proxy, member processes or iptables rules behind. A second SIGTERM kills at once.

Adapters only: arguments in, a core or a client adapter called, one line on error (exit 2).
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import NoReturn

from kafka_placement import __version__
from kafka_placement.cli.client_logs import LEVELS, configure_librdkafka_log
from kafka_placement.errors import KafkaPlacementError

SUBCOMMAND_MODULES = (
    "plan",
    "audit",
    "reassign",
    "demo",
    "conformance",
    "cluster",
    "group",
    "broker_plugin",
    "rebalance",
    "soak",
    "client_assignor",
)


#: Exit code of an unexpected error (a bug): not 1 ("ran, found problems") and not 2 (user error).
INTERNAL_ERROR = 3

#: Optional dependency (top-level module) → the extra that installs it.
EXTRAS = {
    "pyspark": "spark",
    "pandas": "spark",
    "pyarrow": "spark",
    "matplotlib": "spark",
    "kafka": "kafka-python",
    "confluent_kafka": "confluent",
    "aiokafka": "aiokafka",
    "jpype": "conformance",
    "testcontainers": "testing",
    "docker": "testing",
}


class Terminated(KeyboardInterrupt):
    """SIGTERM as an exception: the default action would end the process without running any
    ``finally`` (containers, the fault proxy and member processes were left running)."""


@contextmanager
def sigterm_unwinds() -> Iterator[None]:
    """Inside: the first SIGTERM raises :class:`Terminated`, later ones get the default action. Only
    where SIGTERM has the default action and only in the main thread (a host process's own handler,
    e.g. pytest's, is left alone)."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return

    def on_term(signum: int, frame: FrameType | None) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise Terminated

    signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


class OneLineParser(argparse.ArgumentParser):
    """argparse with its usage errors as one line (``prog: error: message``) and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def debug_requested(argv: Sequence[str]) -> bool:
    env = os.environ.get("KAFKA_PLACEMENT_DEBUG", "").strip().lower()
    return "--debug" in argv or env in {"1", "true", "yes"}


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="kafka-placement",
        description="Decide and prove where Kafka records, partitions and replicas go.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the traceback of an unexpected error (also KAFKA_PLACEMENT_DEBUG=1)",
    )
    parser.add_argument(
        "--librdkafka-log-level",
        metavar="LEVEL",
        type=str.upper,
        choices=LEVELS,
        help="show librdkafka's own log lines from this level up: "
        f"{', '.join(LEVELS)} (default CRITICAL, WARNING with --debug; "
        "also KAFKA_PLACEMENT_LIBRDKAFKA_LOG_LEVEL)",
    )
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=OneLineParser
    )
    for name in SUBCOMMAND_MODULES:
        module = importlib.import_module(f"kafka_placement.cli.{name}")
        module.register(subparsers)
    return parser


def one_line(text: str, debug: bool) -> str:
    """The first line of a message (the rest — e.g. a node's log tail — only with --debug)."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines or debug or len(lines) == 1:
        return " | ".join(lines) if debug else (lines[0] if lines else "")
    return f"{lines[0]} (+{len(lines) - 1} more lines with --debug)"


def describe_failure(exc: BaseException, debug: bool) -> tuple[str, int]:
    """(message, exit code) for an exception that reached the command line."""
    if isinstance(exc, KafkaPlacementError):
        return one_line(str(exc), debug), 2
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        top = exc.name.split(".")[0]
        extra = EXTRAS.get(top)
        if extra:
            return f"this needs the optional dependency {top!r}: pip install 'kafka-placement[{extra}]'", 2
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.strerror or exc}: {exc.filename}", 2
    if isinstance(exc, UnicodeDecodeError):
        return f"an input file is not UTF-8 text ({exc.reason} at byte {exc.start})", 2
    if isinstance(exc, MemoryError):
        return "out of memory: the input is larger than this machine can hold; use a smaller input", 2
    if isinstance(exc, RecursionError):
        return "input nested too deeply to read", 2
    text = one_line(str(exc), False)[:300]
    return (
        f"unexpected {type(exc).__name__}: {text} — this is a bug; re-run with --debug "
        "(or KAFKA_PLACEMENT_DEBUG=1) for the traceback and report it"
    ), INTERNAL_ERROR


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = debug_requested(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    command = getattr(args, "command", "")
    try:
        with sigterm_unwinds():
            configure_librdkafka_log(args.librdkafka_log_level, debug)
            return int(args.handler(args))
    except Terminated:
        print(f"kafka-placement {command}: terminated (SIGTERM); cleaned up", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print(f"kafka-placement {command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # the one place every subcommand's errors end
        if debug:
            traceback.print_exc()
        message, code = describe_failure(exc, debug)
        print(f"kafka-placement {command}: error: {message}", file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
