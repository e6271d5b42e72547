"""Toxiproxy (https://github.com/Shopify/toxiproxy), the TCP fault proxy of the proxied test cluster.

:class:`ToxiproxyServer` runs ``toxiproxy-server`` (installed by ``scripts/ensure-toxiproxy.sh``) on
127.0.0.1 and a free port for as long as its ``with`` block; :class:`ToxiproxyClient` speaks its HTTP API
(README "HTTP API": proxies, toxics, ``/version``) with the standard library. The toxic builders
(:func:`latency`, :func:`bandwidth`, :func:`reset_peer`, :func:`timeout`, :func:`slow_close`,
:func:`limit_data`) take the attributes Toxiproxy's README documents, in its units::

    with ToxiproxyServer() as server:
        proxy = server.client.create_proxy("broker-0", "127.0.0.1:0", "127.0.0.1:9092")
        server.client.add_toxic(proxy.name, reset_peer(timeout_ms=0))
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_placement.errors import FaultProxyError, InvalidArgumentError
from kafka_placement.testing.ports import free_ports

__all__ = [
    "SERVER_ENV",
    "STREAMS",
    "Proxy",
    "Toxic",
    "ToxiproxyClient",
    "ToxiproxyServer",
    "bandwidth",
    "find_server",
    "latency",
    "limit_data",
    "reset_peer",
    "slow_close",
    "timeout",
]

#: Env naming the ``toxiproxy-server`` binary to run (else the venv's, else ``PATH``'s).
SERVER_ENV = "TOXIPROXY_SERVER"
#: Toxiproxy's two directions: ``upstream`` is client → server, ``downstream`` server → client.
STREAMS = ("upstream", "downstream")


@dataclass(frozen=True)
class Toxic:
    """One toxic as Toxiproxy's API shows it (README "Toxic fields")."""

    type: str
    attributes: Mapping[str, int]
    stream: str = "downstream"
    toxicity: float = 1.0
    name: str = ""

    def __post_init__(self) -> None:
        if self.stream not in STREAMS:
            raise InvalidArgumentError(f"toxic stream {self.stream!r} is not one of {', '.join(STREAMS)}")
        if not 0.0 <= self.toxicity <= 1.0:
            raise InvalidArgumentError(f"toxicity {self.toxicity!r} out of range [0, 1]")
        if not self.name:  # Toxiproxy's own default name, so remove_toxic can find it
            object.__setattr__(self, "name", f"{self.type}_{self.stream}")

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "type": self.type,
            "stream": self.stream,
            "toxicity": self.toxicity,
            "attributes": dict(self.attributes),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Toxic:
        return cls(
            type=str(data["type"]),
            attributes=dict(data.get("attributes") or {}),
            stream=str(data["stream"]),
            toxicity=float(data["toxicity"]),
            name=str(data["name"]),
        )


