"""Batch hashing over a :class:`~kafka_placement.partitioning.keybatch.KeyBatch`: pure numpy, uint32.

murmur2, keys of one length: a 2-D little-endian uint32 view straight over the byte buffer (no copy),
mixed in slabs and chained ``h = h*m ^ k`` column by column. Mixed lengths: keys are grouped by block
count (radix argsort, stable so addresses ascend); per group one fancy-index gather of 64/128-byte opaque
items from a stride-1 view of the buffer fetches every key's blocks and its tail word at once (numpy
copies wide void items far faster than 4-byte words), the (blocks × keys) matrix is mixed and chained row
by row into contiguous slices of the group-ordered hashes, and the tail is folded in with table lookups.
Keys near the buffer end read from a zero-padded copy of just the end. Every result equals the scalar
:func:`~kafka_placement.partitioning.murmur2.murmur2` (property-tested, and against kafka-python and
librdkafka). fnv1a runs byte-wise over length-sorted keys; crc32 calls :func:`zlib.crc32` per key.
"""

from __future__ import annotations

import zlib

import numpy as np
import numpy.typing as npt

from kafka_placement.partitioning.keybatch import KeyBatch
from kafka_placement.partitioning.librdkafka_hashes import FNV_OFFSET, FNV_PRIME
from kafka_placement.partitioning.murmur2 import SEED, M, murmur2

U32 = npt.NDArray[np.uint32]
_M = np.uint32(M)
_TAIL_MASK = np.array([0, 0xFF, 0xFFFF, 0xFFFFFF], dtype=np.uint32)
_GROUP_CHUNK = 1 << 15  # keys per slab on the fixed-length path
_CHUNK_BLOCKS = 1 << 18  # blocks per slab on the grouped path (1 MiB of uint32: stays in cache)
_KEYS_PER_PASS = 1 << 17  # mixed lengths: keys grouped and hashed per pass over the buffer


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
        blocks = np.multiply(words[lo:hi].T, _M, order="C")  # (nb, keys): contiguous rows for the chain
        blocks ^= blocks >> np.uint32(24)
        blocks *= _M
        hh = h[lo:hi]
        for j in range(nb):
            hh *= _M
            hh ^= blocks[j]


_SPAN = 64  # bytes copied per gathered item: numpy gathers 64-byte void items far faster than 4-byte words


def _span_view(data: npt.NDArray[np.uint8], span: int) -> npt.NDArray[np.void]:
    """A ``span``-byte opaque item starting at every byte offset (overlapping, stride 1, zero copy)."""
    count = max(int(data.size) - span + 1, 0)
    return np.ndarray(shape=(count,), dtype=f"V{span}", buffer=data, offset=0, strides=(1,))


_TAIL_MUL = np.array([1, M, M, M], dtype=np.uint32)  # a 1–3 byte tail ends with h *= m
_SCALAR_MIN_BLOCKS = 1024  # groups of fewer than _SCALAR_MAX_KEYS keys this long: scalar is faster
_SCALAR_MAX_KEYS = 16


