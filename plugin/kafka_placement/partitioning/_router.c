/*
 * Router: a producer's per-record hot path in C (part of the _native module): keyed records hashed,
 * keyless ones under a sticky lease.
 *
 *   router = Router(sink, slow)
 *   router(topic, value=None, key=None, **other)
 *
 * A call is routed here, without a Python frame, when it is exactly (topic, value, key) — positional or
 * as the keywords value/key — topic is a str with a route, key is a bytes or str object (a str is hashed
 * as its UTF-8 bytes) the route hashes (not an empty key for a route whose scheme treats it as keyless),
 * and the route has not expired. The partition is
 * partitions[index] with index = (hash(key) & mask) % n, or jump(unsigned hash, n) for a jump route,
 * and the record goes to sink(topic, value, key, partition). Every other call — keyless records,
 * explicit partitions, callbacks, timestamps, headers, other key types, unknown or expired topics —
 * goes to slow(*args, **kwargs) unchanged; the slow path is the pure-Python producer, which also sets,
 * renews and drops routes. Both paths give the same partition for the same key (tested).
 *
 *   set_route(topic, algo, mask, partitions, null_is_keyless, empty_is_keyless, jump, expires_at)
 *       partitions: tuple of int (the topic's partition ids in id order; n = its length, 1..2**31-1);
 *       expires_at: time.monotonic() seconds after which the slow path is asked again. A None key is
 *       hashed like b"" unless null_is_keyless.
 *   set_lease(topic, partition, room)   take_lease(topic) -> (partition, bytes sent) | None
 *       A lease belongs to the topic's route (a new route ends it, its bytes uncounted: take it first).
 *       Keyless records (a None key when null_is_keyless, an empty one when empty_is_keyless) of a topic
 *       with a valid route and a lease go to the lease's partition while their size (len(value), bytes
 *       or str) stays below the lease's room — the sticky partition and the bytes it may still take
 *       before the keyless strategy switches; the slow path takes the lease back to count those bytes.
 *   drop_route(topic)      drop_routes()
 *   fast, slow_calls       how many calls each path took (for tests and benchmarks).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stddef.h>
#include <time.h>

#include "_hash_kernels.h"

typedef struct {
    PyObject_HEAD
    PyObject *sink;
    PyObject *slow;
    PyObject *routes; /* dict: topic -> (RouteData as bytes, partitions tuple, lease or None), see set_route;
                       * a lease is (Lease as bytearray, partition), see set_lease */
    unsigned long long fast;
    unsigned long long slow_calls;
    vectorcallfunc vectorcall;
} Router;

/* A route's numbers, unpacked once by set_route and kept as the bytes of a bytes object (its buffer is
 * 8-byte aligned) beside the partitions tuple, so the routes dict owns everything. */
typedef struct {
    KeyScheme scheme;
    double expires_at;
} RouteData;

/* A keyless lease: the sticky partition may take records while their bytes stay below ``room``; what
 * was sent is counted in ``consumed`` until the slow path takes the lease back (take_lease). Mutable, so
 * kept in a bytearray (its buffer comes from the allocator: aligned). */
typedef struct {
    int64_t room;
    int64_t consumed;
} Lease;

