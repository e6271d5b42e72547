"""Batch hashing over a :class:`~kafka_placement.partitioning.keybatch.KeyBatch`: pure numpy, uint32.

murmur2: keys are grouped by their number of 4-byte blocks; inside a group the blocks of every key are
fetched at once (a uint32 view of the byte buffer at stride 1 reads a little-endian word at any byte
offset), mixed column-wise, and chained ``h = h*m ^ k`` block by block over the whole group. Keys of one
fixed length take a copy-free 2-D fast path. Tails (1–3 bytes) are masked words. Every result equals the
scalar :func:`~kafka_placement.partitioning.murmur2.murmur2` (property-tested).
"""

from __future__ import annotations

import zlib

import numpy as np
import numpy.typing as npt

from kafka_placement.partitioning.hashes import FNV_OFFSET, FNV_PRIME
from kafka_placement.partitioning.keybatch import KeyBatch
from kafka_placement.partitioning.murmur2 import SEED, M

U32 = npt.NDArray[np.uint32]
_M = np.uint32(M)
_TAIL_MASK = np.array([0, 0xFF, 0xFFFF, 0xFFFFFF], dtype=np.uint32)
_GROUP_CHUNK = 1 << 16  # keys per slab on the fixed-length path
_CHUNK_BLOCKS = 1 << 18  # blocks per slab on the grouped path (1 MiB of uint32: stays in cache)


def _word_view(data: npt.NDArray[np.uint8]) -> U32:
    """uint32 little-endian word starting at every byte offset (overlapping, stride 1, zero copy)."""
    count = max(int(data.size) - 3, 0)
    return np.ndarray(shape=(count,), dtype="<u4", buffer=data, offset=0, strides=(1,))


def _fixed_length_body(batch: KeyBatch, length: int, h: U32) -> None:
    n = len(batch)
    nb = length >> 2
    # (keys, nblocks) little-endian words straight over the buffer: key i block j at byte i*length + 4*j
    words: U32 = np.ndarray(shape=(n, nb), dtype="<u4", buffer=batch.data, offset=0, strides=(length, 4))
    for lo in range(0, n, _GROUP_CHUNK):
        hi = min(lo + _GROUP_CHUNK, n)
        blocks = words[lo:hi] * _M  # a fresh aligned array; the rest of the mixing is in place
        blocks ^= blocks >> np.uint32(24)
        blocks *= _M
        hh = h[lo:hi]
        for j in range(nb):
            hh *= _M
            hh ^= blocks[:, j]


_SPAN = 64  # bytes copied per gathered item: numpy gathers 64-byte void items far faster than 4-byte words


def _span_view(data: npt.NDArray[np.uint8], span: int) -> npt.NDArray[np.void]:
    """A ``span``-byte opaque item starting at every byte offset (overlapping, stride 1, zero copy)."""
    count = max(int(data.size) - span + 1, 0)
    return np.ndarray(shape=(count,), dtype=f"V{span}", buffer=data, offset=0, strides=(1,))


