"""Fast, clear connection failures: one bounded look at the cluster before any work, and client errors
turned into one line that says what failed and the likely fix.

The probe asks librdkafka (confluent-kafka's ``AdminClient``) for metadata with the command's timeout and
collects what its error callback reports (connection refused, TLS handshake and certificate errors, SASL
authentication errors, a plaintext client on a TLS listener), so a wrong address, protocol, CA or
password ends in seconds with a :class:`~kafka_placement.errors.ConnectionFailedError` instead of a
30-second hang and a traceback.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from kafka_placement.clients.connection.settings import ConnectionSettings
from kafka_placement.errors import ConnectionFailedError, NotAuthorizedError

_NOT_TLS = "the TLS handshake failed: this listener does not seem to speak TLS"
_NOT_TLS_FIX = "use security.protocol=PLAINTEXT or SASL_PLAINTEXT for this port, or the broker's TLS port"
_HANDSHAKE_TIMED_OUT = re.compile(r"timed out[^)]*state SSL_HANDSHAKE", re.IGNORECASE)
#: A handshake the peer closed or reset: what a plaintext Kafka listener does to a TLS ClientHello (it
#: reads the record header as a size, refuses it and closes), and librdkafka then guesses "connecting to
#: a PLAINTEXT broker listener?". But an overloaded or restarting broker, or a proxy, can cut a handshake
#: too: a soak's ``reassign plan`` was once told "does not seem to speak TLS" by a SASL_SSL cluster at
#: load average 200. A plaintext listener cuts every attempt, so the verdict waits for
#: :data:`HANDSHAKES_CUT_FOR_VERDICT` of them (librdkafka reconnects within a second), from two bootstrap
#: addresses when there are two or more: one dead broker behind a proxy (which accepts, then resets) cut
#: three handshakes within seconds in the secured soak of session 32 while the other five spoke TLS.
_HANDSHAKE_CUT: tuple[str | re.Pattern[str], ...] = (
    "connecting to a PLAINTEXT broker listener",
    re.compile(r"(closed by peer|reset by peer|unexpected eof)[^)]*state SSL_HANDSHAKE", re.IGNORECASE),
    "unexpected eof while reading",
)
HANDSHAKES_CUT_FOR_VERDICT = 3
#: librdkafka names the connection: ``sasl_ssl://127.0.0.1:9093/bootstrap: ...`` (its log line starts so,
#: its error callback's ``KafkaError{..., str="..."}`` quotes it)
_CONNECTION_ADDRESS = re.compile(r"\b\w+://([^/\s\"]+)/")
#: A connection the broker closed at the first request: what a TLS or SASL listener does to a plaintext
#: client. A broker that is overloaded, restarting or behind a link that resets does it too (a PLAINTEXT
#: soak's ``reassign plan`` was told so at load average 200, seed 51), so, as for cut handshakes, the
#: verdict needs two addresses when there are two or more.
_CLOSED_AT_FIRST_REQUEST: tuple[str | re.Pattern[str], ...] = (
    "connection closed by peer: receive 0 after POLLIN",
    "Disconnected while requesting ApiVersion",
)
_CLOSED_AT_FIRST_REQUEST_WHAT = "the broker closed the connection at our first request"

#: (substrings of librdkafka's message, or patterns, any of which match; what failed; the likely fix) —
#: first match wins.
_DIAGNOSES: tuple[tuple[tuple[str | re.Pattern[str], ...], str, str], ...] = (
    (
        ("certificate verify failed", "broker certificate could not be verified"),
        "the broker's TLS certificate is not trusted",
        "set ssl.truststore.location (or ssl.ca.location) to the CA that signed it",
    ),
    (
        ("hostname mismatch", "Hostname mismatch", "does not match"),
        "the broker's certificate does not name the address we connected to",
        "connect to a name in its certificate, or set ssl.endpoint.identification.algorithm= (empty) "
        "to skip the check",
    ),
    (
        # OpenSSL read bytes that are not TLS: the port answered in another protocol
        ("wrong version number", "packet length too long", "record layer failure"),
        _NOT_TLS,
        _NOT_TLS_FIX,
    ),
    (
        # a handshake that did not finish in time proves nothing about the port (a broker slow to
        # answer, restarting, or behind a proxy that holds the bytes): the probe keeps trying
        (_HANDSHAKE_TIMED_OUT,),
        "the TLS handshake did not finish in time: the broker may be overloaded or restarting, or the port "
        "may not be a TLS listener",
        "try again, with a longer --timeout if the cluster is slow; check that this is the broker's TLS port",
    ),
)
#: After those, a handshake cut off (:data:`_HANDSHAKE_CUT`, counted), then these.
_LATER_DIAGNOSES: tuple[tuple[tuple[str | re.Pattern[str], ...], str, str], ...] = (
    (
        ("SSL handshake failed",),
        "the TLS handshake failed",
        "check security.protocol, the trust store and the client certificate",
    ),
    (
        (
            "Authentication failed",
            "authentication error",
            "Invalid username or password",
            "SASL authentication",
        ),
        "SASL authentication failed",
        "check the username and password in sasl.jaas.config (or sasl.username/sasl.password) "
        "and sasl.mechanism",
    ),
    (
        ("Unsupported SASL mechanism", "mechanism", "UNSUPPORTED_SASL_MECHANISM"),
        "the broker does not offer this SASL mechanism",
        "set sasl.mechanism to one the listener enables (e.g. SCRAM-SHA-512)",
    ),
    (
        # librdkafka counts the milliseconds the connection was up: 0 on an idle machine, more on a
        # loaded one. A SASL_SSL listener closes a TLS client's connection right after ApiVersions
        # (the only request allowed before SASL), whatever that count is.
        (re.compile(r"SSL connection closed by peer \(after \d+ms in state UP", re.IGNORECASE),),
        "the broker closed the TLS connection at once: the listener expects SASL",
        "set security.protocol=SASL_SSL with sasl.mechanism and sasl.jaas.config",
    ),
    (
        _CLOSED_AT_FIRST_REQUEST,
        _CLOSED_AT_FIRST_REQUEST_WHAT,
        "a plaintext client on a TLS or SASL listener? set security.protocol (SSL, SASL_SSL, SASL_PLAINTEXT) "
        "as the listener expects",
    ),
    (
        (
            "incorrect security.protocol",
            "Disconnected while requesting ApiVersion",
            "Disconnected: verify that security.protocol",
        ),
        "the broker closed the connection at the first request",
        "the port may be a TLS or SASL listener: set security.protocol (SSL, SASL_SSL, SASL_PLAINTEXT)",
    ),
    (
        ("Connection refused",),
        "connection refused",
        "check the host and port of --bootstrap-server and that the broker runs",
    ),
    (
        ("Name or service not known", "resolve", "nodename nor servname"),
        "the host name does not resolve",
        "check the host of --bootstrap-server",
    ),
)


def _matches(needle: str | re.Pattern[str], message: str, lowered: str) -> bool:
    if isinstance(needle, str):
        return needle.lower() in lowered
    return needle.search(message) is not None


def _first_diagnosis(
    table: tuple[tuple[tuple[str | re.Pattern[str], ...], str, str], ...],
    count: Callable[[tuple[str | re.Pattern[str], ...]], int],
) -> tuple[str, str] | None:
    """(what failed, the likely fix) of the first entry of ``table`` some message matches."""
    for needles, what, fix in table:
        if count(needles):
            return what, fix
    return None


def diagnose(messages: list[str], settings: ConnectionSettings) -> str:
    """One line from librdkafka's error messages (or a timeout when it said nothing useful)."""
    lowered = [m.lower() for m in messages]

    def matching(needles: tuple[str | re.Pattern[str], ...]) -> list[str]:
        """The messages that match any of ``needles``."""
        return [
            m for m, low in zip(messages, lowered, strict=True) if any(_matches(n, m, low) for n in needles)
        ]

    def count(needles: tuple[str | re.Pattern[str], ...]) -> int:
        """How many messages match any of ``needles``."""
        return len(matching(needles))

    found = _first_diagnosis(_DIAGNOSES, count)
    if found is None:
        cut_messages = matching(_HANDSHAKE_CUT)
        cut = len(cut_messages)
        if cut >= HANDSHAKES_CUT_FOR_VERDICT and _from_more_than_one_broker(cut_messages, settings):
            found = _NOT_TLS, _NOT_TLS_FIX
        elif cut:
            found = (
                f"the TLS handshake was cut off ({cut} time(s)): the port may not be a TLS listener, or "
                "the broker is overloaded or restarting",
                "check security.protocol and the port, and try again (a longer --timeout if the cluster "
                "is slow)",
            )
        else:
            found = _first_diagnosis(_LATER_DIAGNOSES, count)
            closed = matching(_CLOSED_AT_FIRST_REQUEST)
            if (
                found is not None
                and found[0] == _CLOSED_AT_FIRST_REQUEST_WHAT
                and not _from_more_than_one_broker(closed, settings)
            ):
                found = (
                    f"one broker closed connections at the first request ({len(closed)} time(s)): it may "
                    "be overloaded, restarting or behind a link that resets, or its listener expects TLS or "
                    "SASL",
                    "check security.protocol and the port, and try again (a longer --timeout if the cluster "
                    "is slow)",
                )
    if found is not None:
        return f"cannot connect to {settings.describe()}: {found[0]}; {found[1]}"
    return (
        f"cannot connect to {settings.describe()}: no broker answered within {settings.timeout_s:g} s; "
        "check the address, the port and security.protocol (a longer --timeout if the cluster is slow)"
    )


