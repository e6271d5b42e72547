/*
 * One key per call in C (part of the _native module): partition_key and the per-scheme scalar
 * functions (murmur2, murmur2_unsigned, crc32, fnv1a, jump_hash) as builtins, each bound to its
 * pure-Python reference, which stays the definition.
 *
 *   one_key(name, reference, module_name) -> builtin function called name
 *       The C form of the reference function `name` (one of the six above), reporting module_name as
 *       its __module__ (so it pickles by reference, like the function it replaces). A call is answered
 *       here, without a Python frame and with no allocation but the result, when its arguments are the
 *       plain case: a key that is exactly bytes or bytearray (partition_key, murmur2 and
 *       murmur2_unsigned: also an exact str, as its UTF-8 bytes; partition_key: also None), a partition
 *       count that is exactly an int in [1, 2**31 - 1], a scheme that is a str naming a registered
 *       scheme, no unknown or repeated keywords. Every other call — bad or unusual arguments, an rng
 *       given for a keyless record — is handed to the reference unchanged, which validates and raises
 *       exactly as it always did (same error type, same message, same order of checks).
 *   one_key_schemes(table, random_module)
 *       table: {name: (algo, mask, null_is_keyless, empty_is_keyless, jump, always_random)}, the
 *       numbers of schemes.SCHEMES; the default scheme of partition_key is "murmur2". A keyless record
 *       without an rng gets random_module.randrange(n), looked up at each call as the reference does.
 *   one_key_enabled([enable]) -> bool
 *       Off: every call goes to the reference (numpy_only() switches it off for its block).
 *
 * The index is scheme_index() of _hash_kernels.h, as in the record router (_router.c).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "_hash_kernels.h"

enum { F_MURMUR2, F_MURMUR2_UNSIGNED, F_CRC32, F_FNV1A, F_JUMP_HASH, F_PARTITION_KEY, F_COUNT };

typedef struct {
    KeyScheme scheme;
    int always_random;
} SchemeRow;

#define MAX_SCHEMES 32

static PyObject *references[F_COUNT];      /* the pure-Python functions, owned */
static int enabled = 1;
static SchemeRow schemes[MAX_SCHEMES];
static PyObject *scheme_names[MAX_SCHEMES]; /* owned; pointer-compared first (literals are interned) */
static Py_ssize_t n_schemes = 0;
static Py_ssize_t default_scheme = -1;      /* index of "murmur2" */
static PyObject *scheme_by_name = NULL;     /* dict: name -> index, owned */
static PyObject *random_module = NULL;      /* owned */
static PyObject *str_randrange = NULL;

static PyObject *to_reference(int which, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (references[which] == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "kafka_placement one-key function called before registration");
        return NULL;
    }
    return PyObject_Vectorcall(references[which], args, (size_t)nargs, kwnames);
}

/* The bytes of a key read in place: exact bytes and bytearray; an exact str as UTF-8 when allow_str
 * (lone surrogates fail strict UTF-8: 0, and the reference encodes them). 0: not read here. */
static inline int key_view(PyObject *key, int allow_str, const unsigned char **p, Py_ssize_t *len)
{
    if (PyBytes_CheckExact(key)) {
        *p = (const unsigned char *)PyBytes_AS_STRING(key);
        *len = PyBytes_GET_SIZE(key);
        return 1;
    }
    if (PyByteArray_CheckExact(key)) {
        *p = (const unsigned char *)PyByteArray_AS_STRING(key);
        *len = PyByteArray_GET_SIZE(key);
        return 1;
    }
    if (allow_str && PyUnicode_CheckExact(key)) {
        const char *s = PyUnicode_AsUTF8AndSize(key, len);
        if (s == NULL) {
            PyErr_Clear();
            return 0;
        }
        *p = (const unsigned char *)s;
        return 1;
    }
    return 0;
}

/* An exact int in [1, 2**31 - 1] (a Java int partition count), else 0. */
static inline long long partition_count(PyObject *num)
{
    if (!PyLong_CheckExact(num))
        return 0;
    int overflow = 0;
    long long n = PyLong_AsLongLongAndOverflow(num, &overflow);
    if (overflow || n < 1 || n > INT32_MAX)
        return 0; /* an exact int never fails otherwise */
    return n;
}

static PyObject *one_hash(int which, int algo, int allow_str, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
    const unsigned char *p;
    Py_ssize_t len;
    if (!enabled || nargs != 1 || kwnames != NULL || !key_view(args[0], allow_str, &p, &len))
        return to_reference(which, args, nargs, kwnames);
    uint32_t h = hash_one(algo, p, len);
    if (which == F_MURMUR2)
        return PyLong_FromLong((long)(int32_t)h);
    return PyLong_FromUnsignedLong((unsigned long)h);
}

static PyObject *ok_murmur2(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return one_hash(F_MURMUR2, ALGO_MURMUR2, 1, args, nargs, kwnames);
}

