"""C accelerator vs pure numpy vs scalar: identical results for every input, both dispatch paths exercised.

Oracles: the scalar functions (checked elsewhere against kafka-python), Java's published murmur2 test
vectors (Kafka's ``UtilsTest.testMurmur2``, librdkafka's ``unittest_murmur2``) and librdkafka's own
helpers (``confluent_kafka.murmur2/consistent/fnv1a``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext

import confluent_kafka
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_placement.errors import KeyTypeError
from kafka_placement.partitioning import SCHEMES, crc32, fnv1a, murmur2, native, partition_keys, to_key_batch
from kafka_placement.partitioning.native import HashKind

needs_native = pytest.mark.skipif(not native.native_available(), reason="C accelerator not compiled")

SCALAR: dict[HashKind, Callable[[bytes], int]] = {
    "murmur2": lambda k: murmur2(k) & 0xFFFFFFFF,
    "crc32": crc32,
    "fnv1a": fnv1a,
}
KINDS: list[HashKind] = ["murmur2", "crc32", "fnv1a"]
keys_with_nulls = st.lists(st.one_of(st.none(), st.binary(max_size=300)), max_size=60)

REFERENCE_SIGNED = [  # Java Utils.murmur2: Kafka's UtilsTest.testMurmur2, librdkafka's unittest_murmur2
    (b"21", -973932308),
    (b"foobar", -790332482),
    (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
    (b"abc", 479470107),
    (b"kafka", 0xD067CF64 - 2**32),
    (b"", 0x106E08D9),
]


@contextmanager
def c_kernels() -> Iterator[None]:
    """The C kernels on for the block, even under KAFKA_PLACEMENT_NO_NATIVE=1 (which the env test covers)."""
    previous = native._enabled
    native._enabled = True
    try:
        yield
    finally:
        native._enabled = previous


@pytest.fixture(params=["native", "numpy"])
def path(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run the test once with the C kernels, once with the numpy kernels."""
    if request.param == "native":
        if not native.native_available():
            pytest.skip("C accelerator not compiled")
        with c_kernels():
            yield "native"
    else:
        with native.numpy_only():
            yield "numpy"


def _scalar(kind: HashKind, keys: list[bytes | None]) -> list[int]:
    return [SCALAR[kind](b"" if k is None else k) for k in keys]


def _both(fn: Callable[[], object]) -> tuple[object, object]:
    """``fn()`` with the C kernels and with numpy (C not compiled → the numpy result twice)."""
    with c_kernels() if native.native_available() else nullcontext():
        first = fn()
    with native.numpy_only():
        second = fn()
    return first, second


def _tolist(value: object) -> object:
    return value.tolist() if isinstance(value, np.ndarray) else value


# --- scalar == numpy == native -------------------------------------------------------------------------


@given(keys_with_nulls)
def test_hash_batch_native_numpy_scalar_agree(keys: list[bytes | None]) -> None:
    batch = to_key_batch(keys)
    for kind in KINDS:
        c, numpy_ = _both(lambda kind=kind: native.hash_batch(kind, batch).tolist())
        assert c == numpy_ == _scalar(kind, keys)


@needs_native
@given(keys_with_nulls, st.sampled_from([list, tuple]))
def test_hash_list_equals_scalar(keys: list[bytes | None], container: type) -> None:
    for kind in KINDS:
        with c_kernels():
            got = native.hash_list(kind, container(keys))
        assert got is not None
        hashes, nulls, empties = got
        assert hashes.tolist() == _scalar(kind, keys)
        assert (nulls.tolist() if nulls is not None else [False] * len(keys)) == [k is None for k in keys]
        expected_empty = [not k for k in keys]
        assert (empties.tolist() if empties is not None else [False] * len(keys)) == expected_empty