def _gather_blocks(data: npt.NDArray[np.uint8], starts: npt.NDArray[np.int64], nblocks: int) -> U32:
    """(len(starts), nblocks) view of freshly gathered memory: row i = the 4-byte LE blocks of key i.

    Gathers whole ``_SPAN``-byte items (reading up to 60 bytes past the blocks) when every key has that
    many bytes left in the buffer, exact ``4*nblocks``-byte items otherwise.
    """
    spans = -(-4 * nblocks // _SPAN)
    if starts.size and int(starts[-1]) + spans * _SPAN <= int(data.size):  # starts ascend within a group
        view = _span_view(data, _SPAN)
        items = view[starts if spans == 1 else starts[:, None] + np.arange(spans, dtype=np.int64) * _SPAN]
        words: U32 = items.view("<u4").reshape(starts.size, spans * _SPAN // 4)
        return words[:, :nblocks]
    exact: U32 = _span_view(data, 4 * nblocks)[starts].view("<u4").reshape(starts.size, nblocks)
    return exact


def _grouped_body(batch: KeyBatch, nb: npt.NDArray[np.int64] | npt.NDArray[np.int32], h: U32) -> None:
    maxnb = int(nb.max())
    sort_key = nb.astype(np.uint8 if maxnb < 256 else np.uint16 if maxnb < 65536 else np.int64)
    order = np.argsort(sort_key, kind="stable")  # radix sort for small ints; stable keeps addresses rising
    bounds = np.concatenate(([0], np.cumsum(np.bincount(nb, minlength=maxnb + 1))))
    first = int(bounds[1])  # keys with no whole block keep their seed value
    order = order[first:]
    starts = batch.offsets[:-1][order].astype(np.int64)
    hs = h[order]  # hashes in group order: every slab below is a contiguous slice, updated in place
    for b in range(1, maxnb + 1):
        lo, hi = int(bounds[b]) - first, int(bounds[b + 1]) - first
        if lo == hi:
            continue
        step = max(256, _CHUNK_BLOCKS // b)
        for c0 in range(lo, hi, step):
            c1 = min(c0 + step, hi)
            blocks = _gather_blocks(batch.data, starts[c0:c1], b).T * _M  # (b, keys), contiguous rows
            blocks ^= blocks >> np.uint32(24)
            blocks *= _M
            hh = hs[c0:c1]
            for j in range(b):
                hh *= _M
                hh ^= blocks[j]
    h[order] = hs


def _tails(
    batch: KeyBatch, lengths: npt.NDArray[np.int64] | npt.NDArray[np.int32], h: U32, fixed: int
) -> None:
    if fixed >= 0 and fixed & 3 == 0:
        return
    tail = (lengths & 3).astype(np.int64)
    sel = np.arange(len(batch)) if fixed >= 0 else np.flatnonzero(tail)
    if not sel.size:
        return
    data = batch.data
    size = int(data.size)
    pos = batch.offsets[sel].astype(np.int64) + (lengths[sel] - tail[sel])
    tw = np.zeros(sel.size, dtype=np.uint32)
    inside = pos <= size - 4
    if size >= 4:
        tw[inside] = _word_view(data)[pos[inside]]
    for i in np.flatnonzero(~inside):  # the last 1–3 bytes of the buffer: fewer than 4 bytes readable
        p = int(pos[i])
        tw[i] = int.from_bytes(data[p : p + int(tail[sel[i]])].tobytes(), "little")
    tw &= _TAIL_MASK[tail[sel]]
    hs = h[sel]
    hs ^= tw
    hs *= _M
    h[sel] = hs


def murmur2_batch(batch: KeyBatch) -> npt.NDArray[np.int32]:
    """Kafka murmur2 of every key (NULL keys hash as b"") as signed int32."""
    n = len(batch)
    lengths = batch.lengths
    first = int(lengths[0]) if n else 0
    fixed = first if n and int(lengths.min()) == first and int(lengths.max()) == first else -1
    if fixed >= 0:
        h = np.full(n, (SEED ^ fixed) & 0xFFFFFFFF, dtype=np.uint32)
    else:
        h = np.uint32(SEED) ^ lengths.astype(np.uint32)
    if n:
        if fixed >= 4:
            _fixed_length_body(batch, first, h)
        elif fixed < 0:
            nb = lengths >> 2
            if int(nb.max()) > 0:
                _grouped_body(batch, nb, h)
        _tails(batch, lengths, h, fixed)
    h ^= h >> np.uint32(13)
    h *= _M
    h ^= h >> np.uint32(15)
    return h.view(np.int32)


def _sorted_bytewise(batch: KeyBatch, h: U32, step: object) -> None:
    """Feed each key's bytes in order to ``step(h_slice, byte_column)`` (keys sorted by length)."""
    lengths = batch.lengths
    n = len(batch)
    if not n or int(lengths.max()) == 0:
        return
    order = np.argsort(-lengths.astype(np.int64), kind="stable")
    sorted_len = lengths[order]
    pos = batch.offsets[:-1][order].astype(np.int64)
    hs = h[order]
    active = n
    data = batch.data
    for j in range(int(sorted_len[0])):
        while active and sorted_len[active - 1] <= j:
            active -= 1
        col = data[pos[:active]].astype(np.uint32)
        step(hs[:active], col)  # type: ignore[operator]
        pos[:active] += 1
    h[order] = hs


def fnv1a_batch(batch: KeyBatch) -> npt.NDArray[np.uint32]:
    """librdkafka ``rd_fnv1a`` of every key (abs of the signed FNV-1a-32, as uint32)."""
    h = np.full(len(batch), FNV_OFFSET, dtype=np.uint32)
    prime = np.uint32(FNV_PRIME)

    def step(hh: U32, col: U32) -> None:
        hh ^= col
        hh *= prime

    _sorted_bytewise(batch, h, step)
    neg = (h & np.uint32(0x80000000)) != 0
    h[neg] = np.uint32(0) - h[neg]
    return h


def crc32_batch(batch: KeyBatch) -> npt.NDArray[np.uint32]:
    """CRC-32 (zlib / librdkafka ``rd_crc32``) of every key."""
    data = batch.data.tobytes()
    off = batch.offsets.astype(np.int64).tolist()
    return np.fromiter(
        (zlib.crc32(data[off[i] : off[i + 1]]) for i in range(len(off) - 1)),
        dtype=np.uint32,
        count=len(off) - 1,
    )
