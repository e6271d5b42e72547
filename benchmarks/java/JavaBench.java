// Java side of benchmarks/bench_vs_java.py: times Kafka's own classes in a fresh JVM and prints one
// JSON line per case. Cold = the first call; warm = the median of the calls after the warm-up.
// Usage: java -cp <kafka jars>:<dir> JavaBench murmur KEYFILE KEYLEN PARTITIONS REPS
//        java -cp ... JavaBench sticky|coop-history|unequal TOPICS PARTITIONS MEMBERS REPS

import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Utils;

public final class JavaBench {
    private JavaBench() {}

    interface Call { long run() throws Exception; }

    static void report(String kind, long[] nanos, long check, long extra) {
        long[] warm = Arrays.copyOfRange(nanos, Math.min(1, nanos.length - 1), nanos.length);
        Arrays.sort(warm);
        long heap = Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory();
        System.out.printf("{\"case\": \"%s\", \"cold_s\": %.6f, \"warm_s\": %.6f, \"best_s\": %.6f, "
            + "\"check\": %d, \"extra\": %d, \"reps\": %d, \"heap_used_mb\": %.1f}%n",
            kind, nanos[0] / 1e9, warm[warm.length / 2] / 1e9, warm[0] / 1e9, check, extra, nanos.length,
            heap / 1048576.0);
    }

    static long[] time(int reps, Call call, long[] check) throws Exception {
        long[] nanos = new long[reps];
        for (int i = 0; i < reps; i++) {
            long t0 = System.nanoTime();
            check[0] = call.run();
            nanos[i] = System.nanoTime() - t0;
        }
        return nanos;
    }

    static void murmur(String file, int keyLen, int partitions, int reps) throws Exception {
        byte[] all = Files.readAllBytes(Paths.get(file));
        int count = all.length / keyLen;
        byte[][] keys = new byte[count][];
        for (int i = 0; i < count; i++) {
            keys[i] = Arrays.copyOfRange(all, i * keyLen, (i + 1) * keyLen);
        }
        int[] out = new int[count];
        long[] check = new long[1];
        long[] nanos = time(reps, () -> {
            for (int i = 0; i < keys.length; i++) {
                out[i] = Utils.toPositive(Utils.murmur2(keys[i])) % partitions;
            }
            long sum = 0;  // the same weighted checksum the Python side computes over its result
            for (int i = 0; i < out.length; i++) {
                sum += (long) out[i] * (i % 7 + 1);
            }
            return sum;
        }, check);
        report("murmur", nanos, check[0], count);
    }

    static List<String> topicNames(int topics) {
        List<String> names = new ArrayList<>();
        for (int t = 0; t < topics; t++) {
            names.add(String.format("topic-%04d", t));
        }
        return names;
    }

    static Cluster cluster(List<String> topics, int partitions) {
        Node node = new Node(0, "broker0", 9092);
        Node[] replicas = {node};
        List<PartitionInfo> infos = new ArrayList<>();
        for (String topic : topics) {
            for (int p = 0; p < partitions; p++) {
                infos.add(new PartitionInfo(topic, p, node, replicas, replicas));
            }
        }
        return new Cluster("bench", Collections.singletonList(node), infos, Collections.emptySet(),
            Collections.emptySet());
    }

    static Map<String, Subscription> equalGroup(List<String> topics, int members) {
        Map<String, Subscription> subs = new HashMap<>();
        for (int m = 0; m < members; m++) {
            subs.put(String.format("consumer-%05d", m), new Subscription(topics));
        }
        return subs;
    }

    static long size(Map<String, ConsumerPartitionAssignor.Assignment> result) {
        long max = 0;
        for (ConsumerPartitionAssignor.Assignment a : result.values()) {
            max = Math.max(max, a.partitions().size());
        }
        return max;
    }

    static void assignors(String kind, int topicCount, int partitions, int members, int reps) throws Exception {
        List<String> topics = topicNames(topicCount);
        Cluster cluster = cluster(topics, partitions);
        Map<String, Subscription> subs = equalGroup(topics, members);
        long[] check = new long[1];
        long[] nanos;
        if (kind.equals("sticky")) {
            GroupSubscription group = new GroupSubscription(subs);
            nanos = time(reps, () -> size(new StickyAssignor().assign(cluster, group).groupAssignment()), check);
        } else if (kind.equals("unequal")) {
            subs.put("consumer-99999", new Subscription(Collections.singletonList(topics.get(0))));
            GroupSubscription group = new GroupSubscription(subs);
            nanos = time(reps, () -> size(new StickyAssignor().assign(cluster, group).groupAssignment()), check);
        } else if (kind.equals("coop-history")) {
            // history: the group's own fresh assignment; then the first member leaves and one joins
            Map<String, ConsumerPartitionAssignor.Assignment> prev =
                new CooperativeStickyAssignor().assign(cluster, new GroupSubscription(subs)).groupAssignment();
            Map<String, Subscription> next = new HashMap<>();
            String gone = String.format("consumer-%05d", 0);
            for (Map.Entry<String, ConsumerPartitionAssignor.Assignment> e : prev.entrySet()) {
                if (e.getKey().equals(gone)) {
                    continue;
                }
                next.put(e.getKey(), new Subscription(topics, null, new ArrayList<TopicPartition>(
                    e.getValue().partitions()), 1, Optional.empty()));
            }
            next.put("consumer-new", new Subscription(topics, null, new ArrayList<>(), -1, Optional.empty()));
            GroupSubscription group = new GroupSubscription(next);
            nanos = time(reps, () -> size(new CooperativeStickyAssignor().assign(cluster, group).groupAssignment()),
                check);
        } else {
            throw new IllegalArgumentException("unknown case " + kind);
        }
        Runtime rt = Runtime.getRuntime();
        report(kind, nanos, check[0], rt.maxMemory() / 1048576);
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("murmur")) {
            murmur(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]), Integer.parseInt(args[4]));
        } else {
            assignors(args[0], Integer.parseInt(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]),
                Integer.parseInt(args[4]));
        }
    }
}
