/*
 * Optional C accelerator for batch key hashing (kafka_placement.partitioning._native).
 *
 * The pure-numpy path (vectorized.py) is the fallback and the cross-check: every function here must give
 * exactly what kafka_placement.partitioning.murmur2 / librdkafka_hashes give for every key (property-tested).
 *
 *   hash_offsets(algo, data, offsets, out, nulls=None) -> None
 *       Keys in Arrow's binary layout: key i is data[offsets[i]:offsets[i+1]]. data: any contiguous
 *       byte buffer; offsets: int32 or int64 buffer of n+1 entries (validated: 0 <= start <= end <=
 *       len(data), else ValueError naming the key); out: writable 4-byte-item buffer of n entries;
 *       nulls: optional 1-byte-item buffer of n flags, a non-zero flag hashes that key as b"".
 *   hash_list(algo, keys, out, flags) -> (bad_index, none_count, empty_count)
 *       keys: a list or tuple of bytes / None, read in place (no join). flags[i] = 0 non-empty bytes,
 *       1 None (hashed as b""), 2 b"". Stops at the first item that is neither bytes nor None and returns
 *       its index (the caller falls back to the general path); bad_index is -1 when all were taken.
 *   hash_fixed(algo, data, width, out) -> number of empty keys
 *       A numpy "S<width>" array's buffer: key i is its item i without trailing NUL bytes (numpy's
 *       reading of an S item).
 *   remainder(hashes, mask, n, out) -> None
 *       out[i] = (hashes[i] & mask) % n: uint32 hashes in, int64 partition indices out (1 <= n < 2**32).
 *   murmur2(data) -> int   Kafka Utils.murmur2 of one bytes-like object, signed 32-bit.
 *   simd([enable]) -> bool  whether murmur2 batches run eight keys at a time with AVX2 (off: scalar).
 *   Router                  a producer's keyed-record hot path (_router.c).
 *   one_key, one_key_schemes, one_key_enabled
 *                           partition_key and the per-scheme scalar functions in C (_one_key.c).
 *
 * algo: MURMUR2 (Kafka Utils.murmur2, written as its signed int32 bits), CRC32 (zlib / librdkafka
 * rd_crc32, unsigned) or FNV1A (librdkafka rd_fnv1a: abs of the signed FNV-1a-32, as uint32).
 * The hashing loops run without the GIL. The list path reads a chunk of items under the GIL; a chunk
 * of long keys (>= NOGIL_MIN_BYTES) gets a reference to each key, is hashed without the GIL and the
 * references are dropped afterwards, so another thread mutating the list cannot free a key under us; a
 * chunk of short keys is hashed at once under the GIL (refcounting would cost more than the hashing).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_hash_kernels.h"

int kp_add_router(PyObject *module); /* _router.c */
int kp_add_one_key(PyObject *module); /* _one_key.c */

uint32_t kp_crc_table[8][256];

void kp_crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1u) ? (c >> 1) ^ CRC_POLY : c >> 1;
        kp_crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            kp_crc_table[t][i] = (kp_crc_table[t - 1][i] >> 8) ^ kp_crc_table[0][kp_crc_table[t - 1][i] & 0xffu];
}

/* murmur2 of many keys given as (pointer, length). With AVX2 (checked at run time, so the extension
 * still runs on any x86-64 and elsewhere) eight keys are hashed side by side: one lane per key, a
 * masked gather loads each lane's next 4-byte block, lanes whose key has no more blocks keep their
 * state. The few tail bytes (len % 4) are folded in per lane, then the finalisation runs on all eight.
 * Every lane computes exactly murmur2_one (cross-checked in the tests against the scalar path). */