def _from_more_than_one_broker(messages: list[str], settings: ConnectionSettings) -> bool:
    """Whether ``messages`` came from two addresses, or from the only one there is (each listener of a
    cluster is configured alike: a wrong protocol fails at them all, a dead or overloaded broker only at
    its own). A message that names no address counts as another one."""
    addresses: set[str] = set()
    for message in messages:
        named = _CONNECTION_ADDRESS.search(message)
        addresses.add(named.group(1) if named is not None else f"unnamed-{len(addresses)}")
    return len(addresses) >= min(2, len(set(settings.servers)))


#: Diagnoses that no retry will change: report them at once instead of waiting for the timeout.
_FINAL = (
    "the listener expects SASL",
    "not trusted",
    "does not name",
    "does not seem to speak TLS",
    "SASL authentication failed",
    "SASL mechanism",
    "closed the connection at our first request",
    "does not resolve",
)
#: A refused connection may be a broker still starting: give it this long before reporting it.
_REFUSED_GRACE_S = 3.0
#: One DescribeCluster attempt (a dead broker still in the metadata must not eat the whole timeout).
_DESCRIBE_ATTEMPT_S = 3.0


def _is_timeout(exc: BaseException) -> bool:
    inner = exc.args[0] if exc.args else None
    name = str(inner.name()) if inner is not None and hasattr(inner, "name") and callable(inner.name) else ""
    return "TIMED_OUT" in name.upper() or isinstance(exc, TimeoutError) or "timed out" in str(exc).lower()