static PyObject *ok_murmur2_unsigned(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return one_hash(F_MURMUR2_UNSIGNED, ALGO_MURMUR2, 1, args, nargs, kwnames);
}

static PyObject *ok_crc32(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return one_hash(F_CRC32, ALGO_CRC32, 0, args, nargs, kwnames);
}

static PyObject *ok_fnv1a(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return one_hash(F_FNV1A, ALGO_FNV1A, 0, args, nargs, kwnames);
}

static PyObject *ok_jump_hash(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    long long n;
    if (!enabled || nargs != 2 || kwnames != NULL || !PyLong_CheckExact(args[0]) ||
        (n = partition_count(args[1])) == 0)
        return to_reference(F_JUMP_HASH, args, nargs, kwnames);
    /* the reference's key & (2**64 - 1): any int, negative ones in two's complement */
    uint64_t key = (uint64_t)PyLong_AsUnsignedLongLongMask(args[0]);
    if (key == (uint64_t)-1 && PyErr_Occurred())
        return NULL;
    return PyLong_FromLongLong((long long)jump_bucket(key, (int64_t)n));
}

static Py_ssize_t find_scheme(PyObject *name)
{
    for (Py_ssize_t i = 0; i < n_schemes; i++)
        if (scheme_names[i] == name)
            return i;
    if (!PyUnicode_CheckExact(name) || scheme_by_name == NULL)
        return -1;
    PyObject *found = PyDict_GetItemWithError(scheme_by_name, name); /* borrowed */
    if (found == NULL) {
        PyErr_Clear();
        return -1;
    }
    return PyLong_AsSsize_t(found);
}

/* the keyword's slot among partition_key's four parameters, or -1 */
static int keyword_slot(PyObject *name)
{
    static const char *const names[4] = {"key", "num_partitions", "scheme", "rng"};
    for (int i = 0; i < 4; i++)
        if (PyUnicode_CompareWithASCIIString(name, names[i]) == 0)
            return i;
    return -1;
}

static PyObject *ok_partition_key(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *given[4] = {NULL, NULL, NULL, NULL}; /* key, num_partitions, scheme, rng */
    if (!enabled || nargs > 3)
        goto reference;
    for (Py_ssize_t i = 0; i < nargs; i++)
        given[i] = args[i];
    if (kwnames != NULL) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); i++) {
            int slot = keyword_slot(PyTuple_GET_ITEM(kwnames, i));
            if (slot < 0 || given[slot] != NULL)
                goto reference;
            given[slot] = args[nargs + i];
        }
    }
    PyObject *key = given[0], *num = given[1], *rng = given[3];
    long long n;
    if (key == NULL || num == NULL || (n = partition_count(num)) == 0)
        goto reference;
    Py_ssize_t s_at = given[2] == NULL ? default_scheme : find_scheme(given[2]);
    if (s_at < 0)
        goto reference;
    const SchemeRow *s = &schemes[s_at];
    const unsigned char *p = (const unsigned char *)"";
    Py_ssize_t len = 0;
    int keyless;
    if (key == Py_None)
        keyless = s->scheme.null_is_keyless; /* else hashed like b"" */
    else if (key_view(key, 1, &p, &len))
        keyless = s->always_random || (s->scheme.empty_is_keyless && len == 0);
    else
        goto reference;
    if (keyless) {
        if (rng != NULL && rng != Py_None)
            goto reference;
        PyObject *randrange = PyObject_GetAttr(random_module, str_randrange);
        if (randrange == NULL)
            return NULL;
        PyObject *out = PyObject_CallOneArg(randrange, num);
        Py_DECREF(randrange);
        return out;
    }
    return PyLong_FromLongLong((long long)scheme_index(&s->scheme, p, len, (uint32_t)n));
reference:
    return to_reference(F_PARTITION_KEY, args, nargs, kwnames);
}

#define FAST (METH_FASTCALL | METH_KEYWORDS)
#define FN(f) (PyCFunction)(void (*)(void))(f)

static PyMethodDef one_key_defs[F_COUNT] = {
    {"murmur2", FN(ok_murmur2), FAST,
     "murmur2($module, data)\n--\n\nKafka ``Utils.murmur2(data)``: a signed 32-bit int, exactly as Java returns it."},
    {"murmur2_unsigned", FN(ok_murmur2_unsigned), FAST,
     "murmur2_unsigned($module, data)\n--\n\nMurmur2 of ``data`` as an unsigned 32-bit value (0..2**32-1)."},
    {"crc32", FN(ok_crc32), FAST,
     "crc32($module, data)\n--\n\nUnsigned CRC-32 of ``data`` (librdkafka ``rd_crc32``)."},
    {"fnv1a", FN(ok_fnv1a), FAST,
     "fnv1a($module, data)\n--\n\nlibrdkafka ``rd_fnv1a``: ``abs(int32(fnv1a_32(data)))`` as uint32 (Sarama-compatible)."},
    {"jump_hash", FN(ok_jump_hash), FAST,
     "jump_hash($module, key, num_buckets)\n--\n\nThe bucket in [0, num_buckets) of a 64-bit unsigned ``key`` "
     "(the paper's reference loop)."},
    {"partition_key", FN(ok_partition_key), FAST,
     "partition_key($module, key, num_partitions, scheme='murmur2', *, rng=None)\n--\n\n"
     "Partition of one record with ``key`` under ``scheme`` (keyless records: uniformly random)."},
};