static void murmur2_ptrs_scalar(const unsigned char *const *ptrs, const Py_ssize_t *lens, Py_ssize_t n,
                                uint32_t *out)
{
    for (Py_ssize_t i = 0; i < n; i++)
        out[i] = murmur2_one(ptrs[i], lens[i]);
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define HAVE_AVX2_KERNEL 1

__attribute__((target("avx2"))) static inline __m256i mm_block(__m256i h, __m256i k, __m256i m)
{
    k = _mm256_mullo_epi32(k, m);
    k = _mm256_xor_si256(k, _mm256_srli_epi32(k, 24));
    k = _mm256_mullo_epi32(k, m);
    return _mm256_xor_si256(_mm256_mullo_epi32(h, m), k);
}

/* Eight keys of one length len >= 16 (anywhere in memory): sixteen bytes of each key are loaded at
 * once and transposed, so each vector holds the same 4-byte block of all eight keys. Returns the state
 * before the tail bytes and the finalisation. */
__attribute__((target("avx2"))) static inline __m256i mm_same_length8(const unsigned char *const *keys,
                                                                      Py_ssize_t len, __m256i m)
{
    __m256i h = _mm256_set1_epi32((int)(MM_SEED ^ (uint32_t)len));
    const Py_ssize_t blocks = len >> 2;
    Py_ssize_t b = 0;
#define ROWS(j) _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(keys[j] + 4 * b))), \
                                        _mm_loadu_si128((const __m128i *)(keys[(j) + 4] + 4 * b)), 1)
    for (; b + 4 <= blocks; b += 4) {
        const __m256i r0 = ROWS(0), r1 = ROWS(1), r2 = ROWS(2), r3 = ROWS(3);
        const __m256i t0 = _mm256_unpacklo_epi32(r0, r1), t1 = _mm256_unpackhi_epi32(r0, r1);
        const __m256i t2 = _mm256_unpacklo_epi32(r2, r3), t3 = _mm256_unpackhi_epi32(r2, r3);
        h = mm_block(h, _mm256_unpacklo_epi64(t0, t2), m);
        h = mm_block(h, _mm256_unpackhi_epi64(t0, t2), m);
        h = mm_block(h, _mm256_unpacklo_epi64(t1, t3), m);
        h = mm_block(h, _mm256_unpackhi_epi64(t1, t3), m);
    }
#undef ROWS
    for (; b < blocks; b++) {
        const Py_ssize_t at = 4 * b;
        const __m256i k = _mm256_setr_epi32((int)load_le32(keys[0] + at), (int)load_le32(keys[1] + at),
                                            (int)load_le32(keys[2] + at), (int)load_le32(keys[3] + at),
                                            (int)load_le32(keys[4] + at), (int)load_le32(keys[5] + at),
                                            (int)load_le32(keys[6] + at), (int)load_le32(keys[7] + at));
        h = mm_block(h, k, m);
    }
    return h;
}

/* Tail bytes (len % 4) of eight keys of one length, then the finalisation; stores the eight hashes. */
__attribute__((target("avx2"))) static inline void mm_finish8(__m256i h, const unsigned char *const *keys,
                                                              const int32_t *len32, uint32_t *out, __m256i m)
{
    int32_t tails = 0;
    for (int j = 0; j < 8; j++)
        tails |= len32[j] & 3;
    if (tails) {
        uint32_t hv[8];
        _mm256_storeu_si256((__m256i *)hv, h);
        for (int j = 0; j < 8; j++) {
            const unsigned char *tail = keys[j] + (len32[j] & ~3);
            switch (len32[j] & 3) {
            case 3:
                hv[j] ^= (uint32_t)tail[2] << 16;
                /* fall through */
            case 2:
                hv[j] ^= (uint32_t)tail[1] << 8;
                /* fall through */
            case 1:
                hv[j] ^= (uint32_t)tail[0];
                hv[j] *= MM_M;
            }
        }
        h = _mm256_loadu_si256((const __m256i *)hv);
    }
    h = _mm256_xor_si256(h, _mm256_srli_epi32(h, 13));
    h = _mm256_mullo_epi32(h, m);
    h = _mm256_xor_si256(h, _mm256_srli_epi32(h, 15));
    _mm256_storeu_si256((__m256i *)out, h);
}