@given(keys_with_nulls, st.sampled_from(sorted(SCHEMES)), st.integers(1, 2**31 - 1), st.integers(0, 2**32))
def test_partition_keys_identical_on_every_path_and_input_form(
    keys: list[bytes | None], scheme: str, n: int, seed: int
) -> None:
    """Same rng seed → same keyless draws: native and numpy results must be identical element by element,
    for list, tuple, numpy object array and pyarrow input; keyed elements equal the scalar index."""
    sch = SCHEMES[scheme]
    forms: list[object] = [keys, tuple(keys), np.array([*keys, b"x"], dtype=object)[:-1]]
    forms.append(pa.array(keys, type=pa.binary()))
    results = []
    for form in forms:
        c, numpy_ = _both(lambda form=form: partition_keys(form, n, scheme, rng=np.random.default_rng(seed)))
        assert _tolist(c) == _tolist(numpy_), form
        results.append(_tolist(c))
    assert all(r == results[0] for r in results)
    if not sch.always_random:
        for key, got in zip(keys, results[0], strict=True):
            if not sch.is_keyless(key):
                assert got == sch.keyed_index(key, n)


@given(
    st.lists(st.one_of(st.none(), st.binary(max_size=300)), min_size=1, max_size=40),
    st.integers(0, 6),
    st.integers(0, 6),
    st.sampled_from([pa.binary(), pa.large_binary()]),
    st.integers(1, 4),
)
def test_arrow_slices_chunks_nulls(
    keys: list[bytes | None], lo: int, cut: int, typ: pa.DataType, chunks: int
) -> None:
    arr = pa.array(keys, type=typ)
    sliced = arr.slice(min(lo, len(keys)), max(len(keys) - lo - cut, 0))
    expected_keys = sliced.to_pylist()
    step = max(1, -(-len(keys) // chunks))
    chunked = pa.chunked_array([arr.slice(i, step) for i in range(0, len(keys), step)], type=typ)
    for form, expected in ((sliced, expected_keys), (chunked, keys)):
        batch = to_key_batch(form)
        for kind in KINDS:
            c, numpy_ = _both(lambda kind=kind, batch=batch: native.hash_batch(kind, batch).tolist())
            assert c == numpy_ == _scalar(kind, expected)


def test_arrow_null_slot_with_bytes(path: str) -> None:
    offsets = pa.py_buffer(np.array([0, 2, 5, 7], dtype=np.int32).tobytes())
    validity = pa.py_buffer(bytes([0b101]))
    arr = pa.Array.from_buffers(pa.binary(), 3, [validity, offsets, pa.py_buffer(b"abXYZcd")], null_count=1)
    got = native.hash_batch("murmur2", to_key_batch(arr)).view(np.int32).tolist()
    assert got == [murmur2(b"ab"), murmur2(b""), murmur2(b"cd")]


@given(st.integers(0, 300), st.integers(1, 50), st.binary(min_size=1, max_size=1))
def test_fixed_length_and_buffer_end(length: int, count: int, fill: bytes) -> None:
    rng = np.random.default_rng(length * 100 + count)
    keys = [rng.bytes(length) for _ in range(count - 1)] + [fill * length]
    for form in (keys, pa.array(keys, type=pa.binary(length)) if length else keys):
        batch = to_key_batch(form)
        c, numpy_ = _both(lambda batch=batch: native.hash_batch("murmur2", batch).tolist())
        assert c == numpy_ == _scalar("murmur2", list(keys))


# --- external oracles ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("data", "expected"), REFERENCE_SIGNED)
def test_reference_vectors(path: str, data: bytes, expected: int) -> None:
    keys = [b"pad", data, b""]
    got = native.hash_batch("murmur2", to_key_batch(keys)).view(np.int32).tolist()
    assert got[1] == expected
    fast = native.hash_list("murmur2", keys)
    if path == "native":
        assert fast is not None
        assert fast[0].view(np.int32).tolist()[1] == expected
    else:
        assert fast is None


@needs_native
@pytest.mark.parametrize(("data", "expected"), REFERENCE_SIGNED)
def test_native_scalar_murmur2_reference(data: bytes, expected: int) -> None:
    from kafka_placement.partitioning import _native

    assert _native.murmur2(data) == expected
    assert _native.murmur2(bytearray(data)) == expected
    assert _native.murmur2(memoryview(data)) == expected


def _random_keys(rng: np.random.Generator, count: int, max_len: int) -> list[bytes]:
    lengths = rng.integers(0, max_len + 1, size=count)
    blob = rng.bytes(int(lengths.sum()))
    out, pos = [], 0
    for ln in lengths.tolist():
        out.append(blob[pos : pos + ln])
        pos += ln
    return out


def test_against_librdkafka_helpers_100k_keys(path: str) -> None:
    rng = np.random.default_rng(4242)
    keys = _random_keys(rng, 100_000, 300)
    n = 1013
    expected = {
        "murmur2": [confluent_kafka.murmur2(k, n) for k in keys],
        "consistent": [confluent_kafka.consistent(k, n) for k in keys],
        "fnv1a": [confluent_kafka.fnv1a(k, n) for k in keys],
    }
    arrow = pa.array(keys, type=pa.binary())
    for scheme, want in expected.items():
        assert partition_keys(keys, n, scheme).tolist() == want, scheme  # list: C hash_list when native
        assert partition_keys(arrow, n, scheme).tolist() == want, scheme  # Arrow buffers in place


# --- remainder ---------------------------------------------------------------------------------------------


@given(st.lists(st.integers(0, 2**32 - 1), max_size=200), st.integers(1, 2**32 - 1), st.booleans())
def test_hash_remainder_matches_python(values: list[int], n: int, positive: bool) -> None:
    h = np.array(values, dtype=np.uint32)
    mask = 0x7FFFFFFF if positive else 0xFFFFFFFF
    c, numpy_ = _both(lambda: native.hash_remainder(h, mask, n).tolist())
    assert c == numpy_ == [(v & mask) % n for v in values]


def test_hash_remainder_edges(path: str) -> None:
    values = [0, 1, 2**31 - 1, 2**31, 2**32 - 2, 2**32 - 1, 12345678]
    h = np.array(values, dtype=np.uint32)
    for n in (1, 2, 3, 12, 2**16, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**40):
        for mask in (0x7FFFFFFF, 0xFFFFFFFF):
            assert native.hash_remainder(h, mask, n).tolist() == [(v & mask) % n for v in values]


# --- dispatch, fallbacks, bad input -------------------------------------------------------------------


def test_list_with_bytes_like_or_bad_items_falls_back(path: str) -> None:
    keys: list[object] = [b"a", bytearray(b"bc"), memoryview(b"def"), None, b""]
    assert native.hash_list("murmur2", keys) is None  # not all bytes/None: the general path takes it
    assert partition_keys(keys, 7, "murmur2").tolist() == [
        SCHEMES["murmur2"].keyed_index(b"" if k is None else bytes(k), 7)  # type: ignore[arg-type]
        for k in keys
    ]
    with pytest.raises(KeyTypeError, match=r"index 2 must be bytes-like, str \(UTF-8\) or None, got int"):
        partition_keys([b"a", None, 3], 7)


@needs_native
def test_native_refuses_bad_buffers() -> None:
    from kafka_placement.partitioning import _native

    data = np.frombuffer(b"abcdef", dtype=np.uint8)
    out = np.empty(2, dtype=np.uint32)
    with pytest.raises(ValueError, match=r"key 1: offsets 3\.\.9 are not a range inside the 6-byte data"):
        _native.hash_offsets(_native.MURMUR2, data, np.array([0, 3, 9], dtype=np.int64), out)
    with pytest.raises(ValueError, match=r"key 0: offsets 4\.\.2"):
        _native.hash_offsets(_native.MURMUR2, data, np.array([4, 2, 3], dtype=np.int32), out)
    with pytest.raises(ValueError, match="key 0: offsets -1"):
        _native.hash_offsets(_native.CRC32, data, np.array([-1, 2, 3], dtype=np.int32), out)
    with pytest.raises(ValueError, match="int32 or int64"):
        _native.hash_offsets(_native.MURMUR2, data, np.array([0, 3, 6], dtype=np.float64), out)
    with pytest.raises(ValueError, match="out must hold 2 4-byte items"):
        _native.hash_offsets(_native.MURMUR2, data, np.array([0, 3, 6]), np.empty(3, np.uint32))
    with pytest.raises(ValueError, match="algo must be"):
        _native.hash_offsets(7, data, np.array([0, 3, 6]), out)
    with pytest.raises(TypeError, match="list or tuple"):
        _native.hash_list(_native.MURMUR2, iter([b"a"]), np.empty(1, np.uint32), np.empty(1, np.uint8))
    with pytest.raises(ValueError, match="n must be in"):
        _native.remainder(out, 0xFFFFFFFF, 0, np.empty(2, np.int64))
    nulls = np.array([False, True])
    _native.hash_offsets(_native.MURMUR2, data, np.array([0, 3, 6]), out, nulls)
    assert out.view(np.int32).tolist() == [murmur2(b"abc"), murmur2(b"")]


@needs_native
def test_threads_hash_in_parallel_without_interference() -> None:
    """Long keys release the GIL (list path: with a reference on every key); results stay exact while
    another thread keeps rebinding items of the same list."""
    rng = np.random.default_rng(99)
    keys = _random_keys(rng, 20_000, 300)
    want = _scalar("murmur2", list(keys))
    shared: list[bytes | None] = list(keys)
    stop = threading.Event()
    errors: list[str] = []

    def churn() -> None:
        i = 0
        while not stop.is_set():
            j = i % len(shared)
            shared[j] = bytes(shared[j])  # type: ignore[arg-type]  # same value, new object; old one freed
            i += 1

    def hash_many() -> None:
        for _ in range(5):
            got = native.hash_list("murmur2", shared)
            if got is None or got[0].tolist() != want:
                errors.append("mismatch")

    workers = [threading.Thread(target=hash_many) for _ in range(2)] + [threading.Thread(target=churn)]
    with c_kernels():
        for w in workers:
            w.start()
        for w in workers[:2]:
            w.join()
    stop.set()
    workers[2].join()
    assert errors == []


def test_env_var_forces_numpy() -> None:
    code = "from kafka_placement.partitioning import native; print(native.native_enabled())"
    env = dict(os.environ, KAFKA_PLACEMENT_NO_NATIVE="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    env.pop("KAFKA_PLACEMENT_NO_NATIVE")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(native.native_available())


@pytest.mark.skipif(shutil.which("gcc") is None and shutil.which("cc") is None, reason="no C compiler here")
def test_accelerator_was_built_where_a_compiler_exists() -> None:
    """`pip install -e .` compiles `_native` (optional=True hides a failed build; this test does not)."""
    assert native.native_available(), "kafka_placement.partitioning._native did not build; see pip's log"


@given(st.binary(max_size=300), st.integers(1, 2**31 - 1))
def test_scalar_record_path_native_equals_reference(key: bytes, n: int) -> None:
    """The adapters' per-record murmur2 (C when enabled) equals the pure-Python reference, every scheme."""
    c, reference = _both(lambda: [native.murmur2_u32(key)] + [s.keyed_index(key, n) for s in HASHED])
    assert c == reference
    assert reference[0] == murmur2(key) & 0xFFFFFFFF


HASHED = [s for s in SCHEMES.values() if not s.always_random]


# --- the AVX2 murmur2 kernel vs the scalar C loop --------------------------------------------------------


@needs_native
@given(
    st.lists(st.one_of(st.none(), st.binary(max_size=70)), max_size=80),
    st.integers(0, 70),
    st.integers(0, 40),
    st.integers(0, 9),
)
def test_simd_kernel_equals_scalar_loop(
    mixed: list[bytes | None], length: int, count: int, skip: int
) -> None:
    """Mixed lengths (the lane-masked path), one length back to back (the transposing path, also sliced
    so the first key starts inside the buffer, int32 and int64 offsets) and the list path: every key
    hashes as the scalar reference with the kernel on and off."""
    rng = np.random.default_rng(length * 1000 + count)
    uniform = [rng.bytes(length) for _ in range(count + skip)]
    forms: list[object] = [mixed, uniform[skip:]]
    for typ in (pa.binary(), pa.large_binary()) + ((pa.binary(length),) if length else ()):
        forms.append(pa.array(uniform, type=typ).slice(skip))
        forms.append(pa.array(mixed, type=pa.large_binary() if typ == pa.large_binary() else pa.binary()))
    with c_kernels():
        for form in forms:
            keys = form.to_pylist() if isinstance(form, pa.Array) else form
            expected = _scalar("murmur2", keys)
            batch = to_key_batch(form)
            with native.simd_off():
                scalar_loop = native.hash_batch("murmur2", batch).tolist()
                scalar_list = native.hash_list("murmur2", list(keys))
            simd = native.hash_batch("murmur2", batch).tolist()
            simd_list = native.hash_list("murmur2", list(keys))
            assert simd == scalar_loop == expected
            assert simd_list is not None and scalar_list is not None
            assert simd_list[0].tolist() == scalar_list[0].tolist() == expected


@given(st.lists(st.binary(max_size=40), min_size=1, max_size=60), st.sampled_from(KINDS))
def test_numpy_s_array_from_its_buffer(keys: list[bytes], kind: HashKind) -> None:
    """A numpy ``S`` array hashed from its buffer (C) equals the numpy path and the scalar hash of each
    item's value (numpy strips trailing NULs, so that value is what a user's code would send)."""
    arr = np.array(keys, dtype=f"S{max(1, max(map(len, keys)))}")
    values = arr.tolist()
    scheme = {"murmur2": "murmur2", "crc32": "consistent", "fnv1a": "fnv1a"}[kind]  # none randomises b""
    c, numpy_ = _both(lambda: partition_keys(arr, 7, scheme).tolist())
    assert c == numpy_
    fast = None
    with c_kernels():
        fast = native.hash_list(kind, arr) if native.native_available() else None
    if fast is not None:
        assert fast[0].tolist() == _scalar(kind, values)
        empties = [len(v) == 0 for v in values]
        assert (fast[2].tolist() if fast[2] is not None else [False] * len(values)) == empties


@pytest.mark.parametrize("width", [16, 17, 40])
def test_numpy_s_array_full_width_chunks(width: int) -> None:
    """Chunks whose items all use the full width (no trailing NUL) take the back-to-back kernel; a NUL at
    the end of one item sends its chunk down the general path. Both equal the scalar hash."""
    rng = np.random.default_rng(width)
    raw = np.frombuffer(rng.bytes(width * 1000), dtype=np.uint8).reshape(1000, width).copy()
    raw[:, -1] |= 1  # no item ends in NUL ...
    raw[600, -1] = 0  # ... except one, in the third chunk
    arr = raw.view(f"S{width}").ravel()
    values = arr.tolist()
    expected = [(murmur2(v) & 0x7FFFFFFF) % 11 for v in values]
    c, numpy_ = _both(lambda: partition_keys(arr, 11).tolist())
    assert c == numpy_ == expected
    with c_kernels(), native.simd_off():
        assert partition_keys(arr, 11).tolist() == expected


@pytest.mark.parametrize("width", [1, 15, 16, 33])
def test_numpy_s_array_empty_and_nul_ended_items(width: int) -> None:
    """Empty items (all NUL) and items ending in NUL bytes, among full-width ones, in chunks the wide
    kernel takes: each hashed as its value without the trailing NULs, the empty ones reported as empty."""
    rng = np.random.default_rng(width)
    raw = np.frombuffer(rng.bytes(width * 300), dtype=np.uint8).reshape(300, width).copy()
    raw[:, -1] |= 1
    raw[[5, 77, 299], :] = 0  # empty
    raw[[6, 150], -1] = 0  # one trailing NUL
    raw[7, max(0, width - 3) :] = 0  # several
    arr = raw.view(f"S{width}").ravel()
    values = arr.tolist()
    with c_kernels():
        fast = native.hash_list("murmur2", arr) if native.native_available() else None
    if fast is None:
        pytest.skip("the C accelerator is not compiled")
    assert fast[0].tolist() == _scalar("murmur2", values)
    empty = [i for i, v in enumerate(values) if not v]
    assert fast[2] is not None and np.flatnonzero(fast[2]).tolist() == empty
    assert (
        partition_keys(arr, 9, "consistent_random", rng=np.random.default_rng(1)).tolist()
        == _both(lambda: partition_keys(arr, 9, "consistent_random", rng=np.random.default_rng(1)).tolist())[
            1
        ]
    )
