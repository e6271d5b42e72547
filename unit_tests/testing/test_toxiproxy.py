"""The Toxiproxy client and server manager against the real ``toxiproxy-server`` (installed by
scripts/ensure-toxiproxy.sh) in front of an echo server on loopback; effects measured on the wire."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_placement.errors import FaultProxyError, InvalidArgumentError, InvalidBrokerError
from kafka_placement.testing import toxiproxy
from kafka_placement.testing.fault_proxy import ClusterFaults
from kafka_placement.testing.ports import loopback_server
from kafka_placement.testing.toxiproxy import (
    Toxic,
    ToxiproxyClient,
    ToxiproxyServer,
    bandwidth,
    latency,
    limit_data,
    reset_peer,
    slow_close,
    timeout,
)


@pytest.fixture(scope="module")
def echo_port() -> Iterator[int]:
    def echo(conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            while data := conn.recv(65536):
                conn.sendall(data)

    with loopback_server(echo) as port:
        yield port


@pytest.fixture(scope="module")
def server() -> Iterator[ToxiproxyServer]:
    with ToxiproxyServer() as running:
        yield running


@pytest.fixture()
def proxy_port(server: ToxiproxyServer, echo_port: int) -> Iterator[int]:
    proxy = server.client.create_proxy("echo", "127.0.0.1:0", f"127.0.0.1:{echo_port}")
    yield proxy.listen_port
    server.client.delete_proxy("echo")


def _round_trip(port: int, payload: bytes = b"ping", timeout_s: float = 10.0) -> tuple[bytes, float]:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as conn:
        started = time.monotonic()
        conn.sendall(payload)
        received = b""
        while len(received) < len(payload):
            chunk = conn.recv(65536)
            if not chunk:
                break
            received += chunk
        return received, time.monotonic() - started


def test_server_reports_the_pinned_version(server: ToxiproxyServer) -> None:
    assert server.client.version() == "2.12.0"  # scripts/ensure-toxiproxy.sh's pin


def test_proxy_listens_on_a_port_it_picked_and_passes_bytes(server: ToxiproxyServer, proxy_port: int) -> None:
    assert server.client.proxy("echo").listen == f"127.0.0.1:{proxy_port}"
    assert _round_trip(proxy_port)[0] == b"ping"


def test_latency_delays_each_answer(server: ToxiproxyServer, proxy_port: int) -> None:
    added = server.client.add_toxic("echo", latency(400, 0))
    assert added == Toxic("latency", {"latency": 400, "jitter": 0}, "downstream", 1.0, "latency_downstream")
    data, took = _round_trip(proxy_port)
    assert data == b"ping" and took >= 0.39
    server.client.remove_toxic("echo", added.name)
    assert server.client.toxics("echo") == []


def test_bandwidth_limits_the_rate(server: ToxiproxyServer, proxy_port: int) -> None:
    server.client.add_toxic("echo", bandwidth(50))  # 50 KB/s: 40 KB take at least ~0.8 s
    data, took = _round_trip(proxy_port, b"x" * 40_000)
    assert len(data) == 40_000 and took >= 0.6


def test_reset_peer_resets_on_the_first_bytes(server: ToxiproxyServer, proxy_port: int) -> None:
    server.client.add_toxic("echo", reset_peer(stream="upstream"))
    with pytest.raises(ConnectionResetError):
        _round_trip(proxy_port)


def test_timeout_swallows_data_then_closes(server: ToxiproxyServer, proxy_port: int) -> None:
    server.client.add_toxic("echo", timeout(500))
    data, took = _round_trip(proxy_port)
    assert data == b"" and took >= 0.45  # nothing came back; closed after the timeout


def test_limit_data_closes_after_that_many_bytes(server: ToxiproxyServer, proxy_port: int) -> None:
    server.client.add_toxic("echo", limit_data(3))
    assert _round_trip(proxy_port, b"abcdef")[0] == b"abc"


def test_slow_close_is_accepted_with_its_delay(server: ToxiproxyServer, proxy_port: int) -> None:
    added = server.client.add_toxic("echo", slow_close(250, name="slow"))
    assert added.attributes == {"delay": 250} and added.name == "slow"
    assert _round_trip(proxy_port)[0] == b"ping"


def test_disabled_proxy_refuses_then_enabled_passes_again(server: ToxiproxyServer, proxy_port: int) -> None:
    assert not server.client.disable("echo").enabled
    with pytest.raises(ConnectionRefusedError):
        _round_trip(proxy_port)
    assert server.client.enable("echo").enabled
    assert _round_trip(proxy_port)[0] == b"ping"


def test_api_errors_carry_toxiproxys_message(server: ToxiproxyServer, proxy_port: int) -> None:
    with pytest.raises(FaultProxyError, match="HTTP 404: toxic not found"):
        server.client.remove_toxic("echo", "nope")
    with pytest.raises(FaultProxyError, match="HTTP 409: proxy already exists"):
        server.client.create_proxy("echo", "127.0.0.1:0", "127.0.0.1:9")
    with pytest.raises(FaultProxyError, match="HTTP 404: proxy not found"):
        server.client.proxy("missing")


def test_cluster_faults_per_broker_removed_after_the_block(server: ToxiproxyServer, echo_port: int) -> None:
    faults = ClusterFaults(server.client, "unit")
    ports = faults.create_proxies({0: echo_port, 1: echo_port})
    try:
        with faults.toxic(latency(300), brokers=[1]):
            assert _round_trip(ports[0])[1] < 0.29
            assert _round_trip(ports[1])[1] >= 0.29
            assert [t.name for t in faults.proxy(1).toxics] == ["latency_downstream"]
        assert faults.proxy(1).toxics == ()
        with pytest.raises(InvalidBrokerError, match="broker id 7 has no proxy"):
            faults.add(latency(1), brokers=[7])
    finally:
        faults.delete_proxies()
    assert "unit-broker-0" not in server.client.proxies()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: latency(-1), "latency_ms -1 must be a non-negative integer"),
        (lambda: bandwidth(1.5), "rate_kb_s 1.5 must be a non-negative integer"),  # type: ignore[arg-type]
        (lambda: reset_peer(stream="sideways"), "toxic stream 'sideways' is not one of upstream, downstream"),
        (lambda: timeout(1, toxicity=1.5), r"toxicity 1.5 out of range \[0, 1\]"),
        (lambda: ToxiproxyClient("localhost:8474"), "base_url 'localhost:8474' must be http://HOST:PORT"),
    ],
)
def test_bad_input_names_the_value(make: object, message: str) -> None:
    with pytest.raises(InvalidArgumentError, match=message):
        make()  # type: ignore[operator]


def test_a_missing_binary_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(toxiproxy.SERVER_ENV, str(tmp_path / "absent"))
    with pytest.raises(FaultProxyError, match="is not an executable file"):
        toxiproxy.find_server()


def test_a_server_that_exits_fails_with_its_output(tmp_path: Path) -> None:
    fake = tmp_path / "toxiproxy-server"
    fake.write_text("#!/bin/sh\necho 'bind: permission denied' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(FaultProxyError, match="exited with 3: bind: permission denied"):
        ToxiproxyServer(fake, startup_timeout_s=5).start()