/* murmur2 of n keys of length len stored back to back from base (see offsets_uniform). */
__attribute__((target("avx2"))) static void murmur2_uniform_avx2(const unsigned char *base, Py_ssize_t len,
                                                                 Py_ssize_t n, uint32_t *out)
{
    const __m256i m = _mm256_set1_epi32((int)MM_M);
    int32_t len32[8];
    for (int j = 0; j < 8; j++)
        len32[j] = (int32_t)len;
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const unsigned char *group = base + i * len;
        const unsigned char *keys[8];
        for (int j = 0; j < 8; j++)
            keys[j] = group + j * len;
        mm_finish8(mm_same_length8(keys, len, m), keys, len32, out + i, m);
    }
    for (; i < n; i++)
        out[i] = murmur2_one(base + i * len, len);
}

__attribute__((target("avx2"))) static void murmur2_ptrs_avx2(const unsigned char *const *ptrs,
                                                              const Py_ssize_t *lens, Py_ssize_t n,
                                                              uint32_t *out)
{
    const __m256i m = _mm256_set1_epi32((int)MM_M);
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        int32_t len32[8], nb32[8];
        int32_t max_nb = 0;
        for (int j = 0; j < 8; j++) {
            len32[j] = (int32_t)lens[i + j];
            nb32[j] = (int32_t)(lens[i + j] >> 2);
            max_nb = nb32[j] > max_nb ? nb32[j] : max_nb;
        }
        const unsigned char *const *p = ptrs + i;
        int same_length = len32[0] >= 16;
        for (int j = 1; j < 8 && same_length; j++)
            same_length = lens[i + j] == lens[i];
        __m256i h;
        if (same_length) {
            h = mm_same_length8(p, lens[i], m);
        }
        else {
            h = _mm256_xor_si256(_mm256_set1_epi32((int)MM_SEED), _mm256_loadu_si256((const __m256i *)len32));
            const __m256i nb = _mm256_loadu_si256((const __m256i *)nb32);
            static const unsigned char zero4[4] = {0, 0, 0, 0};
            for (int32_t b = 0; b < max_nb; b++) {
                const __m256i active = _mm256_cmpgt_epi32(nb, _mm256_set1_epi32(b));
                /* lane loads through a select of the address: a finished lane reads four zero bytes, never
                 * past its key; filling the vector from registers beats the gather instruction here */
#define LANE(j) load_le32(b < nb32[j] ? p[j] + 4 * (Py_ssize_t)b : zero4)
                const __m256i k = _mm256_setr_epi32((int)LANE(0), (int)LANE(1), (int)LANE(2), (int)LANE(3),
                                                    (int)LANE(4), (int)LANE(5), (int)LANE(6), (int)LANE(7));
#undef LANE
                h = _mm256_blendv_epi8(h, mm_block(h, k, m), active);
            }
        }
        mm_finish8(h, p, len32, out + i, m);
    }
    murmur2_ptrs_scalar(ptrs + i, lens + i, n - i, out + i);
}
#endif

static int use_avx2 = 0; /* set at module init from the CPU's feature bits */

static void murmur2_ptrs(const unsigned char *const *ptrs, const Py_ssize_t *lens, Py_ssize_t n, uint32_t *out)
{
#ifdef HAVE_AVX2_KERNEL
    if (use_avx2) {
        murmur2_ptrs_avx2(ptrs, lens, n, out);
        return;
    }
#endif
    murmur2_ptrs_scalar(ptrs, lens, n, out);
}

static int check_algo(int algo)
{
    if (algo != ALGO_MURMUR2 && algo != ALGO_CRC32 && algo != ALGO_FNV1A) {
        PyErr_Format(PyExc_ValueError, "algo must be MURMUR2 (0), CRC32 (1) or FNV1A (2), got %d", algo);
        return -1;
    }
    return 0;
}

/* The item type character of a buffer format ("i", "<q", "=l", ...); 0 if byte order is not native. */
static char format_char(const char *fmt)
{
    if (fmt == NULL)
        return 'B';
    if (*fmt == '@' || *fmt == '=')
        fmt++;
    else if (*fmt == '<' || *fmt == '>' || *fmt == '!') {
        const uint16_t probe = 1;
        int little = *(const unsigned char *)&probe == 1;
        if ((*fmt == '<') != little)
            return 0;
        fmt++;
    }
    return fmt[0] != '\0' && fmt[1] == '\0' ? fmt[0] : 0;
}