static PyObject *py_one_key(PyObject *module, PyObject *args)
{
    const char *name;
    PyObject *reference, *module_name;
    if (!PyArg_ParseTuple(args, "sOU:one_key", &name, &reference, &module_name))
        return NULL;
    for (int i = 0; i < F_COUNT; i++) {
        if (strcmp(name, one_key_defs[i].ml_name) != 0)
            continue;
        if (!PyCallable_Check(reference)) {
            PyErr_Format(PyExc_TypeError, "one_key: the reference of %s must be callable", name);
            return NULL;
        }
        Py_INCREF(reference);
        Py_XSETREF(references[i], reference);
        return PyCFunction_NewEx(&one_key_defs[i], module, module_name);
    }
    PyErr_Format(PyExc_ValueError, "one_key: no C form of %s", name);
    return NULL;
}

static PyObject *py_one_key_schemes(PyObject *module, PyObject *args)
{
    PyObject *table, *rand_mod;
    if (!PyArg_ParseTuple(args, "O!O:one_key_schemes", &PyDict_Type, &table, &rand_mod))
        return NULL;
    if (PyDict_GET_SIZE(table) > MAX_SCHEMES) {
        PyErr_Format(PyExc_ValueError, "one_key_schemes: at most %d schemes", MAX_SCHEMES);
        return NULL;
    }
    PyObject *index = PyDict_New();
    if (index == NULL)
        return NULL;
    SchemeRow rows[MAX_SCHEMES];
    PyObject *names[MAX_SCHEMES];
    Py_ssize_t pos = 0, count = 0, murmur2_at = -1;
    PyObject *name, *row;
    while (PyDict_Next(table, &pos, &name, &row)) {
        SchemeRow *r = &rows[count];
        unsigned long long mask;
        if (!PyUnicode_CheckExact(name) ||
            !PyArg_ParseTuple(row, "iKpppp:one_key_schemes row", &r->scheme.algo, &mask,
                              &r->scheme.null_is_keyless, &r->scheme.empty_is_keyless, &r->scheme.jump,
                              &r->always_random) ||
            mask > UINT32_MAX || r->scheme.algo < ALGO_MURMUR2 || r->scheme.algo > ALGO_FNV1A) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "one_key_schemes: bad scheme row");
            Py_DECREF(index);
            return NULL;
        }
        r->scheme.mask = (uint32_t)mask;
        PyObject *at = PyLong_FromSsize_t(count);
        if (at == NULL || PyDict_SetItem(index, name, at) < 0) {
            Py_XDECREF(at);
            Py_DECREF(index);
            return NULL;
        }
        Py_DECREF(at);
        if (PyUnicode_CompareWithASCIIString(name, "murmur2") == 0)
            murmur2_at = count;
        names[count++] = name;
    }
    for (Py_ssize_t i = 0; i < n_schemes; i++)
        Py_CLEAR(scheme_names[i]);
    for (Py_ssize_t i = 0; i < count; i++) {
        schemes[i] = rows[i];
        Py_INCREF(names[i]);
        scheme_names[i] = names[i];
    }
    n_schemes = count;
    default_scheme = murmur2_at;
    Py_XSETREF(scheme_by_name, index);
    Py_INCREF(rand_mod);
    Py_XSETREF(random_module, rand_mod);
    Py_RETURN_NONE;
}

static PyObject *py_one_key_enabled(PyObject *module, PyObject *args)
{
    int enable = -1;
    if (!PyArg_ParseTuple(args, "|i:one_key_enabled", &enable))
        return NULL;
    if (enable >= 0)
        enabled = enable != 0;
    return PyBool_FromLong(enabled);
}

static PyMethodDef registration_methods[] = {
    {"one_key", py_one_key, METH_VARARGS,
     "one_key(name, reference, module_name) -> the C form of the reference function called name."},
    {"one_key_schemes", py_one_key_schemes, METH_VARARGS,
     "one_key_schemes(table, random_module): the schemes partition_key answers in C."},
    {"one_key_enabled", py_one_key_enabled, METH_VARARGS,
     "one_key_enabled([enable]) -> bool: whether the one-key functions answer in C (off: the references)."},
    {NULL, NULL, 0, NULL},
};

int kp_add_one_key(PyObject *module)
{
    str_randrange = PyUnicode_InternFromString("randrange");
    if (str_randrange == NULL)
        return -1;
    return PyModule_AddFunctions(module, registration_methods);
}
