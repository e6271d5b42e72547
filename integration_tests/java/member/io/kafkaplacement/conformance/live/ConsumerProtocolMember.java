/*
 * kafka-placement live-test helper (our own code): a plain Java KafkaConsumer on the consumer group
 * protocol (KIP-848) whose settings come from a .properties file written by
 * kafka_placement.clients.consumer_protocol.java_failover_properties (group.protocol=consumer,
 * group.remote.assignor=failover, client.rack=<rack>#priority=<n>): the broker's failover assignor decides.
 *
 * Usage: ConsumerProtocolMember <properties file> <name> <topic>
 * Prints one JSON object per line on stdout: {"ev":"ready"}, {"ev":"assignment","parts":[p,...],"member_id":..},
 * {"ev":"recs","items":[[p,offset,key],...]}, {"ev":"committed","why":..}, {"ev":"replicas","map":{"p":node,..}}
 * (the preferred read replica per assigned partition, KIP-392, from the consumer's own metrics),
 * {"ev":"closing"} (the clean close starts), {"ev":"closed"}.
 * Commits synchronously every 0.5 s and when partitions are revoked. "close" on stdin leaves cleanly.
 */
package io.kafkaplacement.conformance.live;

import java.io.FileInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class ConsumerProtocolMember {
    private static String name;

    private static void emit(String body) {
        MemberIO.emit(name, body);
    }

    private static String partitions(Collection<TopicPartition> tps) {
        List<Integer> parts = new ArrayList<>();
        for (TopicPartition tp : tps) {
            parts.add(tp.partition());
        }
        Collections.sort(parts);
        return parts.toString().replace(" ", "");
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        try (InputStream in = new FileInputStream(args[0])) {
            props.load(in);  // ISO-8859-1, as Kafka's own tools read --consumer.config
        }
        name = args[1];
        String topic = args[2];
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, name);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "5000");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());

        AtomicBoolean closing = MemberIO.closeOnStdin();
        AtomicBoolean pending = new AtomicBoolean(false);  // consumed since the last commit

        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
                    if (!revoked.isEmpty() && pending.getAndSet(false)) {  // as the Python member: only what is new
                        consumer.commitSync();
                        emit("\"ev\":\"committed\",\"why\":\"revoke\"");
                    }
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> added) {
                }
            });
            emit("\"ev\":\"ready\"");
            String last = null;
            String lastReplicas = null;
            long nextCommit = System.nanoTime();
            while (!closing.get()) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                if (!records.isEmpty()) {
                    StringBuilder items = new StringBuilder("[");
                    for (ConsumerRecord<byte[], byte[]> record : records) {
                        if (items.length() > 1) {
                            items.append(',');
                        }
                        String key = record.key() == null ? "" : new String(record.key(), StandardCharsets.UTF_8);
                        items.append('[').append(record.partition()).append(',').append(record.offset())
                            .append(",\"").append(key).append("\"]");
                    }
                    emit("\"ev\":\"recs\",\"items\":" + items.append(']'));
                    pending.set(true);
                }
                if (pending.get() && System.nanoTime() >= nextCommit) {
                    consumer.commitSync();
                    emit("\"ev\":\"committed\",\"why\":\"periodic\"");
                    pending.set(false);
                    nextCommit = System.nanoTime() + 500_000_000L;
                }
                String state = consumer.groupMetadata().memberId() + "|" + partitions(consumer.assignment());
                if (!state.equals(last)) {
                    last = state;
                    emit("\"ev\":\"assignment\",\"parts\":" + partitions(consumer.assignment())
                        + ",\"member_id\":\"" + consumer.groupMetadata().memberId() + "\"");
                }
                String replicas = preferredReadReplicas(consumer.metrics());
                if (!replicas.equals(lastReplicas)) {
                    lastReplicas = replicas;
                    emit("\"ev\":\"replicas\",\"map\":" + replicas);
                }
            }
            emit("\"ev\":\"closing\"");  // the clean close starts now (commit, revoke, leave)
            if (pending.getAndSet(false)) {
                consumer.commitSync();
            }
        }
        emit("\"ev\":\"closed\"");
    }

    /** The consumer's "preferred-read-replica" metric per partition: the replica the broker's selector chose. */
    private static String preferredReadReplicas(Map<MetricName, ? extends Metric> metrics) {
        TreeMap<Integer, String> chosen = new TreeMap<>();
        for (Map.Entry<MetricName, ? extends Metric> entry : metrics.entrySet()) {
            MetricName metric = entry.getKey();
            if (metric.name().equals("preferred-read-replica") && metric.tags().containsKey("partition")) {
                chosen.put(Integer.valueOf(metric.tags().get("partition")), String.valueOf(entry.getValue().metricValue()));
            }
        }
        StringBuilder out = new StringBuilder("{");
        for (Map.Entry<Integer, String> entry : chosen.entrySet()) {
            if (out.length() > 1) {
                out.append(',');
            }
            out.append('"').append(entry.getKey()).append("\":\"").append(entry.getValue()).append('"');
        }
        return out.append('}').toString();
    }
}