def _non_negative(what: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidArgumentError(f"{what} {value!r} must be a non-negative integer")
    return value


def latency(
    latency_ms: int, jitter_ms: int = 0, *, stream: str = "downstream", toxicity: float = 1.0, name: str = ""
) -> Toxic:
    """Every chunk of data delayed by ``latency_ms`` ± ``jitter_ms``."""
    attributes = {
        "latency": _non_negative("latency_ms", latency_ms),
        "jitter": _non_negative("jitter_ms", jitter_ms),
    }
    return Toxic("latency", attributes, stream, toxicity, name)


def bandwidth(rate_kb_s: int, *, stream: str = "downstream", toxicity: float = 1.0, name: str = "") -> Toxic:
    """At most ``rate_kb_s`` kilobytes per second (0 lets nothing through)."""
    return Toxic("bandwidth", {"rate": _non_negative("rate_kb_s", rate_kb_s)}, stream, toxicity, name)


def reset_peer(
    timeout_ms: int = 0, *, stream: str = "downstream", toxicity: float = 1.0, name: str = ""
) -> Toxic:
    """Connections reset (TCP RST, "Connection reset by peer") at once or after ``timeout_ms``."""
    return Toxic("reset_peer", {"timeout": _non_negative("timeout_ms", timeout_ms)}, stream, toxicity, name)


def timeout(timeout_ms: int, *, stream: str = "downstream", toxicity: float = 1.0, name: str = "") -> Toxic:
    """Data swallowed; the connection closed after ``timeout_ms`` (0: held open, silent, until removed)."""
    return Toxic("timeout", {"timeout": _non_negative("timeout_ms", timeout_ms)}, stream, toxicity, name)


def slow_close(delay_ms: int, *, stream: str = "downstream", toxicity: float = 1.0, name: str = "") -> Toxic:
    """The socket's close delayed by ``delay_ms``."""
    return Toxic("slow_close", {"delay": _non_negative("delay_ms", delay_ms)}, stream, toxicity, name)


def limit_data(
    limit_bytes: int, *, stream: str = "downstream", toxicity: float = 1.0, name: str = ""
) -> Toxic:
    """The connection closed once ``limit_bytes`` have passed."""
    return Toxic("limit_data", {"bytes": _non_negative("limit_bytes", limit_bytes)}, stream, toxicity, name)


@dataclass(frozen=True)
class Proxy:
    """One proxy (README "Proxy fields"); ``listen`` is the address Toxiproxy actually bound."""

    name: str
    listen: str
    upstream: str
    enabled: bool = True
    toxics: tuple[Toxic, ...] = field(default=())

    @property
    def listen_port(self) -> int:
        return int(self.listen.rsplit(":", 1)[1])

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Proxy:
        return cls(
            name=str(data["name"]),
            listen=str(data["listen"]),
            upstream=str(data["upstream"]),
            enabled=bool(data["enabled"]),
            toxics=tuple(Toxic.from_json(t) for t in data.get("toxics") or ()),
        )


class ToxiproxyClient:
    """Toxiproxy's HTTP API at ``base_url`` (e.g. ``http://127.0.0.1:8474``); every call is bounded by
    ``timeout_s``, and an error answer raises :class:`FaultProxyError` with Toxiproxy's own message."""

    def __init__(self, base_url: str, timeout_s: float = 5.0) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme != "http" or not parsed.hostname or parsed.port is None:
            raise InvalidArgumentError(f"Toxiproxy base_url {base_url!r} must be http://HOST:PORT")
        if timeout_s <= 0:
            raise InvalidArgumentError(f"timeout_s {timeout_s!r} must be positive")
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s

    def _call(self, method: str, path: str, body: object = None) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(
            self.base_url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                payload = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")
            with contextlib.suppress(ValueError, AttributeError):
                detail = str(json.loads(detail)["error"])
            raise FaultProxyError(f"Toxiproxy {method} {path}: HTTP {exc.code}: {detail}") from exc
        except OSError as exc:  # URLError, refused, timed out
            raise FaultProxyError(f"Toxiproxy {method} {path} at {self.base_url}: {exc}") from exc
        if not payload:
            return None
        text = payload.decode("utf-8")
        try:
            return json.loads(text)
        except ValueError:
            return text  # GET /version answers plain text

    @staticmethod
    def _quoted(name: str) -> str:
        if not name:
            raise InvalidArgumentError("a proxy or toxic name must not be empty")
        return urllib.parse.quote(name, safe="")

    def version(self) -> str:
        answer = self._call("GET", "/version")
        if isinstance(answer, Mapping):  # 2.x answers {"version": "2.12.0"}
            return str(answer.get("version"))
        return str(answer).strip()

    def proxies(self) -> dict[str, Proxy]:
        return {name: Proxy.from_json(p) for name, p in self._call("GET", "/proxies").items()}

    def proxy(self, name: str) -> Proxy:
        return Proxy.from_json(self._call("GET", f"/proxies/{self._quoted(name)}"))

    def create_proxy(self, name: str, listen: str, upstream: str, *, enabled: bool = True) -> Proxy:
        """A new proxy; ``listen`` with port 0 lets Toxiproxy pick a free port (see ``Proxy.listen``)."""
        self._quoted(name)
        body = {"name": name, "listen": listen, "upstream": upstream, "enabled": enabled}
        return Proxy.from_json(self._call("POST", "/proxies", body))

    def delete_proxy(self, name: str) -> None:
        self._call("DELETE", f"/proxies/{self._quoted(name)}")

    def set_enabled(self, name: str, enabled: bool) -> Proxy:
        """Disabled: the proxy stops listening and drops its connections (README "down")."""
        return Proxy.from_json(self._call("POST", f"/proxies/{self._quoted(name)}", {"enabled": enabled}))

    def enable(self, name: str) -> Proxy:
        return self.set_enabled(name, True)

    def disable(self, name: str) -> Proxy:
        return self.set_enabled(name, False)

    def toxics(self, proxy: str) -> list[Toxic]:
        return [Toxic.from_json(t) for t in self._call("GET", f"/proxies/{self._quoted(proxy)}/toxics")]

    def add_toxic(self, proxy: str, toxic: Toxic) -> Toxic:
        return Toxic.from_json(self._call("POST", f"/proxies/{self._quoted(proxy)}/toxics", toxic.to_json()))

    def remove_toxic(self, proxy: str, name: str) -> None:
        self._call("DELETE", f"/proxies/{self._quoted(proxy)}/toxics/{self._quoted(name)}")

    def reset(self) -> None:
        """Every proxy enabled again and every toxic removed."""
        self._call("POST", "/reset")


def find_server() -> Path:
    """``$TOXIPROXY_SERVER``, else this Python's ``bin/toxiproxy-server`` (where the install script puts
    it), else the one on ``PATH``."""
    named = os.environ.get(SERVER_ENV, "").strip()
    if named:
        path = Path(named)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise FaultProxyError(f"{SERVER_ENV}={named!r} is not an executable file")
        return path
    venv = Path(sys.prefix) / "bin" / "toxiproxy-server"
    if venv.is_file() and os.access(venv, os.X_OK):
        return venv
    found = shutil.which("toxiproxy-server")
    if found:
        return Path(found)
    raise FaultProxyError(
        f"toxiproxy-server not found ({SERVER_ENV} unset, not in {venv.parent}, not on PATH): "
        "run scripts/ensure-toxiproxy.sh"
    )


class ToxiproxyServer:
    """``toxiproxy-server`` on ``127.0.0.1`` and a free port while the ``with`` block runs; ready once
    ``GET /version`` answers, which it waits for at most ``startup_timeout_s``."""

    HOST = "127.0.0.1"

    def __init__(self, binary: Path | None = None, *, startup_timeout_s: float = 20.0) -> None:
        if startup_timeout_s <= 0:
            raise InvalidArgumentError(f"startup_timeout_s {startup_timeout_s!r} must be positive")
        self._binary = binary
        self.startup_timeout_s = startup_timeout_s
        self._process: subprocess.Popen[bytes] | None = None
        self._log: Any = None
        self._client: ToxiproxyClient | None = None

    @property
    def client(self) -> ToxiproxyClient:
        if self._client is None:
            raise FaultProxyError("Toxiproxy server not started")
        return self._client

    def __enter__(self) -> ToxiproxyServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> ToxiproxyServer:
        if self._process is not None:
            return self
        binary = self._binary or find_server()
        for attempt in (1, 2):
            try:
                self._start_once(binary)
                return self
            except FaultProxyError as exc:
                # A port free a moment ago can be taken before the server binds it: one fresh try.
                if attempt == 2 or "address already in use" not in str(exc):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _start_once(self, binary: Path) -> None:
        port = free_ports(1, self.HOST)[0]
        # Toxiproxy logs every connection it proxies: a file, not a pipe nobody drains.
        self._log = tempfile.TemporaryFile(prefix="toxiproxy-")  # noqa: SIM115 - lives as long as the server
        self._process = subprocess.Popen(
            [str(binary), "-host", self.HOST, "-port", str(port)],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        client = ToxiproxyClient(f"http://{self.HOST}:{port}", timeout_s=5.0)
        deadline = time.monotonic() + self.startup_timeout_s
        last = "no answer yet"
        while True:
            code = self._process.poll()
            if code is not None:
                tail = self.log_tail()
                self.stop()
                raise FaultProxyError(f"toxiproxy-server {binary} exited with {code}: {tail}")
            try:
                client.version()
                self._client = client
                return
            except FaultProxyError as exc:
                last = str(exc)
            if time.monotonic() > deadline:
                self.stop()
                raise FaultProxyError(
                    f"toxiproxy-server not ready after {self.startup_timeout_s:.0f}s: {last}"
                )
            time.sleep(0.1)

    def log_tail(self, limit: int = 2000) -> str:
        if self._log is None:
            return ""
        self._log.seek(0, os.SEEK_END)
        size = self._log.tell()
        self._log.seek(max(0, size - limit))
        return str(self._log.read().decode("utf-8", "replace"))

    def stop(self) -> None:
        process, self._process, self._client = self._process, None, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(10.0)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10.0)
        if self._log is not None:
            self._log.close()
            self._log = None
