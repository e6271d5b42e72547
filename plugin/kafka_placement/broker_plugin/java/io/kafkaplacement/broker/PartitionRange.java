package io.kafkaplacement.broker;

import java.util.AbstractSet;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * The immutable set {0, 1, ..., count - 1} of a topic's partition numbers, in O(1) space: the failover owner
 * gets whole topics, so a member's assignment needs no per-partition objects until the coordinator walks it.
 */
final class PartitionRange extends AbstractSet<Integer> {
    private final int count;

    PartitionRange(int count) {
        this.count = Math.max(0, count);
    }

    @Override
    public int size() {
        return count;
    }

    @Override
    public boolean contains(Object o) {
        if (!(o instanceof Integer)) {
            return false;
        }
        int value = (Integer) o;
        return value >= 0 && value < count;
    }

    @Override
    public Iterator<Integer> iterator() {
        return new Iterator<Integer>() {
            private int next = 0;

            @Override
            public boolean hasNext() {
                return next < count;
            }

            @Override
            public Integer next() {
                if (next >= count) {
                    throw new NoSuchElementException();
                }
                return next++;
            }
        };
    }

    @Override
    public boolean equals(Object o) {
        if (o == this) {
            return true;
        }
        if (o instanceof PartitionRange) {
            return ((PartitionRange) o).count == count;
        }
        if (!(o instanceof Set)) {
            return false;
        }
        Set<?> other = (Set<?>) o;
        return other.size() == count && containsAll(other);
    }

    @Override
    public int hashCode() {
        // the Set contract: the sum of the elements' hash codes, here 0 + 1 + ... + (count - 1), as an int
        long n = count;
        return (int) (n * (n - 1) / 2);
    }
}
