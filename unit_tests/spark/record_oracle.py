"""Records and bytes per partition counted record by record with independent hashes (kafka-python's
murmur2, zlib's CRC-32): the oracle of the plan tests on every input format."""

from __future__ import annotations


def partition_oracle(
    keys: list[bytes | None], sizes: list[int], n: int, scheme: str
) -> tuple[list[int], list[int]]:
    """Records and bytes per partition, counted directly: kafka-python's murmur2, zlib's CRC-32; keys a
    scheme treats as keyless (NULL for murmur2_random, NULL and empty for consistent_random) spread evenly."""
    import zlib

    from kafka.partitioner.default import murmur2 as kafka_python_murmur2

    records, nbytes = [0] * n, [0] * n
    keyless_r = keyless_b = 0
    for k, s in zip(keys, sizes, strict=True):
        b = len(k or b"") + s
        if scheme == "murmur2":
            q = (kafka_python_murmur2(k or b"") & 0x7FFFFFFF) % n
        elif scheme == "murmur2_random" and k is not None:
            q = (kafka_python_murmur2(k) & 0x7FFFFFFF) % n
        elif scheme == "consistent_random" and k:
            q = zlib.crc32(k) % n
        else:
            keyless_r, keyless_b = keyless_r + 1, keyless_b + b
            continue
        records[q] += 1
        nbytes[q] += b
    for q in range(n):
        records[q] += keyless_r // n + (q < keyless_r % n)
        nbytes[q] += keyless_b // n + (q < keyless_b % n)
    return records, nbytes
