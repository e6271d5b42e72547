/*
 * kafka-placement conformance helper (our own code): a plain Java KafkaConsumer that joins a group
 * with Kafka's own CooperativeStickyAssignor, for the mixed Java/Python live group test.
 * Compiled at test time with javac against the pinned kafka-clients jar.
 *
 * Usage: GroupMember <bootstrap> <group> <name> <topic>[,<topic>...] [failover:<priority>]
 * (the optional last argument switches to our Java FailoverAssignor with that priority).
 * Prints one JSON object per line on stdout:
 *   {"ev":"ready"}, {"ev":"revoked"|"added"|"lost","parts":[[topic,p],...],"t":<epoch seconds>},
 *   {"ev":"assignment","gen":N,"member_id":"...","parts":[...],"t":...}, {"ev":"closed"}.
 * A line "close" on stdin makes it leave the group cleanly.
 */
package io.kafkaplacement.conformance.live;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class GroupMember {
    private static String name;

    private static String parts(Collection<TopicPartition> tps) {
        List<TopicPartition> sorted = new ArrayList<>(tps);
        sorted.sort((a, b) -> a.topic().equals(b.topic())
            ? Integer.compare(a.partition(), b.partition()) : a.topic().compareTo(b.topic()));
        StringBuilder b = new StringBuilder("[");
        for (TopicPartition tp : sorted) {
            if (b.length() > 1) {
                b.append(',');
            }
            b.append('[').append(MemberIO.quote(tp.topic())).append(',').append(tp.partition()).append(']');
        }
        return b.append(']').toString();
    }

    private static void emit(String body) {
        MemberIO.emit(name, body);
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String group = args[1];
        name = args[2];
        List<String> topics = Arrays.asList(args[3].split(","));

        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, name);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        if (args.length > 4 && args[4].startsWith("failover:")) {
            props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, FailoverAssignor.class.getName());
            props.put(FailoverAssignor.PRIORITY_CONFIG, args[4].substring("failover:".length()));
        }
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
        props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
        props.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, "20000");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());

        AtomicBoolean closing = MemberIO.closeOnStdin();

        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(topics, new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    emit("\"ev\":\"revoked\",\"parts\":" + parts(partitions));
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    emit("\"ev\":\"added\",\"parts\":" + parts(partitions));
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> partitions) {
                    emit("\"ev\":\"lost\",\"parts\":" + parts(partitions));
                }
            });
            emit("\"ev\":\"ready\"");
            String last = null;
            while (!closing.get()) {
                consumer.poll(Duration.ofMillis(100));
                ConsumerGroupMetadata meta = consumer.groupMetadata();
                String state = meta.generationId() + "|" + meta.memberId() + "|" + parts(consumer.assignment());
                if (!state.equals(last)) {
                    last = state;
                    emit("\"ev\":\"assignment\",\"gen\":" + meta.generationId() + ",\"member_id\":"
                        + MemberIO.quote(meta.memberId()) + ",\"parts\":" + parts(consumer.assignment()));
                }
            }
        }
        emit("\"ev\":\"closed\"");
    }
}