def _mix_slab(
    view: npt.NDArray[np.void],
    starts: npt.NDArray[np.int64],
    b: int,
    hh: U32,
    tail: npt.NDArray[np.intp],
) -> None:
    """Mix ``b`` blocks and the tail of every key starting at ``starts`` into ``hh`` (in place).

    One gather of wide opaque items per key (numpy gathers 64/128-byte void items far faster than 4-byte
    words) covers the blocks and the 4-byte word holding the tail; the caller guarantees the bytes exist.
    """
    span = view.dtype.itemsize
    spans = (4 * b + 4 + span - 1) // span
    items = view[starts if spans == 1 else starts[:, None] + np.arange(spans, dtype=np.int64) * span]
    words: U32 = items.view("<u4").reshape(starts.size, spans * span // 4)
    if b:
        blocks = np.multiply(words[:, :b].T, _M, order="C")  # (b, keys): contiguous rows for the chain
        shifted = blocks >> np.uint32(24)
        blocks ^= shifted
        blocks *= _M
        for j in range(b):
            hh *= _M
            hh ^= blocks[j]
    hh ^= words[:, b] & _TAIL_MASK[tail]
    hh *= _TAIL_MUL[tail]


def _span_for(nblocks: int) -> int:
    """Gather item width for keys of ``nblocks`` blocks: 64 bytes while blocks + tail fit, else 128."""
    return _SPAN if 4 * nblocks + 4 <= _SPAN else 2 * _SPAN


def _grouped_body(
    batch: KeyBatch, lengths: npt.NDArray[np.int64] | npt.NDArray[np.int32], h: U32
) -> list[int]:
    """Blocks and tails of keys of mixed lengths, grouped by block count. Returns the indices of the few
    keys left to the scalar path (very long keys in tiny groups); their ``h`` entries are garbage."""
    nb = lengths >> 2
    maxnb = int(nb.max())
    sort_key = nb.astype(np.uint8 if maxnb < 256 else np.uint16 if maxnb < 65536 else np.int64)
    order = np.argsort(sort_key, kind="stable")  # radix sort for small ints; stable keeps addresses rising
    bounds = np.concatenate(([0], np.cumsum(np.bincount(nb, minlength=maxnb + 1))))
    starts = batch.offsets[:-1][order].astype(np.int64)
    tails = (lengths[order] & 3).astype(np.intp)
    hs = h[order]  # hashes in group order: every slab below is a contiguous slice, updated in place
    data = batch.data
    size = int(data.size)
    views = {w: _span_view(data, w) for w in (_SPAN, 2 * _SPAN)}
    # keys whose wide items would run past the buffer use a zero-padded copy of the buffer's end
    reach = -(-(4 * maxnb + 4) // (2 * _SPAN)) * 2 * _SPAN  # bytes read from a key's start, at most
    pad_base = max(0, size - reach)
    padded = np.zeros(size - pad_base + reach, dtype=np.uint8)
    padded[: size - pad_base] = data[pad_base:]
    padded_views = {w: _span_view(padded, w) for w in (_SPAN, 2 * _SPAN)}
    scalar: list[int] = []
    for b in range(maxnb + 1):
        lo, hi = int(bounds[b]), int(bounds[b + 1])
        if lo == hi:
            continue
        if b >= _SCALAR_MIN_BLOCKS and hi - lo < _SCALAR_MAX_KEYS:
            scalar.extend(order[lo:hi].tolist())
            continue
        span = _span_for(b)
        read = -(-(4 * b + 4) // span) * span
        cut = lo + int(np.searchsorted(starts[lo:hi], size - read, side="right"))
        step = max(64, _CHUNK_BLOCKS // max(b, 1))
        for c0 in range(lo, cut, step):
            c1 = min(c0 + step, cut)
            _mix_slab(views[span], starts[c0:c1], b, hs[c0:c1], tails[c0:c1])
        if cut < hi:
            _mix_slab(padded_views[span], starts[cut:hi] - pad_base, b, hs[cut:hi], tails[cut:hi])
    h[order] = hs
    return scalar


def _tails(
    batch: KeyBatch, lengths: npt.NDArray[np.int64] | npt.NDArray[np.int32], h: U32, fixed: int
) -> None:
    """Tails of fixed-length keys (all ``fixed & 3`` bytes long)."""
    if fixed & 3 == 0:
        return
    tail = (lengths & 3).astype(np.int64)
    sel = np.arange(len(batch))
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
    scalar: list[int] = []
    if fixed >= 0:
        if fixed >= 4:
            _fixed_length_body(batch, first, h)
        _tails(batch, lengths, h, fixed)
    else:
        offsets = batch.offsets
        for k0 in range(0, n, _KEYS_PER_PASS):  # a pass's data stays cache-near while its groups gather
            k1 = min(n, k0 + _KEYS_PER_PASS)
            part = KeyBatch(batch.data, offsets[k0 : k1 + 1], None)
            scalar += [k0 + i for i in _grouped_body(part, lengths[k0:k1], h[k0:k1])]
    h ^= h >> np.uint32(13)
    h *= _M
    h ^= h >> np.uint32(15)
    out = h.view(np.int32)
    offsets = batch.offsets
    for i in scalar:
        out[i] = murmur2(batch.data[int(offsets[i]) : int(offsets[i + 1])].tobytes())
    return out


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
