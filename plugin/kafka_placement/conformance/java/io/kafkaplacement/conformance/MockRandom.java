/*
 * kafka-placement conformance helper (our own code, compiled at run time with javac).
 *
 * A java.util.Random whose sequence is fixed by one long: the 64-bit linear congruential step
 * state = state * 2862933555777941757 + 3037000493 and next(bits) = (int) (state >>> (64 - bits)),
 * the same generator Kafka's own tests hand to StripedReplicaPlacer. Every derived method
 * (nextInt(bound), shuffles, ...) is java.util.Random's, driven by this next(bits).
 */
package io.kafkaplacement.conformance;

import java.util.Random;

public final class MockRandom extends Random {
    private static final long MULTIPLIER = 2862933555777941757L;
    private static final long INCREMENT = 3037000493L;

    private long state;

    public MockRandom(long seed) {
        this.state = seed;
    }

    @Override
    protected int next(int bits) {
        state = state * MULTIPLIER + INCREMENT;
        return (int) (state >>> (64 - bits));
    }
}
