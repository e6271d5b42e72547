"""kafka-python's encoding of the commit connection's requests and decoding of their answers, with what
repeats between two exchanges on one connection done once.

A synchronous commit on an idle connection is one exchange on the calling thread (``commit_connection``),
and the Python it runs is what it costs beyond the broker's round trip. kafka-python encodes a request
with its header and frame in one call (``ApiMessage.encode(framed=True, header=True)``) and decodes an
answer the same way; measured in place, after the thread woke up for the answer, the two took ~110 and
~95 µs of a commit (docs/performance.md, "Encoded and decoded once"). Most of that repeats:

- the request header differs from the last one only in its correlation id. The ids of a connection's
  exchanges cycle through :data:`CORRELATION_IDS` values, and kafka-python's encoding of the request
  header and of the response header of each id is kept. A request is then kafka-python's encoding of
  its body (``encode()``), after the kept header, framed by kafka-python's ``Int32``, as
  ``ApiMessage.encode`` frames it;
- an answer that accepts the same partitions is the same bytes each time but for its correlation id.
  An answer whose header is the kept encoding of the expected response header, and whose bytes after it
  are those of an answer kafka-python decoded before with no error and no throttle, *is* that answer
  (decoding is a function of the bytes); :data:`KEPT_ANSWERS` of those are kept. Anything else — another
  correlation id, an error code, a throttle, a tagged field — is decoded by kafka-python in full, and a
  correlation id that is not the request's raises kafka-python's ``CorrelationIdError``.

No byte is written or read here by hand: every byte sent is kafka-python's encoding, every answer is
compared with kafka-python's encoding or decoded by kafka-python.
"""

from __future__ import annotations

from typing import Any

from kafka import errors as kafka_errors
from kafka.protocol.schemas.fields.codecs import Int32

__all__ = ["CORRELATION_IDS", "KEPT_ANSWERS", "ExchangeCodec", "accepted", "partition_error"]

#: Correlation ids one connection's exchanges cycle through (1..this); the headers of each are kept.
#: One request is in flight at a time on such a connection, and it is closed when an answer does not
#: come, so an answer of an earlier exchange cannot arrive: the id still tells a misplaced answer apart.
CORRELATION_IDS = 64
#: Decoded answers with no error and no throttle kept per connection (one per set of partitions).
KEPT_ANSWERS = 64


def partition_error(response: Any) -> bool:
    """An OffsetCommit answer with an error for some partition."""
    return any(p.error_code for t in response.topics for p in t.partitions)


def accepted(response: Any) -> bool:
    """An OffsetCommit answer with no error for any partition and no throttle."""
    return not getattr(response, "throttle_time_ms", 0) and not partition_error(response)


class ExchangeCodec:
    """Requests encoded and answers decoded for one connection (see the module docstring)."""

    def __init__(self, client_id: str) -> None:
        self._client_id = client_id
        self._correlation_id = 0
        #: (request class, correlation id) -> kafka-python's request header, response header, and
        #: the response class
        self._headers: dict[tuple[type, int], tuple[bytes, bytes, Any]] = {}
        #: (response class, answer bytes after the header) -> the answer kafka-python decoded
        self._answers: dict[tuple[type, bytes], Any] = {}
        self.answers_decoded = 0  # observable: answers kafka-python decoded in full

    def next_correlation_id(self) -> int:
        self._correlation_id = self._correlation_id % CORRELATION_IDS + 1
        return self._correlation_id

    def encode(self, request: Any, correlation_id: int) -> bytes:
        """``request`` (a kafka-python request of a set version) framed, with its header."""
        request_header = self._headers_of(request, correlation_id)[0]
        body: bytes = request.encode()
        return bytes(Int32.encode(len(request_header) + len(body))) + request_header + body

    def decode(self, frame: bytes, request: Any, correlation_id: int) -> tuple[Any, bool]:
        """The answer in ``frame`` (framed, with its header) to ``request`` sent with
        ``correlation_id``, and whether it is one decoded before (error-free and not throttled)."""
        _, expected_header, response_cls = self._headers_of(request, correlation_id)
        body_start = 4 + len(expected_header)
        key = (response_cls, frame[body_start:]) if frame[4:body_start] == expected_header else None
        if key is not None:
            kept = self._answers.get(key)
            if kept is not None:
                return kept, True
        response = response_cls.decode(frame, header=True, framed=True)
        self.answers_decoded += 1
        if response.header.correlation_id != correlation_id:
            raise kafka_errors.CorrelationIdError(
                f"Correlation IDs do not match: sent {correlation_id}, recv {response.header.correlation_id}"
            )
        if key is not None and accepted(response):
            if len(self._answers) >= KEPT_ANSWERS:
                self._answers.clear()  # other partition sets': decoded again when they come back
            self._answers[key] = response
        return response, False

    def _headers_of(self, request: Any, correlation_id: int) -> tuple[bytes, bytes, Any]:
        key = (type(request), correlation_id)
        headers = self._headers.get(key)
        if headers is None:
            version = request.API_VERSION
            request.with_header(correlation_id=correlation_id, client_id=self._client_id)
            response_cls = request.header.get_response_class()
            response_header = response_cls.header_class(correlation_id=correlation_id)
            headers = self._headers[key] = (
                bytes(request.encode_header(flexible=request.flexible_version_q(version))),
                bytes(response_header.encode(flexible=response_cls.flexible_version_q(version))),
                response_cls,
            )
        return headers
