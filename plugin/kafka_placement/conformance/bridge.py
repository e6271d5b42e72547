"""The JVM, started once per process with JPype, and typed wrappers over Kafka's Java classes.

JPype runs the JVM inside this Python process (no gateway server, no sockets): ``bytes`` become
``byte[]`` directly and Java collections are walked in place, which keeps tens of thousands of
differential calls cheap. Our two helper classes (``java/io/kafkaplacement/conformance``) are
compiled with ``javac`` into the jar cache on first use.

Every wrapper speaks the project vocabulary (ints, strs, :class:`TopicPartition`, :class:`Member`)
and turns a Java exception into :class:`JavaError` (class name + message) so callers can compare
exceptions with ours to the letter.
"""

from __future__ import annotations

import hashlib
import shutil
import struct
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_placement.conformance.jars import (
    JAVA_SOURCES,
    JavaReferenceUnavailable,
    admin_utils_jars,
    cache_dir,
    class_path,
)
from kafka_placement.vocabulary import Member, TopicPartition

#: Java assignor class per strategy name (the names ``kafka_placement.assignment.assign`` takes).
ASSIGNOR_CLASSES = {
    "range": "org.apache.kafka.clients.consumer.RangeAssignor",
    "roundrobin": "org.apache.kafka.clients.consumer.RoundRobinAssignor",
    "sticky": "org.apache.kafka.clients.consumer.StickyAssignor",
    "cooperative-sticky": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
}


@dataclass(frozen=True)
class JavaError:
    """A Java exception thrown by the reference: simple class name and message."""

    class_name: str
    message: str | None


_lock = threading.Lock()
_reference: JavaReference | None = None


def reference() -> JavaReference:
    """The process-wide :class:`JavaReference` (starts the JVM on first call)."""
    global _reference
    with _lock:
        if _reference is None:
            _reference = JavaReference()
        return _reference


