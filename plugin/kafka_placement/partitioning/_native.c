/*
 * Optional C accelerator for batch key hashing (kafka_placement.partitioning._native).
 *
 * The pure-numpy path (vectorized.py) is the fallback and the cross-check: every function here must give
 * exactly what kafka_placement.partitioning.murmur2 / hashes give for every key (property-tested).
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
 *   remainder(hashes, mask, n, out) -> None
 *       out[i] = (hashes[i] & mask) % n: uint32 hashes in, int64 partition indices out (1 <= n < 2**32).
 *   murmur2(data) -> int   Kafka Utils.murmur2 of one bytes-like object, signed 32-bit.
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

enum { ALGO_MURMUR2 = 0, ALGO_CRC32 = 1, ALGO_FNV1A = 2 };

#define MM_SEED 0x9747b28cu
#define MM_M 0x5bd1e995u
#define FNV_OFFSET 0x811c9dc5u
#define FNV_PRIME 0x01000193u
#define CRC_POLY 0xedb88320u

static uint32_t crc_table[8][256];

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1u) ? (c >> 1) ^ CRC_POLY : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xffu];
}

/* little-endian 32-bit load from any address (one mov on x86, correct on big-endian hosts too) */
static inline uint32_t load_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint32_t murmur2_one(const unsigned char *p, Py_ssize_t len)
{
    uint32_t h = MM_SEED ^ (uint32_t)len;
    Py_ssize_t nblocks = len >> 2;
    for (Py_ssize_t i = 0; i < nblocks; i++, p += 4) {
        uint32_t k = load_le32(p) * MM_M;
        k ^= k >> 24;
        k *= MM_M;
        h = (h * MM_M) ^ k;
    }
    switch (len & 3) {
    case 3:
        h ^= (uint32_t)p[2] << 16;
        /* fall through */
    case 2:
        h ^= (uint32_t)p[1] << 8;
        /* fall through */
    case 1:
        h ^= (uint32_t)p[0];
        h *= MM_M;
    }
    h ^= h >> 13;
    h *= MM_M;
    h ^= h >> 15;
    return h;
}

static inline uint32_t crc32_one(const unsigned char *p, Py_ssize_t len)
{
    uint32_t c = 0xffffffffu;
    while (len >= 8) {
        uint32_t a = load_le32(p) ^ c;
        uint32_t b = load_le32(p + 4);
        c = crc_table[7][a & 0xffu] ^ crc_table[6][(a >> 8) & 0xffu] ^ crc_table[5][(a >> 16) & 0xffu] ^
            crc_table[4][a >> 24] ^ crc_table[3][b & 0xffu] ^ crc_table[2][(b >> 8) & 0xffu] ^
            crc_table[1][(b >> 16) & 0xffu] ^ crc_table[0][b >> 24];
        p += 8;
        len -= 8;
    }
    while (len-- > 0)
        c = crc_table[0][(c ^ *p++) & 0xffu] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

static inline uint32_t fnv1a_one(const unsigned char *p, Py_ssize_t len)
{
    uint32_t h = FNV_OFFSET;
    for (Py_ssize_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= FNV_PRIME;
    }
    /* librdkafka: abs() of the signed value (Sarama); INT32_MIN stays 0x80000000 */
    return (h & 0x80000000u) ? (uint32_t)0u - h : h;
}

static inline uint32_t hash_one(int algo, const unsigned char *p, Py_ssize_t len)
{
    switch (algo) {
    case ALGO_MURMUR2:
        return murmur2_one(p, len);
    case ALGO_CRC32:
        return crc32_one(p, len);
    default:
        return fnv1a_one(p, len);
    }
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

/* Hash keys [0, n); returns the index of the first key whose offsets are out of range, or -1. */
static Py_ssize_t hash_offsets_loop(int algo, const unsigned char *data, int64_t size, const char *offs,
                                    int wide, const unsigned char *nulls, Py_ssize_t n, uint32_t *out)
{
    int64_t start = offset_at(offs, 0, wide);
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t end = offset_at(offs, i + 1, wide);
        if (start < 0 || end < start || end > size)
            return i;
        Py_ssize_t len = (nulls != NULL && nulls[i]) ? 0 : (Py_ssize_t)(end - start);
        const unsigned char *p = data + start;
        switch (algo) { /* the switch outside the per-key call lets each loop inline its hash */
        case ALGO_MURMUR2:
            out[i] = murmur2_one(p, len);
            break;
        case ALGO_CRC32:
            out[i] = crc32_one(p, len);
            break;
        default:
            out[i] = fnv1a_one(p, len);
        }
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
/* A chunk with fewer key bytes than this is hashed holding the GIL (tens of microseconds at most, like
 * CPython's bytes.join, which also keeps the GIL below a size threshold); larger chunks take a reference
 * to each key and release the GIL while hashing. */
#define NOGIL_MIN_BYTES (256 * 1024)

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
            for (Py_ssize_t j = 0; j < taken; j++)
                hashes[lo + j] = hash_one(algo, ptrs[j], lens[j]);
            continue;
        }
        for (Py_ssize_t j = 0; j < taken; j++)
            Py_INCREF(held[j]); /* keeps every key alive while the list may change without the GIL */
        Py_BEGIN_ALLOW_THREADS;
        for (Py_ssize_t j = 0; j < taken; j++)
            hashes[lo + j] = hash_one(algo, ptrs[j], lens[j]);
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
    crc_init();
    PyObject *m = PyModule_Create(&native_module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "MURMUR2", ALGO_MURMUR2) < 0 ||
        PyModule_AddIntConstant(m, "CRC32", ALGO_CRC32) < 0 ||
        PyModule_AddIntConstant(m, "FNV1A", ALGO_FNV1A) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