static int get_out(PyObject *obj, Py_buffer *view, Py_ssize_t n, const char *what)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    if (view->itemsize != 4 || view->len != 4 * n) {
        PyErr_Format(PyExc_ValueError, "%s must hold %zd 4-byte items, got %zd bytes of %zd-byte items",
                     what, n, view->len, view->itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static int get_bytes(PyObject *obj, Py_buffer *view, Py_ssize_t n, const char *what, int writable)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0)
        return -1;
    if (view->itemsize != 1 || (n >= 0 && view->len != n)) {
        PyErr_Format(PyExc_ValueError, "%s must hold %zd 1-byte items, got %zd bytes of %zd-byte items",
                     what, n, view->len, view->itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static inline int64_t offset_at(const char *base, Py_ssize_t i, int wide)
{
    if (wide) {
        int64_t v;
        memcpy(&v, base + 8 * i, 8);
        return v;
    }
    int32_t v;
    memcpy(&v, base + 4 * i, 4);
    return v;
}

/* Offsets that step by one length len >= 16 from a valid start to an end inside the buffer: keys laid
 * out back to back (fixed_size_binary, or a binary array of equal-length keys). */
static int offsets_uniform(const char *offs, int wide, Py_ssize_t n, int64_t size, int64_t *len_out)
{
    if (n < 8)
        return 0;
    const int64_t start = offset_at(offs, 0, wide);
    const int64_t len = offset_at(offs, 1, wide) - start;
    if (start < 0 || len < 16 || len > INT32_MAX || offset_at(offs, n, wide) != start + len * (int64_t)n ||
        start + len * (int64_t)n > size)
        return 0;
    if (wide) {
        const int64_t *o = (const int64_t *)offs; /* numpy/Arrow buffers are aligned */
        for (Py_ssize_t i = 1; i < n; i++)
            if (o[i] != start + len * (int64_t)i)
                return 0;
    }
    else {
        const int32_t *o = (const int32_t *)offs;
        for (Py_ssize_t i = 1; i < n; i++)
            if ((int64_t)o[i] != start + len * (int64_t)i)
                return 0;
    }
    *len_out = len;
    return 1;
}

#define PTR_CHUNK 256

/* Hash keys [0, n); returns the index of the first key whose offsets are out of range, or -1. */
static Py_ssize_t hash_offsets_loop(int algo, const unsigned char *data, int64_t size, const char *offs,
                                    int wide, const unsigned char *nulls, Py_ssize_t n, uint32_t *out)
{
    int64_t start = offset_at(offs, 0, wide);
#ifdef HAVE_AVX2_KERNEL
    int64_t same_len;
    if (algo == ALGO_MURMUR2 && use_avx2 && nulls == NULL && offsets_uniform(offs, wide, n, size, &same_len)) {
        murmur2_uniform_avx2(data + start, (Py_ssize_t)same_len, n, out);
        return -1;
    }
#endif
    if (algo == ALGO_MURMUR2) {
        /* validated (pointer, length) chunks for the eight-lane kernel */
        const unsigned char *ptrs[PTR_CHUNK];
        Py_ssize_t lens[PTR_CHUNK];
        for (Py_ssize_t lo = 0; lo < n; lo += PTR_CHUNK) {
            Py_ssize_t hi = lo + PTR_CHUNK < n ? lo + PTR_CHUNK : n;
            for (Py_ssize_t i = lo; i < hi; i++) {
                int64_t end = offset_at(offs, i + 1, wide);
                if (start < 0 || end < start || end > size)
                    return i;
                ptrs[i - lo] = data + start;
                lens[i - lo] = (nulls != NULL && nulls[i]) ? 0 : (Py_ssize_t)(end - start);
                start = end;
            }
            murmur2_ptrs(ptrs, lens, hi - lo, out + lo);
        }
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t end = offset_at(offs, i + 1, wide);
        if (start < 0 || end < start || end > size)
            return i;
        Py_ssize_t len = (nulls != NULL && nulls[i]) ? 0 : (Py_ssize_t)(end - start);
        const unsigned char *p = data + start;
        if (algo == ALGO_CRC32) /* the branch outside the per-key call lets each loop inline its hash */
            out[i] = crc32_one(p, len);
        else
            out[i] = fnv1a_one(p, len);
        start = end;
    }
    return -1;
}

static PyObject *py_hash_offsets(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"algo", "data", "offsets", "out", "nulls", NULL};
    int algo;
    PyObject *data_obj, *off_obj, *out_obj, *nulls_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iOOO|O:hash_offsets", kwlist, &algo, &data_obj, &off_obj,
                                     &out_obj, &nulls_obj))
        return NULL;
    if (check_algo(algo) < 0)
        return NULL;
    Py_buffer data, offs, out, nulls;
    int have_nulls = nulls_obj != Py_None;
    if (get_bytes(data_obj, &data, -1, "data", 0) < 0)
        return NULL;
    if (PyObject_GetBuffer(off_obj, &offs, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&data);
        return NULL;
    }
    char fc = format_char(offs.format);
    int wide = offs.itemsize == 8;
    if (!((offs.itemsize == 4 || offs.itemsize == 8) && (fc == 'i' || fc == 'l' || fc == 'q')) ||
        offs.len < offs.itemsize) {
        PyErr_Format(PyExc_ValueError,
                     "offsets must be a non-empty int32 or int64 buffer, got format %s, %zd bytes",
                     offs.format ? offs.format : "B", offs.len);
        PyBuffer_Release(&offs);
        PyBuffer_Release(&data);
        return NULL;
    }
    Py_ssize_t n = offs.len / offs.itemsize - 1;
    if (get_out(out_obj, &out, n, "out") < 0) {
        PyBuffer_Release(&offs);
        PyBuffer_Release(&data);
        return NULL;
    }
    if (have_nulls && get_bytes(nulls_obj, &nulls, n, "nulls", 0) < 0) {
        PyBuffer_Release(&out);
        PyBuffer_Release(&offs);
        PyBuffer_Release(&data);
        return NULL;
    }
    Py_ssize_t bad;
    Py_BEGIN_ALLOW_THREADS;
    bad = hash_offsets_loop(algo, (const unsigned char *)data.buf, (int64_t)data.len, (const char *)offs.buf,
                            wide, have_nulls ? (const unsigned char *)nulls.buf : NULL, n,
                            (uint32_t *)out.buf);
    Py_END_ALLOW_THREADS;
    if (bad >= 0)
        PyErr_Format(PyExc_ValueError,
                     "key %zd: offsets %lld..%lld are not a range inside the %zd-byte data buffer", bad,
                     (long long)offset_at((const char *)offs.buf, bad, wide),
                     (long long)offset_at((const char *)offs.buf, bad + 1, wide), data.len);
    if (have_nulls)
        PyBuffer_Release(&nulls);
    PyBuffer_Release(&out);
    PyBuffer_Release(&offs);
    PyBuffer_Release(&data);
    if (bad >= 0)
        return NULL;
    Py_RETURN_NONE;
}

