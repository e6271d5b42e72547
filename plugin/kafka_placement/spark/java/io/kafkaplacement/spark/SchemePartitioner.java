package io.kafkaplacement.spark;

import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.CRC32;

import org.apache.kafka.clients.producer.Partitioner;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.utils.Utils;

/**
 * kafka-placement's keyed schemes as a Java producer partitioner, so Spark's Kafka sink places records
 * in its own JVM instead of a partition column computed in a Python worker.
 *
 * <p>The scheme is the producer property {@code kafka-placement.scheme} (the writer passes it as the
 * sink option {@code kafka.kafka-placement.scheme}). Semantics are those of
 * {@code kafka_placement.partitioning.schemes} (librdkafka's partitioners plus jump): a keyed record's
 * partition is a pure function of its key bytes and the topic's partition count; a keyless record
 * (per scheme: NULL, or also empty) goes to a uniformly random partition, as the Python writer's
 * keyless records do. {@code murmur2_random} is not here: Java's default partitioner is that scheme,
 * keyless stickiness included.
 */
public final class SchemePartitioner implements Partitioner {
    public static final String SCHEME_CONFIG = "kafka-placement.scheme";

    private static final long JUMP_LCG = 2862933555777941757L;

    private enum Scheme { MURMUR2, CONSISTENT, CONSISTENT_RANDOM, FNV1A, FNV1A_RANDOM, RANDOM, JUMP }

    private Scheme scheme;

    @Override
    public void configure(Map<String, ?> configs) {
        Object name = configs.get(SCHEME_CONFIG);
        if (name == null) {
            throw new ConfigException(SCHEME_CONFIG + " is not set: name the kafka-placement scheme");
        }
        switch (name.toString()) {
            case "murmur2": scheme = Scheme.MURMUR2; break;
            case "consistent": scheme = Scheme.CONSISTENT; break;
            case "consistent_random": scheme = Scheme.CONSISTENT_RANDOM; break;
            case "fnv1a": scheme = Scheme.FNV1A; break;
            case "fnv1a_random": scheme = Scheme.FNV1A_RANDOM; break;
            case "random": scheme = Scheme.RANDOM; break;
            case "jump": scheme = Scheme.JUMP; break;
            default:
                throw new ConfigException(SCHEME_CONFIG, name, "not a scheme this partitioner places; one of "
                        + "murmur2, consistent, consistent_random, fnv1a, fnv1a_random, random, jump");
        }
    }

    @Override
    public int partition(String topic, Object key, byte[] keyBytes, Object value, byte[] valueBytes,
                         Cluster cluster) {
        return partition(keyBytes, cluster.partitionsForTopic(topic).size());
    }

    /** The partition of a record with these key bytes (null: no key) among {@code n} partitions. */
    public int partition(byte[] keyBytes, int n) {
        byte[] key = keyBytes == null ? new byte[0] : keyBytes;
        switch (scheme) {
            case MURMUR2:
                return (Utils.murmur2(key) & 0x7fffffff) % n;
            case CONSISTENT_RANDOM:
                if (key.length == 0) {
                    return random(n);
                }
                return crc32(key, n);
            case CONSISTENT:
                return crc32(key, n);
            case FNV1A_RANDOM:
                if (keyBytes == null) {
                    return random(n);
                }
                return Integer.remainderUnsigned(fnv1a(key), n);
            case FNV1A:
                return Integer.remainderUnsigned(fnv1a(key), n);
            case JUMP:
                if (keyBytes == null) {
                    return random(n);
                }
                return jump(Utils.murmur2(key) & 0xffffffffL, n);
            default:
                return random(n);
        }
    }

    private static int random(int n) {
        return ThreadLocalRandom.current().nextInt(n);
    }

    private static int crc32(byte[] key, int n) {
        CRC32 crc = new CRC32();
        crc.update(key, 0, key.length);
        return (int) (crc.getValue() % n);
    }

    /** librdkafka's rd_fnv1a: FNV-1a-32 in a signed int, then its absolute value (INT_MIN stays). */
    private static int fnv1a(byte[] key) {
        int h = 0x811C9DC5;
        for (byte b : key) {
            h ^= b & 0xff;
            h *= 0x01000193;
        }
        return h < 0 ? -h : h;
    }

    /** Lamping and Veach's jump consistent hash of an unsigned 64-bit key (the paper's loop). */
    private static int jump(long key, int n) {
        long b = -1;
        long j = 0;
        while (j < n) {
            b = j;
            key = key * JUMP_LCG + 1;
            j = (long) ((b + 1) * ((double) (1L << 31) / (double) ((key >>> 33) + 1)));
        }
        return (int) b;
    }

    @Override
    public void close() {
    }
}