static double monotonic_seconds(void)
{
    struct timespec ts;
#ifdef CLOCK_MONOTONIC_COARSE
    /* time.monotonic()'s clock (CLOCK_MONOTONIC) read at tick resolution (a few ms: plenty for an expiry
     * measured in tenths of a second) for a fraction of the cost */
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
#else
    clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static PyObject *call_slow(Router *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    self->slow_calls++;
    return PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
}

/* A keyless record: to the leased sticky partition while it stays below the lease's room, exactly as
 * the keyless strategy would send it (a record that reaches the room makes the strategy switch: the slow
 * path sends it). Its size is counted as the Python path counts it: len(key) + len(value). */
static PyObject *keyless(Router *self, PyObject *const *args, size_t nargsf, PyObject *kwnames, PyObject *topic,
                         PyObject *value, PyObject *key, PyObject *lease)
{
    if (lease == Py_None)
        return call_slow(self, args, nargsf, kwnames);
    int64_t size;
    if (value == Py_None)
        size = 0;
    else if (PyBytes_CheckExact(value))
        size = (int64_t)PyBytes_GET_SIZE(value);
    else if (PyUnicode_CheckExact(value))
        size = (int64_t)PyUnicode_GET_LENGTH(value);
    else
        return call_slow(self, args, nargsf, kwnames);
    /* the key is None or empty here: it adds nothing */
    Lease *l = (Lease *)PyByteArray_AS_STRING(PyTuple_GET_ITEM(lease, 0));
    if (size >= l->room)
        return call_slow(self, args, nargsf, kwnames);
    l->room -= size;
    l->consumed += size;
    PyObject *sink_args[4] = {topic, value, key, PyTuple_GET_ITEM(lease, 1)};
    self->fast++;
    return PyObject_Vectorcall(self->sink, sink_args, 4, NULL);
}

static PyObject *router_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Router *self = (Router *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *topic = NULL, *value = Py_None, *key = NULL;
    if (nargs < 1 || nargs > 3)
        return call_slow(self, args, nargsf, kwnames);
    topic = args[0];
    if (nargs >= 2)
        value = args[1];
    if (nargs == 3)
        key = args[2];
    if (kwnames != NULL) {
        Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
        for (Py_ssize_t i = 0; i < nkw; i++) {
            PyObject *name = PyTuple_GET_ITEM(kwnames, i);
            if (nargs < 2 && PyUnicode_CompareWithASCIIString(name, "value") == 0)
                value = args[nargs + i];
            else if (nargs < 3 && PyUnicode_CompareWithASCIIString(name, "key") == 0)
                key = args[nargs + i];
            else
                return call_slow(self, args, nargsf, kwnames);
        }
    }
    if (key == NULL)
        key = Py_None;
    if (!PyUnicode_CheckExact(topic))
        return call_slow(self, args, nargsf, kwnames);
    const char *bytes = ""; /* a None key: hashed like an empty one, unless the scheme calls it keyless */
    Py_ssize_t len = 0;
    if (PyBytes_CheckExact(key)) {
        bytes = PyBytes_AS_STRING(key);
        len = PyBytes_GET_SIZE(key);
    }
    else if (PyUnicode_CheckExact(key)) { /* confluent-kafka sends a str key as its UTF-8 bytes */
        bytes = PyUnicode_AsUTF8AndSize(key, &len);
        if (bytes == NULL) { /* lone surrogates: the slow path reports it as confluent-kafka would */
            PyErr_Clear();
            return call_slow(self, args, nargsf, kwnames);
        }
    }
    else if (key != Py_None)
        return call_slow(self, args, nargsf, kwnames);
    PyObject *route = PyDict_GetItemWithError(self->routes, topic); /* borrowed */
    if (route == NULL) {
        if (PyErr_Occurred())
            return NULL;
        return call_slow(self, args, nargsf, kwnames);
    }
    const RouteData *rd = (const RouteData *)PyBytes_AS_STRING(PyTuple_GET_ITEM(route, 0));
    PyObject *partitions = PyTuple_GET_ITEM(route, 1);
    if (monotonic_seconds() > rd->expires_at)
        return call_slow(self, args, nargsf, kwnames);
    if ((key == Py_None && rd->scheme.null_is_keyless) || (len == 0 && rd->scheme.empty_is_keyless))
        return keyless(self, args, nargsf, kwnames, topic, value, key, PyTuple_GET_ITEM(route, 2));
    Py_ssize_t n = PyTuple_GET_SIZE(partitions);
    Py_ssize_t index = (Py_ssize_t)scheme_index(&rd->scheme, (const unsigned char *)bytes, len, (uint32_t)n);
    PyObject *sink_args[4] = {topic, value, key, PyTuple_GET_ITEM(partitions, index)};
    self->fast++;
    return PyObject_Vectorcall(self->sink, sink_args, 4, NULL);
}

static PyObject *router_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *sink, *slow;
    static char *kwlist[] = {"sink", "slow", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO:Router", kwlist, &sink, &slow))
        return NULL;
    if (!PyCallable_Check(sink) || !PyCallable_Check(slow)) {
        PyErr_SetString(PyExc_TypeError, "Router(sink, slow): both must be callable");
        return NULL;
    }
    Router *self = (Router *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->routes = PyDict_New();
    if (self->routes == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    Py_INCREF(sink);
    Py_INCREF(slow);
    self->sink = sink;
    self->slow = slow;
    self->vectorcall = router_vectorcall;
    return (PyObject *)self;
}

static int router_traverse(Router *self, visitproc visit, void *arg)
{
    Py_VISIT(self->sink);
    Py_VISIT(self->slow);
    Py_VISIT(self->routes);
    return 0;
}

static int router_clear(Router *self)
{
    Py_CLEAR(self->sink);
    Py_CLEAR(self->slow);
    Py_CLEAR(self->routes);
    return 0;
}

static void router_dealloc(Router *self)
{
    PyObject_GC_UnTrack(self);
    router_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *router_set_route(Router *self, PyObject *args)
{
    PyObject *topic, *partitions;
    int algo, null_is_keyless, empty_is_keyless, jump;
    unsigned long mask;
    double expires_at;
    if (!PyArg_ParseTuple(args, "UikO!pppd:set_route", &topic, &algo, &mask, &PyTuple_Type, &partitions,
                          &null_is_keyless, &empty_is_keyless, &jump, &expires_at))
        return NULL;
    if (algo != ALGO_MURMUR2 && algo != ALGO_CRC32 && algo != ALGO_FNV1A) {
        PyErr_Format(PyExc_ValueError, "algo must be MURMUR2 (0), CRC32 (1) or FNV1A (2), got %d", algo);
        return NULL;
    }
    if (mask > 0xffffffffUL) {
        PyErr_Format(PyExc_ValueError, "mask must fit in 32 bits, got %lu", mask);
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(partitions);
    if (n < 1 || n > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "a route needs 1 to 2147483647 partitions, got %zd", n);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyLong_CheckExact(PyTuple_GET_ITEM(partitions, i))) {
            PyErr_Format(PyExc_TypeError, "partition ids must be ints, item %zd is not", i);
            return NULL;
        }
    }
    RouteData rd = {{algo, (uint32_t)mask, null_is_keyless, empty_is_keyless, jump}, expires_at};
    PyObject *data = PyBytes_FromStringAndSize((const char *)&rd, sizeof rd);
    if (data == NULL)
        return NULL;
    PyObject *route = PyTuple_Pack(3, data, partitions, Py_None); /* a new route ends the lease */
    Py_DECREF(data);
    if (route == NULL)
        return NULL;
    int rc = PyDict_SetItem(self->routes, topic, route);
    Py_DECREF(route);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *router_drop_route(Router *self, PyObject *topic)
{
    if (PyDict_DelItem(self->routes, topic) < 0) {
        if (!PyErr_ExceptionMatches(PyExc_KeyError))
            return NULL;
        PyErr_Clear();
    }
    Py_RETURN_NONE;
}

static PyObject *router_drop_routes(Router *self, PyObject *unused)
{
    PyDict_Clear(self->routes);
    Py_RETURN_NONE;
}

static PyObject *router_has_route(Router *self, PyObject *topic)
{
    int found = PyDict_Contains(self->routes, topic);
    if (found < 0)
        return NULL;
    return PyBool_FromLong(found);
}

static PyObject *router_set_lease(Router *self, PyObject *args)
{
    PyObject *topic, *partition;
    long long room;
    if (!PyArg_ParseTuple(args, "UO!L:set_lease", &topic, &PyLong_Type, &partition, &room))
        return NULL;
    if (room < 1) {
        PyErr_Format(PyExc_ValueError, "a lease needs room >= 1 byte, got %lld", room);
        return NULL;
    }
    PyObject *route = PyDict_GetItemWithError(self->routes, topic);
    if (route == NULL) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_KeyError, "no route for topic %R: set_route first", topic);
        return NULL;
    }
    Lease l = {(int64_t)room, 0};
    PyObject *data = PyByteArray_FromStringAndSize((const char *)&l, sizeof l);
    if (data == NULL)
        return NULL;
    PyObject *lease = PyTuple_Pack(2, data, partition);
    Py_DECREF(data);
    if (lease == NULL)
        return NULL;
    PyObject *leased = PyTuple_Pack(3, PyTuple_GET_ITEM(route, 0), PyTuple_GET_ITEM(route, 1), lease);
    Py_DECREF(lease);
    if (leased == NULL)
        return NULL;
    int rc = PyDict_SetItem(self->routes, topic, leased);
    Py_DECREF(leased);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *router_take_lease(Router *self, PyObject *topic)
{
    PyObject *route = PyDict_GetItemWithError(self->routes, topic);
    if (route == NULL) {
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NONE;
    }
    PyObject *lease = PyTuple_GET_ITEM(route, 2);
    if (lease == Py_None)
        Py_RETURN_NONE;
    Py_INCREF(lease);
    PyObject *unleased = PyTuple_Pack(3, PyTuple_GET_ITEM(route, 0), PyTuple_GET_ITEM(route, 1), Py_None);
    if (unleased == NULL || PyDict_SetItem(self->routes, topic, unleased) < 0) {
        Py_XDECREF(unleased);
        Py_DECREF(lease);
        return NULL;
    }
    Py_DECREF(unleased);
    const Lease *l = (const Lease *)PyByteArray_AS_STRING(PyTuple_GET_ITEM(lease, 0));
    PyObject *result = Py_BuildValue("(OL)", PyTuple_GET_ITEM(lease, 1), (long long)l->consumed);
    Py_DECREF(lease);
    return result;
}

static PyObject *router_get_fast(Router *self, void *closure)
{
    return PyLong_FromUnsignedLongLong(self->fast);
}

static PyObject *router_get_slow(Router *self, void *closure)
{
    return PyLong_FromUnsignedLongLong(self->slow_calls);
}

static PyMethodDef router_methods[] = {
    {"set_route", (PyCFunction)router_set_route, METH_VARARGS,
     "set_route(topic, algo, mask, partitions, empty_is_keyless, jump, expires_at): route keyed records of "
     "topic here until time.monotonic() passes expires_at."},
    {"drop_route", (PyCFunction)router_drop_route, METH_O, "drop_route(topic): send topic to the slow path."},
    {"set_lease", (PyCFunction)router_set_lease, METH_VARARGS,
     "set_lease(topic, partition, room): keyless records of topic go to partition while their bytes stay "
     "below room (the route must be valid too)."},
    {"take_lease", (PyCFunction)router_take_lease, METH_O,
     "take_lease(topic) -> (partition, bytes sent) or None: end the lease, report what it sent."},
    {"drop_routes", (PyCFunction)router_drop_routes, METH_NOARGS, "drop_routes(): forget every route and lease."},
    {"has_route", (PyCFunction)router_has_route, METH_O, "has_route(topic) -> bool"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef router_getset[] = {
    {"fast", (getter)router_get_fast, NULL, "calls routed in C", NULL},
    {"slow_calls", (getter)router_get_slow, NULL, "calls handed to the slow path", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject RouterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kafka_placement.partitioning._native.Router",
    .tp_doc = "Router(sink, slow): keyed records of routed topics to sink(topic, value, key, partition) in "
              "C, every other call to slow(*args, **kwargs).",
    .tp_basicsize = sizeof(Router),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = router_new,
    .tp_dealloc = (destructor)router_dealloc,
    .tp_traverse = (traverseproc)router_traverse,
    .tp_clear = (inquiry)router_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Router, vectorcall),
    .tp_methods = router_methods,
    .tp_getset = router_getset,
};

int kp_add_router(PyObject *module)
{
    if (PyType_Ready(&RouterType) < 0)
        return -1;
    Py_INCREF(&RouterType);
    if (PyModule_AddObject(module, "Router", (PyObject *)&RouterType) < 0) {
        Py_DECREF(&RouterType);
        return -1;
    }
    return 0;
}