#define LIST_CHUNK 4096

static void hash_chunk(int algo, const unsigned char *const *ptrs, const Py_ssize_t *lens, Py_ssize_t n,
                       uint32_t *out)
{
    if (algo == ALGO_MURMUR2) {
        murmur2_ptrs(ptrs, lens, n, out);
        return;
    }
    for (Py_ssize_t j = 0; j < n; j++)
        out[j] = hash_one(algo, ptrs[j], lens[j]);
}
/* A chunk with fewer key bytes than this is hashed holding the GIL (tens of microseconds at most, like
 * CPython's bytes.join, which also keeps the GIL below a size threshold); larger chunks take a reference
 * to each key and release the GIL while hashing. */
#define NOGIL_MIN_BYTES (256 * 1024)

/* The length of a numpy S item of `width` bytes at p: without its trailing NUL bytes, as numpy reads it. */
static inline Py_ssize_t s_item_length(const unsigned char *p, Py_ssize_t width)
{
    while (width > 0 && p[width - 1] == 0)
        width--;
    return width;
}

/* Keys of a numpy fixed-width bytes ("S<width>") array: item i is data[i*width:(i+1)*width] with its
 * trailing NUL bytes stripped, as numpy reads an S item. Returns how many keys are empty (all NUL). */
static PyObject *py_hash_fixed(PyObject *self, PyObject *args)
{
    int algo;
    Py_ssize_t width;
    PyObject *data_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "iOnO:hash_fixed", &algo, &data_obj, &width, &out_obj))
        return NULL;
    if (check_algo(algo) < 0)
        return NULL;
    Py_buffer data, out;
    if (get_bytes(data_obj, &data, -1, "data", 0) < 0)
        return NULL;
    if (width < 1 || width > INT32_MAX || data.len % width != 0) {
        PyErr_Format(PyExc_ValueError, "width must be in [1, 2**31) and divide the %zd-byte buffer, got %zd",
                     data.len, width);
        PyBuffer_Release(&data);
        return NULL;
    }
    const Py_ssize_t n = data.len / width;
    if (get_out(out_obj, &out, n, "out") < 0) {
        PyBuffer_Release(&data);
        return NULL;
    }
    const unsigned char *base = (const unsigned char *)data.buf;
    uint32_t *hashes = (uint32_t *)out.buf;
    Py_ssize_t empties = 0;
    Py_BEGIN_ALLOW_THREADS;
    const unsigned char *ptrs[PTR_CHUNK];
    Py_ssize_t lens[PTR_CHUNK];
    for (Py_ssize_t lo = 0; lo < n; lo += PTR_CHUNK) {
        const Py_ssize_t hi = lo + PTR_CHUNK < n ? lo + PTR_CHUNK : n;
#ifdef HAVE_AVX2_KERNEL
        if (algo == ALGO_MURMUR2 && use_avx2 && width >= 16) {
            /* all items at full width, then again, one by one, the few that end in NUL (1 in 256 of
             * random keys: most chunks have one, so skipping the kernel for them lost it); only the last
             * byte of the others is read again */
            murmur2_uniform_avx2(base + lo * width, width, hi - lo, hashes + lo);
            for (Py_ssize_t i = lo; i < hi; i++) {
                const unsigned char *p = base + i * width;
                if (p[width - 1] != 0)
                    continue;
                const Py_ssize_t len = s_item_length(p, width);
                empties += len == 0;
                hashes[i] = murmur2_one(p, len);
            }
            continue;
        }
#endif
        for (Py_ssize_t i = lo; i < hi; i++) {
            const unsigned char *p = base + i * width;
            const Py_ssize_t len = s_item_length(p, width);
            empties += len == 0;
            ptrs[i - lo] = p;
            lens[i - lo] = len;
        }
        hash_chunk(algo, ptrs, lens, hi - lo, hashes + lo);
    }
    Py_END_ALLOW_THREADS;
    PyBuffer_Release(&out);
    PyBuffer_Release(&data);
    return PyLong_FromSsize_t(empties);
}