def _helper_classes_dir(jars: Sequence[Path]) -> Path:
    """Compile our helper sources once per (sources, class path) into the cache; return the dir."""
    sources = sorted(JAVA_SOURCES.rglob("*.java"))
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    for jar in jars:
        digest.update(jar.name.encode())
    out = cache_dir() / "helpers" / digest.hexdigest()[:16]
    if (out / "COMPILED").exists():
        return out
    javac = shutil.which("javac")
    if javac is None:
        raise JavaReferenceUnavailable(
            "javac not found: install a JDK (Debian: openjdk-17-jdk-headless) or run "
            "scripts/fetch-java-reference.sh, which installs one"
        )
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    result = subprocess.run(
        [javac, "-nowarn", "-d", str(tmp), "-cp", ":".join(map(str, jars)), *map(str, sources)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise JavaReferenceUnavailable(f"javac failed on the conformance helpers:\n{result.stderr}")
    (tmp / "COMPILED").write_text("ok\n")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


def _encode_sticky_user_data(owned: Sequence[TopicPartition], generation: int) -> bytes:
    """Java StickyAssignor userData: V1 ``[{topic: STRING, partitions: [INT32]}] generation: INT32``,
    or V0 (no generation) when the generation is unknown (< 0). Written here from the documented
    wire format so the Java side reads exactly what a Java member would have sent."""
    by_topic: dict[str, list[int]] = {}
    for tp in owned:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    out = bytearray(struct.pack(">i", len(by_topic)))
    for topic, partitions in by_topic.items():
        name = topic.encode()
        out += struct.pack(">h", len(name)) + name
        out += struct.pack(">i", len(partitions))
        out += b"".join(struct.pack(">i", p) for p in partitions)
    if generation >= 0:
        out += struct.pack(">i", generation)
    return bytes(out)


class JavaReference:
    """Typed access to the reference classes of the pinned Kafka version."""

    def __init__(self) -> None:
        try:
            import jpype
        except ImportError as exc:  # pragma: no cover - the conformance extra installs it
            raise JavaReferenceUnavailable(
                "JPype is not installed: pip install 'kafka-placement[conformance]'"
            ) from exc
        jars = class_path()
        admin_jars = admin_utils_jars()
        helpers = _helper_classes_dir(jars)
        if not jpype.isJVMStarted():
            jpype.startJVM(
                "-Xss8m",
                "-Xmx1g",
                classpath=[*map(str, jars), str(helpers)],
                convertStrings=False,
            )
        else:  # someone else started the JVM: usable only if it has our class path
            try:
                jpype.JClass("io.kafkaplacement.conformance.MockRandom")
                jpype.JClass("org.apache.kafka.clients.consumer.CooperativeStickyAssignor")
            except TypeError as exc:
                raise JavaReferenceUnavailable(
                    "a JVM was already started in this process without the Kafka reference class path; "
                    "start it through kafka_placement.conformance.bridge.reference() first"
                ) from exc
        self._jpype = jpype
        j = jpype.JClass
        self._utils = j("org.apache.kafka.common.utils.Utils")
        self._builtin = j("org.apache.kafka.clients.producer.internals.BuiltInPartitioner")
        self._byte_array = jpype.JArray(jpype.JByte)
        self._int_array = jpype.JArray(jpype.JInt)
        self._string_array = jpype.JArray(j("java.lang.String"))
        self._boolean_array = jpype.JArray(jpype.JBoolean)
        self._ArrayList = j("java.util.ArrayList")
        self._HashMap = j("java.util.HashMap")
        self._Optional = j("java.util.Optional")
        self._Integer = j("java.lang.Integer")
        self._ByteBuffer = j("java.nio.ByteBuffer")
        self._Node = j("org.apache.kafka.common.Node")
        self._node_array = jpype.JArray(self._Node)
        self._PartitionInfo = j("org.apache.kafka.common.PartitionInfo")
        self._Cluster = j("org.apache.kafka.common.Cluster")
        self._JTopicPartition = j("org.apache.kafka.common.TopicPartition")
        self._Subscription = j("org.apache.kafka.clients.consumer.ConsumerPartitionAssignor$Subscription")
        self._GroupSubscription = j(
            "org.apache.kafka.clients.consumer.ConsumerPartitionAssignor$GroupSubscription"
        )
        self._Collections = j("java.util.Collections")
        self._MockRandom = j("io.kafkaplacement.conformance.MockRandom")
        self._FixedClusterDescriber = j("io.kafkaplacement.conformance.FixedClusterDescriber")
        self._StripedReplicaPlacer = j("org.apache.kafka.metadata.placement.StripedReplicaPlacer")
        self._PlacementSpec = j("org.apache.kafka.metadata.placement.PlacementSpec")
        # AdminUtils lives only in kafka-server-common <= 4.0 (see jars.ADMIN_UTILS_KAFKA_VERSION):
        # a child loader finds org.apache.kafka.admin.* there and everything else in the parent.
        urls = [j("java.io.File")(str(p)).toURI().toURL() for p in admin_jars]
        parent = j("java.lang.ClassLoader").getSystemClassLoader()
        loader = j("java.net.URLClassLoader")(jpype.JArray(j("java.net.URL"))(urls), parent)
        self._AdminUtils = j("org.apache.kafka.admin.AdminUtils", loader=loader)
        self._BrokerMetadata = j("org.apache.kafka.admin.BrokerMetadata", loader=loader)
        # A fresh assignor per call: AbstractStickyAssignor keeps the highest generation it ever saw
        # in an instance field, so a reused instance would carry one scenario into the next.
        self._assignor_classes = {name: j(cls) for name, cls in ASSIGNOR_CLASSES.items()}

    # ---- key -> partition ---------------------------------------------------------------------
    def murmur2(self, data: bytes) -> int:
        """``Utils.murmur2(byte[])``: signed 32-bit."""
        return int(self._utils.murmur2(self._byte_array(data)))

    def partition_for_key(self, data: bytes, num_partitions: int) -> int:
        """``BuiltInPartitioner.partitionForKey(byte[], int)``."""
        return int(self._builtin.partitionForKey(self._byte_array(data), num_partitions))

    # ---- partition -> consumer ----------------------------------------------------------------
    def assign(
        self,
        strategy: str,
        partitions_per_topic: Mapping[str, int],
        members: Mapping[str, Member],
        *,
        replicas: Mapping[TopicPartition, Sequence[int]] | None = None,
        broker_racks: Mapping[int, str | None] | None = None,
    ) -> dict[str, list[TopicPartition]] | JavaError:
        """``ConsumerPartitionAssignor.assign(Cluster, GroupSubscription)`` of the named assignor.

        ``replicas``/``broker_racks`` give each partition's replica nodes and their racks (KIP-881);
        without them every partition has one rackless replica on node 0. Member ``owned`` and
        ``generation`` travel as a Java member would send them: StickyAssignor userData V1 (V0 when
        the generation is unknown) plus the v2 generation for ``sticky``, subscription v2 fields
        (ownedPartitions, generationId) otherwise.
        """
        assignor = self._assignor_classes[strategy]()
        racks = dict(broker_racks or {})
        node_ids = set(racks) | {0}
        for rs in (replicas or {}).values():
            node_ids.update(rs)
        nodes = {i: self._Node(i, f"broker{i}", 9092, racks.get(i)) for i in sorted(node_ids)}
        partition_infos = self._ArrayList()
        for topic, count in partitions_per_topic.items():
            jtopic = self._jpype.JString(topic)
            for p in range(count):
                rs = list((replicas or {}).get(TopicPartition(topic, p), (0,)))
                arr = self._node_array([nodes[r] for r in rs])
                leader = nodes[rs[0]] if rs else None
                partition_infos.add(self._PartitionInfo(jtopic, p, leader, arr, arr))
        empty = self._Collections.emptySet()
        node_list = self._ArrayList(list(nodes.values()))
        cluster = self._Cluster("conformance", node_list, partition_infos, empty, empty)
        subscriptions = self._HashMap()
        for member_id, member in members.items():
            topics = self._ArrayList([self._jpype.JString(t) for t in member.topics])
            owned = self._ArrayList([self._JTopicPartition(tp.topic, tp.partition) for tp in member.owned])
            rack = self._Optional.ofNullable(member.rack)
            if strategy == "sticky":
                data = _encode_sticky_user_data(member.owned, member.generation)
                user_data = self._ByteBuffer.wrap(self._byte_array(data))
                # eager: a Java member revoked everything before joining, so ownedPartitions is
                # empty, but ConsumerProtocolSubscription v2 still carries its generation
                subscription = self._Subscription(
                    topics, user_data, self._ArrayList(), member.generation, rack
                )
            else:
                subscription = self._Subscription(topics, None, owned, member.generation, rack)
            instance_id = getattr(member, "group_instance_id", None)
            if instance_id is not None:
                subscription.setGroupInstanceId(self._Optional.of(instance_id))
            subscriptions.put(member_id, subscription)
        try:
            group = assignor.assign(cluster, self._GroupSubscription(subscriptions)).groupAssignment()
        except self._jpype.JException as exc:
            return JavaError(str(exc.getClass().getSimpleName()), _message(exc))
        result: dict[str, list[TopicPartition]] = {}
        for entry in group.entrySet():
            result[str(entry.getKey())] = [
                TopicPartition(str(tp.topic()), int(tp.partition())) for tp in entry.getValue().partitions()
            ]
        return result

    # ---- replica -> broker --------------------------------------------------------------------
    def assign_replicas_to_brokers(
        self,
        brokers: Sequence[tuple[int, str | None]],
        n_partitions: int,
        replication_factor: int,
        fixed_start_index: int = -1,
        start_partition_id: int = -1,
        *,
        seed: int | None = None,
    ) -> dict[int, list[int]] | JavaError:
        """``AdminUtils.assignReplicasToBrokers(Collection<BrokerMetadata>, int, int, int, int)``.

        ``brokers`` are passed in the given order (Java iterates the collection as given). With
        ``seed``, AdminUtils' own static ``java.util.Random`` is reseeded first (through
        reflection), which makes the random start index and shift reproducible."""
        if seed is not None:
            field = self._AdminUtils.class_.getDeclaredField("RAND")
            field.setAccessible(True)
            field.get(None).setSeed(seed)
        metadata = self._ArrayList(
            [self._BrokerMetadata(broker_id, self._Optional.ofNullable(rack)) for broker_id, rack in brokers]
        )
        try:
            java = self._AdminUtils.assignReplicasToBrokers(
                metadata, n_partitions, replication_factor, fixed_start_index, start_partition_id
            )
        except self._jpype.JException as exc:
            return JavaError(str(exc.getClass().getSimpleName()), _message(exc))
        return {int(k): [int(b) for b in v] for k, v in java.items()}

    def place_striped(
        self,
        brokers: Sequence[tuple[int, str | None, bool]],
        num_partitions: int,
        replication_factor: int,
        seed: int = 17,
        start_partition: int = 0,
    ) -> list[list[int]] | JavaError:
        """``StripedReplicaPlacer(new MockRandom(seed)).place(PlacementSpec, ClusterDescriber)``.

        ``brokers`` are ``(id, rack, fenced)`` in the order the cluster describer yields them."""
        ids = self._int_array([b[0] for b in brokers])
        racks = self._string_array([b[1] for b in brokers])
        fenced = self._boolean_array([b[2] for b in brokers])
        placer = self._StripedReplicaPlacer(self._MockRandom(seed))
        try:
            rf = self._jpype.JShort(replication_factor)
            spec = self._PlacementSpec(start_partition, num_partitions, rf)
            topic = placer.place(spec, self._FixedClusterDescriber(ids, racks, fenced))
        except self._jpype.JException as exc:
            return JavaError(str(exc.getClass().getSimpleName()), _message(exc))
        return [[int(r) for r in a.replicas()] for a in topic.assignments()]

    def java_version(self) -> str:
        system = self._jpype.JClass("java.lang.System")
        return str(system.getProperty("java.version"))


def _message(exc: Any) -> str | None:
    message = exc.getMessage()
    return None if message is None else str(message)