def check_connection(settings: ConnectionSettings) -> dict[int, str | None]:
    """Broker id → rack of the cluster, or :class:`ConnectionFailedError` within ``settings.timeout_s``
    (sooner when librdkafka reports a failure that waiting will not fix)."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    messages: list[str] = []

    def collect(text: str) -> None:
        if len(messages) < 200:
            messages.append(text)

    conf: dict[str, Any] = dict(settings.confluent())
    conf.update(
        {
            "error_cb": lambda err: collect(str(err)),
            "logger": _Logger(collect),
            "socket.timeout.ms": max(1000, int(settings.timeout_s * 1000)),
            "reconnect.backoff.max.ms": 1000,
        }
    )
    try:
        admin = AdminClient(conf)
    except KafkaException as exc:
        raise ConnectionFailedError(
            f"the confluent client refused the settings: {exc.args[0].str()}"
        ) from None
    started = time.monotonic()
    deadline = started + settings.timeout_s
    while True:
        left = deadline - time.monotonic()
        try:
            metadata = admin.list_topics(timeout=max(0.2, min(1.0, left)))
            break
        except KafkaException:
            admin.poll(0.05)
        verdict = diagnose(messages, settings)
        waited = time.monotonic() - started
        final = any(f in verdict for f in _FINAL) or (
            "connection refused" in verdict and waited > _REFUSED_GRACE_S
        )
        if final or time.monotonic() >= deadline:
            raise ConnectionFailedError(verdict)
    # Metadata came back: the address, the security settings and the credentials work. DescribeCluster
    # adds the racks; librdkafka sends it to one broker it knows, and if that one just died (still in
    # the metadata) the request only times out — then the metadata's broker list is the answer.
    attempt = max(1.0, min(_DESCRIBE_ATTEMPT_S, deadline - time.monotonic()))
    future = admin.describe_cluster(request_timeout=attempt)
    try:
        description = future.result(timeout=attempt + 1.0)
    except Exception as exc:
        if not _is_timeout(exc):
            raise translate_error(exc, settings, "describe the cluster") from None
        return {int(b): None for b in metadata.brokers}
    return {int(n.id): n.rack for n in description.nodes}


class _Logger:
    """librdkafka's ``logger`` setting wants an object with ``log(level, fmt, *args)``."""

    def __init__(self, sink: Any) -> None:
        self._sink = sink

    def log(self, level: int, fmt: str, *args: Any) -> None:
        self._sink(fmt % args if args else fmt)


def translate_error(exc: BaseException, settings: ConnectionSettings, operation: str) -> Exception:
    """A client exception (kafka-python or confluent-kafka) as our typed one-line error."""
    text = str(exc)
    name = type(exc).__name__
    inner = exc.args[0] if exc.args else None
    code_name = ""
    if inner is not None and hasattr(inner, "name") and callable(inner.name):
        code_name = str(inner.name())
        text = str(inner.str()) if hasattr(inner, "str") else text
    if "AUTHORIZATION" in code_name.upper() or "Authorization" in name or "not authorized" in text.lower():
        user = ""
        if settings.sasl:
            try:
                user = f" for user {settings.credentials()[0]!r}"
            except Exception:
                user = ""
        return NotAuthorizedError(
            f"not authorised to {operation}{user} on {settings.bootstrap_servers} ({code_name or name}); "
            "ask for the ACL (kafka-acls.sh --add --operation Describe ...) or use a principal that has it"
        )
    if "NoBrokersAvailable" in name or "KafkaTimeoutError" in name or "TIMED_OUT" in code_name.upper():
        return ConnectionFailedError(
            f"cannot {operation} on {settings.describe()}: "
            f"no broker answered within {settings.timeout_s:g} s; "
            "check the address, security.protocol and credentials (a longer --timeout if the cluster is slow)"
        )
    return ConnectionFailedError(f"cannot {operation} on {settings.describe()}: {name}: {text[:300]}")
