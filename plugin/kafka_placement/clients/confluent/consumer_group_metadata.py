"""confluent-kafka's consumer group metadata for *our* group, written by librdkafka itself.

confluent-kafka passes consumer group metadata as ``bytes``: ``Consumer.consumer_group_metadata()``
returns what librdkafka's ``rd_kafka_consumer_group_metadata_write()`` wrote, and
``Producer.send_offsets_to_transaction()`` reads it back with
``rd_kafka_consumer_group_metadata_read()`` (``c_cgmd_to_py`` / ``py_to_c_cgmd`` in the binding's
``confluent_kafka.c``, 2.13 to 2.16). Our group's membership is kafka-python's, so librdkafka's
consumer handle does not know the generation; the bytes are made here from kafka-python's
generation and member id by librdkafka's own public C functions
(``rd_kafka_consumer_group_metadata_new_with_genid`` + ``_write``), called through ctypes on the
very librdkafka the installed ``confluent_kafka`` loaded — never by a serialiser of ours — and read
back by its ``_read`` (which accepts printable ASCII names only) before they are handed out.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os
from dataclasses import dataclass

from kafka_placement.errors import CommitFailedError, ConsumerGroupError

__all__ = ["GroupMetadata", "librdkafka_group_metadata", "member_group_metadata", "read_group_metadata"]


@dataclass(frozen=True)
class GroupMetadata:
    """What a consumer group metadata blob carries (the transactional offset commit's fencing)."""

    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None


class _Cgmd(ctypes.Structure):
    """librdkafka's opaque ``rd_kafka_consumer_group_metadata_t`` (only pointers to it are used)."""


_CgmdP = ctypes.POINTER(_Cgmd)


def _candidate_paths() -> list[str]:
    """The binding's extension first (``dlsym`` through its handle searches the librdkafka it is
    linked with, Linux and macOS), then the librdkafka bundled in the wheel (Windows)."""
    from confluent_kafka import cimpl

    package = os.path.dirname(os.path.dirname(os.path.abspath(cimpl.__file__)))
    bundled = [
        *glob.glob(os.path.join(package, "confluent_kafka.libs", "librdkafka*")),
        *glob.glob(os.path.join(package, "confluent_kafka", ".dylibs", "librdkafka*")),
        *glob.glob(os.path.join(package, "confluent_kafka", "librdkafka*")),
    ]
    return [str(cimpl.__file__), *sorted(bundled)]


@functools.lru_cache(maxsize=1)
def _librdkafka() -> ctypes.CDLL:
    """librdkafka as loaded by confluent_kafka, with the signatures of the functions used here."""
    import confluent_kafka

    wanted = confluent_kafka.libversion()[1]
    tried: list[str] = []
    for path in _candidate_paths():
        try:
            lib = ctypes.CDLL(path)
            version = lib.rd_kafka_version
        except (OSError, AttributeError) as exc:
            tried.append(f"{path}: {exc}")
            continue
        version.restype = ctypes.c_int
        if version() != wanted:  # another librdkafka may write another format: never mix them
            tried.append(f"{path}: librdkafka {version():#x}, confluent_kafka uses {wanted:#x}")
            continue
        try:
            _declare(lib)
        except AttributeError as exc:
            tried.append(f"{path}: {exc}")
            continue
        return lib
    raise ConsumerGroupError(
        "consumer_group_metadata(): librdkafka's consumer group metadata functions were not found "
        f"in the librdkafka of confluent_kafka {confluent_kafka.version()[0]} "
        f"(librdkafka {confluent_kafka.libversion()[0]}); tried: {'; '.join(tried) or 'nothing'}"
    )


def _declare(lib: ctypes.CDLL) -> None:
    error_p = ctypes.c_void_p  # rd_kafka_error_t *
    lib.rd_kafka_consumer_group_metadata_new_with_genid.argtypes = [
        ctypes.c_char_p,
        ctypes.c_int32,
        ctypes.c_char_p,
        ctypes.c_char_p,
    ]
    lib.rd_kafka_consumer_group_metadata_new_with_genid.restype = _CgmdP
    lib.rd_kafka_consumer_group_metadata_destroy.argtypes = [_CgmdP]
    lib.rd_kafka_consumer_group_metadata_destroy.restype = None
    lib.rd_kafka_consumer_group_metadata_write.argtypes = [
        _CgmdP,
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.POINTER(ctypes.c_size_t),
    ]
    lib.rd_kafka_consumer_group_metadata_write.restype = error_p
    lib.rd_kafka_consumer_group_metadata_read.argtypes = [
        ctypes.POINTER(_CgmdP),
        ctypes.c_char_p,
        ctypes.c_size_t,
    ]
    lib.rd_kafka_consumer_group_metadata_read.restype = error_p
    for getter in ("group_id", "member_id", "group_instance_id"):
        fn = getattr(lib, f"rd_kafka_consumer_group_metadata_{getter}")
        fn.argtypes, fn.restype = [_CgmdP], ctypes.c_char_p
    lib.rd_kafka_consumer_group_metadata_generation_id.argtypes = [_CgmdP]
    lib.rd_kafka_consumer_group_metadata_generation_id.restype = ctypes.c_int32
    lib.rd_kafka_mem_free.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.rd_kafka_mem_free.restype = None
    lib.rd_kafka_error_string.argtypes = [error_p]
    lib.rd_kafka_error_string.restype = ctypes.c_char_p
    lib.rd_kafka_error_destroy.argtypes = [error_p]
    lib.rd_kafka_error_destroy.restype = None


def _raise_error(lib: ctypes.CDLL, error: int, what: str) -> None:
    message = (lib.rd_kafka_error_string(error) or b"").decode("utf-8", "replace")
    lib.rd_kafka_error_destroy(error)
    raise ConsumerGroupError(f"{what}: librdkafka: {message}")


def _encode(name: str, value: str | None) -> bytes | None:
    if value is None:
        return None
    if not isinstance(value, str) or "\x00" in value:
        raise ConsumerGroupError(
            f"consumer group metadata: {name} must be a string without NUL, got {value!r}"
        )
    return value.encode("utf-8")


def member_group_metadata(
    group_id: str, generation_id: int, member_id: str, group_instance_id: str | None, *, lost: bool
) -> bytes:
    """:func:`librdkafka_group_metadata` for a member in a generation (kafka-python's ``generation_id``,
    ``member_id`` and ``group_instance_id``; ``lost``: the member knows it lost its membership).

    Raises :class:`~kafka_placement.errors.CommitFailedError` while the member is not in a generation
    (before it has joined, after ``on_lost`` until its next assignment): generation -1 with no member id
    is accepted by the broker for a transactional commit even while the group has members (Kafka's
    ``ClassicGroup.validateOffsetCommit``), so handing it out would skip the fencing."""
    if lost or generation_id < 0 or not member_id:
        raise CommitFailedError(
            f"group {group_id}: consumer_group_metadata(): this member is not in a generation "
            f"(generation {generation_id}, member id {member_id!r}); "
            "abort the transaction and wait for the next assignment"
        )
    return librdkafka_group_metadata(GroupMetadata(group_id, generation_id, member_id, group_instance_id))


def librdkafka_group_metadata(group: GroupMetadata) -> bytes:
    """The bytes ``Producer.send_offsets_to_transaction`` takes, carrying ``group``'s generation,
    member id and instance id (so the broker fences a member that is no longer in the group)."""
    if not -(2**31) <= group.generation_id < 2**31:
        raise ConsumerGroupError(
            f"consumer group metadata: generation_id {group.generation_id} is outside the int32 range"
        )
    group_id, member_id = _encode("group_id", group.group_id), _encode("member_id", group.member_id)
    instance_id = _encode("group_instance_id", group.group_instance_id)
    lib = _librdkafka()
    cgmd = lib.rd_kafka_consumer_group_metadata_new_with_genid(
        group_id, group.generation_id, member_id, instance_id
    )
    if not cgmd:
        raise ConsumerGroupError(f"consumer group metadata: librdkafka could not create it for {group!r}")
    try:
        buffer, size = ctypes.c_void_p(), ctypes.c_size_t()
        error = lib.rd_kafka_consumer_group_metadata_write(cgmd, ctypes.byref(buffer), ctypes.byref(size))
        if error:
            _raise_error(lib, error, "consumer group metadata")
        try:
            blob = ctypes.string_at(buffer, size.value)
        finally:
            lib.rd_kafka_mem_free(None, buffer)
    finally:
        lib.rd_kafka_consumer_group_metadata_destroy(cgmd)
    # librdkafka's reader (the one send_offsets_to_transaction uses) takes printable ASCII only:
    # refuse here, naming the value, rather than from inside the transaction
    try:
        carried = read_group_metadata(blob)
    except ConsumerGroupError as exc:
        raise ConsumerGroupError(f"consumer group metadata for {group!r} cannot be carried: {exc}") from None
    if carried != group:
        raise ConsumerGroupError(f"consumer group metadata: librdkafka reads back {carried!r} for {group!r}")
    return blob


def read_group_metadata(blob: bytes) -> GroupMetadata:
    """What librdkafka reads from ``blob`` (its own ``_read`` and getters): what
    ``send_offsets_to_transaction`` will send."""
    if not isinstance(blob, bytes):
        raise ConsumerGroupError(f"consumer group metadata must be bytes, got {type(blob).__name__}")
    lib = _librdkafka()
    cgmd = _CgmdP()
    error = lib.rd_kafka_consumer_group_metadata_read(ctypes.byref(cgmd), blob, len(blob))
    if error:
        _raise_error(lib, error, "consumer group metadata not readable")
    try:
        instance = lib.rd_kafka_consumer_group_metadata_group_instance_id(cgmd)
        return GroupMetadata(
            group_id=(lib.rd_kafka_consumer_group_metadata_group_id(cgmd) or b"").decode("utf-8"),
            generation_id=int(lib.rd_kafka_consumer_group_metadata_generation_id(cgmd)),
            member_id=(lib.rd_kafka_consumer_group_metadata_member_id(cgmd) or b"").decode("utf-8"),
            group_instance_id=None if instance is None else instance.decode("utf-8"),
        )
    finally:
        lib.rd_kafka_consumer_group_metadata_destroy(cgmd)
