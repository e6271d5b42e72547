"""Per-broker controls of a running :class:`~kafka_placement.testing.cluster.KafkaCluster`: stop,
kill and restart one broker, and read what its container did (state, exit code, logs)."""

from __future__ import annotations

import contextlib
import signal
import time
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafka_placement.errors import ClusterError
from kafka_placement.testing.probe import redact, transient_errors


class BrokerControls:
    """Mixed into ``KafkaCluster``, which provides the attributes declared here."""

    _containers: dict[int, Any]  # node id → docker-py container
    _racks: dict[int, str]
    _stopped: set[int]  # brokers deliberately stopped/killed (not a failure)
    _owner: bool
    _log: Callable[[str], None]

    if typing.TYPE_CHECKING:

        @property
        def broker_ids(self) -> list[int]: ...

        def describe(self, timeout_s: float = 5.0) -> dict[int, str | None]: ...

    def _check_running(self, nodes: list[int] | None = None) -> None:
        if not self._owner:
            return  # a shared cluster: someone else may be restarting a broker right now
        for node in nodes if nodes is not None else list(self._containers):
            c = self._containers.get(node)
            if c is None or node in self._stopped:
                continue
            c.reload()
            if c.status in ("exited", "dead"):
                full = c.logs().decode(errors="replace").splitlines()
                bind = [line.strip() for line in full if "Address already in use" in line][:1]
                raise ClusterError(
                    f"node {node} ({c.name}) exited with {c.attrs['State'].get('ExitCode')}"
                    + (f": {bind[0]}" if bind else "")
                    + self._logs_tail([node])
                )

    def _logs_tail(self, nodes: list[int] | None = None, lines: int = 12) -> str:
        out = []
        for node in nodes if nodes is not None else sorted(self._containers):
            with contextlib.suppress(Exception):
                text = redact(self._containers[node].logs(tail=lines).decode(errors="replace"))
                out.append(f"\n--- last {lines} log lines of node {node} ---\n{text}")
        return "".join(out)

    def node_logs(self, lines: int = 200_000) -> dict[str, str]:
        """Each node's last ``lines`` log lines (secrets redacted), by node name (``broker-<id>``,
        ``controller``). A node whose logs cannot be read gets one line saying why: a soak's report must
        not fail for want of a log."""
        logs = {}
        for node, container in sorted(self._containers.items()):
            name = "controller" if node not in self._racks else f"broker-{node}"
            try:
                logs[name] = redact(container.logs(tail=lines).decode(errors="replace"))
            except Exception as exc:
                logs[name] = f"(the logs of node {node} could not be read: {type(exc).__name__}: {exc})\n"
        return logs

    def write_logs(
        self, directory: Path, lines: int = 200_000, logs: dict[str, str] | None = None
    ) -> list[Path]:
        """:meth:`node_logs` (or ``logs``, read before) to ``directory/<node>.log`` (``broker-<id>.log``,
        ``controller.log``); the files written."""
        directory.mkdir(parents=True, exist_ok=True)
        written = []
        for name, text in (logs if logs is not None else self.node_logs(lines)).items():
            path = directory / f"{name}.log"
            path.write_text(text)
            written.append(path)
        return written

    # ------------------------------------------------------------------ broker controls
    def stop_broker(self, broker_id: int, timeout_s: int = 60) -> None:
        """Graceful stop (SIGTERM → controlled shutdown); returns when the container has exited."""
        c = self._broker_container(broker_id)
        self._stopped.add(broker_id)
        c.stop(timeout=timeout_s)
        # After a controlled shutdown the controller fences the broker at once; wait for that so
        # callers see a consistent cluster view.
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline:
            try:
                if broker_id not in self.describe(5.0):
                    break
            except transient_errors():
                pass
            time.sleep(0.3)
        self._log(f"broker {broker_id} stopped (graceful)")

    def kill_broker(self, broker_id: int) -> None:
        """SIGKILL the broker's JVM: no controlled shutdown. A container already on its way out is
        killed too: the engine refuses the signal ("Cannot kill container: … PID … is zombie", seen
        in a soak) when its process has just died, so a refusal is accepted once the container is
        found exited; any other refusal is raised."""
        from docker.errors import APIError

        c = self._broker_container(broker_id)
        self._stopped.add(broker_id)
        try:
            c.kill(signal=int(signal.SIGKILL))
        except APIError as refused:
            # exited meanwhile, or the refusal was something else: then the engine's timeout on the
            # wait must not hide it
            with contextlib.suppress(Exception):
                c.wait(timeout=30)
            c.reload()
            if c.status not in ("exited", "dead"):
                raise refused from None
            self._log(f"broker {broker_id} was exiting already (the engine refused SIGKILL)")
            return
        c.wait(timeout=30)
        self._log(f"broker {broker_id} killed (SIGKILL)")

    def pause_broker(self, broker_id: int) -> None:
        """Freeze every process of the broker's container (the cgroup freezer: like SIGSTOP, undone by
        :meth:`resume_broker`); its connections stay open and silent."""
        self._broker_container(broker_id).pause()
        self._stopped.add(broker_id)
        self._log(f"broker {broker_id} paused")

    def resume_broker(self, broker_id: int) -> None:
        self._broker_container(broker_id).unpause()
        self._stopped.discard(broker_id)
        self._log(f"broker {broker_id} resumed")

    def start_broker(self, broker_id: int, timeout_s: float = 120.0) -> None:
        """Start a stopped/killed broker again; returns when describe_cluster lists it with its rack."""
        c = self._broker_container(broker_id)
        t0 = time.monotonic()
        c.reload()
        if c.status == "running":
            started_since = None  # already running: only wait until it is listed
        else:
            started_since = int(time.time()) - 1
            c.start()
        self._stopped.discard(broker_id)
        if started_since is not None:
            # describe_cluster may still list a killed broker until its session expires, so first
            # wait for the new JVM to log that it started, then for it to be listed (unfenced).
            self._wait_log(broker_id, "Kafka Server started", started_since, timeout_s)
        self._wait_broker_listed(broker_id, max(5.0, timeout_s - (time.monotonic() - t0)))
        self._log(f"broker {broker_id} back in {time.monotonic() - t0:.1f}s")

    def broker_logs(
        self, broker_id: int, tail: int | None = None, *, since: float | None = None, timestamps: bool = False
    ) -> str:
        """The broker container's output (all of it, the last ``tail`` lines, or those logged from ``since``,
        epoch seconds); ``timestamps``: each line prefixed by the engine's RFC 3339 receipt time (the
        host's clock, unlike the broker's own local-time stamps)."""
        c = self._broker_container(broker_id)
        kwargs: dict[str, Any] = {"tail": tail if tail is not None else "all", "timestamps": timestamps}
        if since is not None:
            kwargs["since"] = int(since)
        return str(c.logs(**kwargs).decode(errors="replace"))

    def broker_exit_code(self, broker_id: int) -> int | None:
        """Exit code of a stopped/killed broker container (None while it runs)."""
        c = self._broker_container(broker_id)
        c.reload()
        if c.status == "running":
            return None
        return int(c.attrs["State"]["ExitCode"])

    def broker_pid(self, broker_id: int) -> int | None:
        """Host pid of the broker container's first process (its cgroups are the container's; the soak's
        network partition reads them); None while the container does not run."""
        c = self._broker_container(broker_id)
        c.reload()
        pid = int(c.attrs["State"].get("Pid") or 0)
        return pid if c.status == "running" and pid > 0 else None

    def not_running_brokers(self) -> list[int]:
        """Broker ids whose container is not running right now."""
        return [b for b in self.broker_ids if not self.broker_running(b)]

    def broker_running(self, broker_id: int) -> bool:
        c = self._broker_container(broker_id)
        c.reload()
        return bool(c.status == "running")

    def _wait_log(self, node: int, needle: str, since: int, timeout_s: float) -> None:
        c = self._containers[node]
        deadline = time.monotonic() + timeout_s
        while True:
            self._check_running([node])
            if needle in c.logs(since=since).decode(errors="replace"):
                return
            if time.monotonic() > deadline:
                raise ClusterError(
                    f"node {node} did not log {needle!r} within {timeout_s:.0f}s" + self._logs_tail([node])
                )
            time.sleep(0.3)

    def _wait_broker_listed(self, broker_id: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        last: object = "no answer yet"
        while True:
            self._check_running([broker_id])
            try:
                seen = self.describe(5.0)
                if seen.get(broker_id) == self._racks[broker_id]:
                    return
                last = f"describe_cluster lists {dict(sorted(seen.items()))}"
            except transient_errors() as exc:
                last = f"{type(exc).__name__}: {exc}"
            if time.monotonic() > deadline:
                raise ClusterError(
                    f"broker {broker_id} not back after {timeout_s:.0f}s: {last}"
                    + self._logs_tail([broker_id])
                )
            time.sleep(0.5)

    def _broker_container(self, broker_id: int) -> Any:
        if broker_id not in self._racks:
            raise KeyError(f"broker id {broker_id} not in {self.broker_ids}")
        try:
            return self._containers[broker_id]
        except KeyError:
            raise ClusterError("cluster not started") from None
