"""Typed errors. Every message names the bad value and, where there is one, the allowed range.

Where Kafka has an exception for the same condition, the class name mirrors it (``…Error`` for
``…Exception``) and the message is Kafka's text to the letter.
"""

from __future__ import annotations


class KafkaPlacementError(Exception):
    """Base class of every error this package raises on purpose."""


class InvalidArgumentError(KafkaPlacementError, ValueError):
    """An argument outside its allowed values."""


class KeyTypeError(KafkaPlacementError, TypeError):
    """A record key that is not bytes (we never ``str()`` a key silently)."""


# --- key -> partition -------------------------------------------------------------------------
class InvalidPartitionError(InvalidArgumentError):
    """An explicit partition not an int in [0, num_partitions - 1] (Java: IllegalArgumentException)."""


class UnknownSchemeError(InvalidArgumentError):
    """A partitioner scheme name we do not know."""


class UnknownTopicError(KafkaPlacementError, LookupError):
    """A topic the cluster metadata does not know."""


# --- partition -> consumer --------------------------------------------------------------------
class UnknownStrategyError(InvalidArgumentError):
    """An assignment strategy name we do not know."""


class UserDataError(KafkaPlacementError, ValueError):
    """Malformed, truncated or oversized subscription userData from a group member."""


# --- replica -> broker (names mirror org.apache.kafka.common.errors / AdminOperationException) --
class InvalidPartitionsError(InvalidArgumentError):
    """Kafka: InvalidPartitionsException."""


class InvalidReplicationFactorError(InvalidArgumentError):
    """Kafka: InvalidReplicationFactorException."""


class AdminOperationError(KafkaPlacementError, RuntimeError):
    """Kafka: AdminOperationException."""


class IndexOutOfBoundsError(InvalidArgumentError, IndexError):
    """Java's IndexOutOfBoundsException, where Kafka's own code throws it on int-overflowing input
    (``AdminUtils`` with a start index near ``Integer.MAX_VALUE``); same text as Java's."""


class InvalidBrokerError(InvalidArgumentError):
    """Duplicate broker ids, unknown brokers named by a plan, empty broker lists."""


class ReassignmentFormatError(InvalidArgumentError):
    """Malformed kafka-reassign-partitions JSON; the message names the line or field."""


# --- live side ---------------------------------------------------------------------------------
class ClusterError(KafkaPlacementError, RuntimeError):
    """The live cluster (engine, image, brokers) could not be started or reached."""


class UnsupportedKafkaVersionError(InvalidArgumentError):
    """A Kafka version the embedded cluster cannot run: not ``MAJOR.MINOR.PATCH``, or outside 4.0.0 up to the
    pinned minor (``kafka_placement.versions``); the message names the value and the range."""


class SparkStartError(KafkaPlacementError, RuntimeError):
    """Spark (its JVM, through spark-submit) did not start: the message gives the cause and where the JVM's
    own output was kept."""


class ReassignmentInProgressError(ClusterError):
    """A reassignment is already in flight and the request did not say ``--additional``."""


# --- consumer groups (clients.confluent.Consumer) ----------------------------------------------
class ConsumerConfigError(InvalidArgumentError):
    """A consumer configuration we cannot honour exactly (conflicting or unknown settings)."""


class ConsumerGroupError(KafkaPlacementError, RuntimeError):
    """The consumer could not join or keep its group membership (e.g. fenced static member,
    inconsistent group protocol, group authorization)."""


class GroupDescribeError(KafkaPlacementError, RuntimeError):
    """The group coordinator answered a describe request (DescribeGroups, ConsumerGroupDescribe) with an
    error code; the message names the group, the code and Kafka's error text."""


class MessageSchemaUnavailableError(KafkaPlacementError, RuntimeError):
    """Kafka's JSON message schema for an API (read from the official ``kafka-clients`` jar) could not be
    had: no cached jar and no download (offline, mirror unreachable, checksum mismatch); the message
    says which."""


class FetchStalledError(ConsumerGroupError):
    """librdkafka keeps a partition assigned to this member and has fetched none of it for longer than the
    consumer's fetch stall timeout; the message names the partitions. Close the consumer and create a new
    one: the group moves the partitions to a fresh fetcher."""


class CommitFailedError(ConsumerGroupError):
    """Kafka: CommitFailedException — an offset commit refused because this member is not (or no
    longer) part of the group's current generation."""


# --- connecting to a cluster ------------------------------------------------------------------
class ConnectionSettingsError(InvalidArgumentError):
    """A connection setting that is malformed or that the chosen client cannot honour (never dropped)."""


class ConnectionFailedError(KafkaPlacementError, ConnectionError):
    """The cluster could not be reached or refused us (address, TLS, SASL); the message says which."""


class NotAuthorizedError(KafkaPlacementError, PermissionError):
    """The cluster refused an operation for lack of an ACL; the message names the operation."""


# --- the test harness's fault proxy (Toxiproxy) ------------------------------------------------
class FaultProxyError(KafkaPlacementError, RuntimeError):
    """The Toxiproxy server could not be found, started or asked; the message names the proxy or toxic
    and the server's own answer."""