static PyObject *py_hash_list(PyObject *self, PyObject *args)
{
    int algo;
    PyObject *seq, *out_obj, *flags_obj;
    if (!PyArg_ParseTuple(args, "iOOO:hash_list", &algo, &seq, &out_obj, &flags_obj))
        return NULL;
    if (check_algo(algo) < 0)
        return NULL;
    if (!PyList_Check(seq) && !PyTuple_Check(seq)) {
        PyErr_Format(PyExc_TypeError, "keys must be a list or tuple, got %.80s", Py_TYPE(seq)->tp_name);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    Py_buffer out, flags;
    if (get_out(out_obj, &out, n, "out") < 0)
        return NULL;
    if (get_bytes(flags_obj, &flags, n, "flags", 1) < 0) {
        PyBuffer_Release(&out);
        return NULL;
    }
    uint32_t *hashes = (uint32_t *)out.buf;
    unsigned char *fl = (unsigned char *)flags.buf;
    const unsigned char **ptrs = PyMem_Malloc(LIST_CHUNK * sizeof(*ptrs));
    Py_ssize_t *lens = PyMem_Malloc(LIST_CHUNK * sizeof(*lens));
    PyObject **held = PyMem_Malloc(LIST_CHUNK * sizeof(*held));
    Py_ssize_t bad = -1, nones = 0, empties = 0;
    int failed = 0;
    static const unsigned char empty[1] = {0};
    if (ptrs == NULL || lens == NULL || held == NULL) {
        PyErr_NoMemory();
        failed = 1;
    }
    Py_INCREF(seq);
    for (Py_ssize_t lo = 0; !failed && bad < 0 && lo < n; lo += LIST_CHUNK) {
        if (PySequence_Fast_GET_SIZE(seq) != n) {
            PyErr_SetString(PyExc_RuntimeError, "key list changed size while it was being hashed");
            failed = 1;
            break;
        }
        PyObject **items = PySequence_Fast_ITEMS(seq);
        Py_ssize_t hi = lo + LIST_CHUNK < n ? lo + LIST_CHUNK : n, taken = 0;
        size_t chunk_bytes = 0;
        for (Py_ssize_t i = lo; i < hi; i++, taken++) {
            PyObject *item = items[i];
#if defined(__GNUC__)
            if (i + 96 < hi) /* ~100 ns of memory latency at a few ns per item: fetch well ahead */
                __builtin_prefetch(items[i + 96]); /* the object header: type and size are read next */
#endif
            if (PyBytes_Check(item)) {
                Py_ssize_t len = PyBytes_GET_SIZE(item);
                ptrs[taken] = (const unsigned char *)PyBytes_AS_STRING(item);
                lens[taken] = len;
                fl[i] = len ? 0 : 2;
                empties += len == 0;
                chunk_bytes += (size_t)len;
            }
            else if (item == Py_None) {
                ptrs[taken] = empty;
                lens[taken] = 0;
                fl[i] = 1;
                nones++;
            }
            else {
                bad = i;
                break;
            }
            held[taken] = item;
        }
        if (chunk_bytes < NOGIL_MIN_BYTES) {
            /* short keys: hashing the chunk takes microseconds; keep the GIL, skip the refcounting */
            hash_chunk(algo, ptrs, lens, taken, hashes + lo);
            continue;
        }
        for (Py_ssize_t j = 0; j < taken; j++)
            Py_INCREF(held[j]); /* keeps every key alive while the list may change without the GIL */
        Py_BEGIN_ALLOW_THREADS;
        hash_chunk(algo, ptrs, lens, taken, hashes + lo);
        Py_END_ALLOW_THREADS;
        for (Py_ssize_t j = 0; j < taken; j++)
            Py_DECREF(held[j]);
    }
    Py_DECREF(seq);
    PyMem_Free(ptrs);
    PyMem_Free(lens);
    PyMem_Free(held);
    PyBuffer_Release(&flags);
    PyBuffer_Release(&out);
    if (failed)
        return NULL;
    return Py_BuildValue("(nnn)", bad, nones, empties);
}

/* (h & mask) % n for every hash, into int64 partition indices. n is a loop constant: with 128-bit
 * integers the remainder uses a precomputed 64-bit reciprocal (Lemire, Kaser & Kurz 2019, "Faster
 * remainder by direct computation"), exact for every 32-bit h and 1 <= n < 2**32. */
static void remainder_loop(const uint32_t *h, Py_ssize_t count, uint32_t mask, uint32_t n, int64_t *out)
{
#ifdef __SIZEOF_INT128__
    const uint64_t recip = UINT64_MAX / n + 1; /* wraps to 0 for n == 1: every remainder is then 0 */
    for (Py_ssize_t i = 0; i < count; i++) {
        uint64_t low = recip * (uint64_t)(h[i] & mask);
        out[i] = (int64_t)(((__uint128_t)low * n) >> 64);
    }
#else
    for (Py_ssize_t i = 0; i < count; i++)
        out[i] = (int64_t)((h[i] & mask) % n);
#endif
}

static PyObject *py_remainder(PyObject *self, PyObject *args)
{
    PyObject *h_obj, *out_obj;
    unsigned long long mask, n;
    if (!PyArg_ParseTuple(args, "OKKO:remainder", &h_obj, &mask, &n, &out_obj))
        return NULL;
    if (n < 1 || n > UINT32_MAX || mask > UINT32_MAX) {
        PyErr_Format(PyExc_ValueError, "n must be in [1, 2**32 - 1] and mask a 32-bit value, got n=%llu mask=%llu",
                     n, mask);
        return NULL;
    }
    Py_buffer h, out;
    if (PyObject_GetBuffer(h_obj, &h, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    if (h.itemsize != 4) {
        PyErr_Format(PyExc_ValueError, "hashes must be 4-byte items, got %zd-byte items", h.itemsize);
        PyBuffer_Release(&h);
        return NULL;
    }
    Py_ssize_t count = h.len / 4;
    if (PyObject_GetBuffer(out_obj, &out, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&h);
        return NULL;
    }
    if (out.itemsize != 8 || out.len != 8 * count) {
        PyErr_Format(PyExc_ValueError, "out must hold %zd 8-byte items, got %zd bytes of %zd-byte items", count,
                     out.len, out.itemsize);
        PyBuffer_Release(&out);
        PyBuffer_Release(&h);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS;
    remainder_loop((const uint32_t *)h.buf, count, (uint32_t)mask, (uint32_t)n, (int64_t *)out.buf);
    Py_END_ALLOW_THREADS;
    PyBuffer_Release(&out);
    PyBuffer_Release(&h);
    Py_RETURN_NONE;
}

static PyObject *py_simd(PyObject *self, PyObject *args)
{
    int enable = -1;
    if (!PyArg_ParseTuple(args, "|i:simd", &enable))
        return NULL;
#ifdef HAVE_AVX2_KERNEL
    if (enable == 0)
        use_avx2 = 0;
    else if (enable > 0)
        use_avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
#endif
    return PyBool_FromLong(use_avx2);
}

static PyObject *py_murmur2(PyObject *self, PyObject *arg)
{
    uint32_t h;
    if (PyBytes_Check(arg)) {
        h = murmur2_one((const unsigned char *)PyBytes_AS_STRING(arg), PyBytes_GET_SIZE(arg));
    }
    else {
        Py_buffer view;
        if (PyObject_GetBuffer(arg, &view, PyBUF_C_CONTIGUOUS) < 0)
            return NULL;
        h = murmur2_one((const unsigned char *)view.buf, view.len);
        PyBuffer_Release(&view);
    }
    return PyLong_FromLong((long)(int32_t)h);
}

static PyMethodDef native_methods[] = {
    {"hash_offsets", (PyCFunction)(void (*)(void))py_hash_offsets, METH_VARARGS | METH_KEYWORDS,
     "hash_offsets(algo, data, offsets, out, nulls=None): hash every key of an Arrow-layout batch into out."},
    {"hash_list", py_hash_list, METH_VARARGS,
     "hash_list(algo, keys, out, flags) -> (bad_index, none_count, empty_count): hash a list of bytes/None."},
    {"remainder", py_remainder, METH_VARARGS,
     "remainder(hashes, mask, n, out): out[i] = (hashes[i] & mask) % n as int64 (unsigned 32-bit hashes)."},
    {"hash_fixed", py_hash_fixed, METH_VARARGS,
     "hash_fixed(algo, data, width, out) -> int: hash every item of a numpy S<width> buffer (trailing NULs "
     "stripped, as numpy reads items); returns how many keys are empty."},
    {"simd", py_simd, METH_VARARGS,
     "simd([enable]) -> bool: whether murmur2 batches use the eight-lane AVX2 kernel (0 turns it off, 1 "
     "back on where the CPU has AVX2)."},
    {"murmur2", py_murmur2, METH_O, "murmur2(data) -> int: Kafka Utils.murmur2 of one key, signed 32-bit."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_native",
    .m_doc = "C accelerator for batch key hashing (murmur2, crc32, fnv1a).",
    .m_size = -1,
    .m_methods = native_methods,
};

PyMODINIT_FUNC PyInit__native(void)
{
    kp_crc_init();
#ifdef HAVE_AVX2_KERNEL
    __builtin_cpu_init();
    use_avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
#endif
    PyObject *m = PyModule_Create(&native_module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "MURMUR2", ALGO_MURMUR2) < 0 ||
        PyModule_AddIntConstant(m, "CRC32", ALGO_CRC32) < 0 ||
        PyModule_AddIntConstant(m, "FNV1A", ALGO_FNV1A) < 0 || kp_add_router(m) < 0 ||
        kp_add_one_key(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
