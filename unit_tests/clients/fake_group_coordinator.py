"""A stand-in group coordinator on a local socket: answers ApiVersions and OffsetCommit, every message
decoded and encoded by kafka-python's own protocol classes (no bytes written by hand)."""

from __future__ import annotations

import contextlib
import io
import socket
import threading
import time
from typing import Any

from kafka.protocol.api_header import RequestHeader
from kafka.protocol.consumer import OffsetCommitRequest, OffsetCommitResponse
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse
from kafka.protocol.schemas.fields.codecs import Int32

_REQUESTS = {ApiVersionsRequest.API_KEY: ApiVersionsRequest, OffsetCommitRequest.API_KEY: OffsetCommitRequest}


class FakeGroupCoordinator:
    """Serves one connection at a time on 127.0.0.1. ``error_code`` is the OffsetCommit answer for every
    partition (0 = accepted); ``commits`` the decoded OffsetCommit requests received; ``silent`` makes it
    read requests and never answer; ``split_answer_s`` sends each OffsetCommit answer in two pieces
    that far apart; ``throttle_ms`` is the throttle time every OffsetCommit answer carries;
    ``correlation_shift`` is added to the correlation id of every OffsetCommit answer (an answer to
    another request)."""

    def __init__(self, error_code: int = 0, offset_commit_max_version: int = 8) -> None:
        self.error_code = error_code
        self.silent = False
        self.split_answer_s: float | None = None
        self.throttle_ms = 0
        self.correlation_shift = 0
        self.max_version = offset_commit_max_version
        self.commits: list[Any] = []
        self.commit_versions: list[int] = []
        self.connections = 0
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._server.getsockname()[1]
        self._open: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            self.connections += 1
            self._open.append(conn)
            threading.Thread(target=self._talk, args=(conn,), daemon=True).start()

    def _talk(self, conn: socket.socket) -> None:
        try:
            while (size := self._read(conn, 4)) is not None:
                payload = self._read(conn, Int32.decode(io.BytesIO(size)))
                if payload is None:
                    return
                header = RequestHeader.decode(io.BytesIO(payload), flexible=False)
                api_key, version = header.request_api_key, header.request_api_version
                request = _REQUESTS[api_key].decode(payload, version=version, header=True)
                if api_key == OffsetCommitRequest.API_KEY:
                    self.commits.append(request)
                    self.commit_versions.append(version)
                    if self.silent:
                        continue
                    response = self._offset_commit_response(request)
                else:
                    response = self._api_versions_response()
                response.API_VERSION = version
                shift = self.correlation_shift if api_key == OffsetCommitRequest.API_KEY else 0
                response.with_header(correlation_id=header.correlation_id + shift)
                answer = response.encode(header=True, framed=True)
                if self.split_answer_s is not None and api_key == OffsetCommitRequest.API_KEY:
                    conn.sendall(answer[:6])
                    time.sleep(self.split_answer_s)
                    answer = answer[6:]
                conn.sendall(answer)
        except OSError:
            return

    @staticmethod
    def _read(conn: socket.socket, n: int) -> bytes | None:
        data = b""
        while len(data) < n:
            chunk = conn.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    def _api_versions_response(self) -> Any:
        keys = [
            ApiVersionsResponse.ApiVersion(api_key=ApiVersionsRequest.API_KEY, min_version=0, max_version=4),
            ApiVersionsResponse.ApiVersion(
                api_key=OffsetCommitRequest.API_KEY, min_version=0, max_version=self.max_version
            ),
        ]
        return ApiVersionsResponse(error_code=0, api_keys=keys, throttle_time_ms=0)

    def _offset_commit_response(self, request: Any) -> Any:
        topic_cls = OffsetCommitResponse.OffsetCommitResponseTopic
        partition_cls = topic_cls.OffsetCommitResponsePartition
        return OffsetCommitResponse(
            throttle_time_ms=self.throttle_ms,
            topics=[
                topic_cls(
                    name=t.name,
                    partitions=[
                        partition_cls(partition_index=p.partition_index, error_code=self.error_code)
                        for p in t.partitions
                    ],
                )
                for t in request.topics
            ],
        )

    def drop_connections(self) -> None:
        """Close every accepted connection (a broker restart, as the client sees it)."""
        for conn in self._open:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()
        self._open.clear()

    def close(self) -> None:
        self._server.close()
        self.drop_connections()
