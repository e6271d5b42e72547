/*
 * The C form of kafka_placement.assignment.sticky.partition_objects (its pure-Python/numpy form is the
 * reference this is tested against): the two places where the sticky assignors touch one Python object
 * per partition.
 *
 * read_claims(owned_lists, topic_index, offsets, objects, known) -> (gids, topics, per_member)
 *     Every member's owned TopicPartitions (a tuple per member), in member order, as global partition ids. A claim counts when
 *     its topic is in `topic_index` (dict str -> topic number) and its partition is an int in
 *     [0, offsets[t + 1] - offsets[t]); the others are dropped. For each counted claim
 *     objects[gid] = the member's own TopicPartition (a later member's replaces an earlier one's) and
 *     known[gid] = 1. Returns bytearrays of int64: the counted claims' global ids and topic numbers,
 *     and how many each member has.
 * hand_out(owner, objects, members) -> list of `members` lists
 *     List i holds objects[g] for every g with owner[g] == i, in ascending g (owner -1: nobody's).
 *
 * Why C: a rebalance of a group owning a million partitions reads a million owned TopicPartitions and
 * hands a million out; the numpy forms convert each one several times (columns, an object array, a
 * fancy-indexed copy, a list) and sort the owner array. Here each object is touched once each way and the
 * hand-out is a counting pass, not a sort.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Reading a member's owned TopicPartitions visits objects scattered over the heap (a group's history is
 * made topic by topic, a member's list crosses every topic): the address of the next ones is known from
 * the tuple, so their memory is asked for ahead instead of one miss at a time. */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH_WRITE(address) __builtin_prefetch((address), 1, 3)
#else
#define PREFETCH_WRITE(address) ((void)0)
#endif
#define PREFETCH_AHEAD 16

static int get_buffer(PyObject *obj, Py_buffer *view, int writable, Py_ssize_t itemsize, const char *name)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    if (view->itemsize != itemsize || view->len % itemsize != 0) {
        PyErr_Format(PyExc_TypeError, "%s: items of %zd bytes expected, got %zd", name, itemsize,
                     view->itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static PyObject *read_claims(PyObject *module, PyObject *args)
{
    PyObject *owned_lists, *topic_index, *offsets_obj, *objects, *known_obj;
    (void)module;
    if (!PyArg_ParseTuple(args, "O!O!OO!O:read_claims", &PyList_Type, &owned_lists, &PyDict_Type,
                          &topic_index, &offsets_obj, &PyList_Type, &objects, &known_obj))
        return NULL;
    Py_buffer offsets_view, known_view;
    if (get_buffer(offsets_obj, &offsets_view, 0, 8, "read_claims: offsets") < 0)
        return NULL;
    if (get_buffer(known_obj, &known_view, 1, 1, "read_claims: known") < 0) {
        PyBuffer_Release(&offsets_view);
        return NULL;
    }
    const int64_t *offsets = offsets_view.buf;
    Py_ssize_t n_topics = offsets_view.len / 8 - 1;
    uint8_t *known = known_view.buf;
    Py_ssize_t n_partitions = PyList_GET_SIZE(objects);
    PyObject *gid_out = NULL, *topic_out = NULL, *count_out = NULL, *result = NULL;
    if (n_topics < 0 || known_view.len != n_partitions || (n_topics >= 0 && offsets[n_topics] != n_partitions)) {
        PyErr_SetString(PyExc_ValueError, "read_claims: offsets, objects and known disagree on sizes");
        goto done;
    }
    Py_ssize_t n_members = PyList_GET_SIZE(owned_lists);
    Py_ssize_t bound = 0;
    for (Py_ssize_t i = 0; i < n_members; i++) {
        PyObject *owned = PyList_GET_ITEM(owned_lists, i);
        if (!PyTuple_Check(owned)) { /* immutable: nothing that runs while we read can change it */
            PyErr_Format(PyExc_TypeError, "read_claims: owned_lists[%zd] must be a tuple", i);
            goto done;
        }
        bound += PyTuple_GET_SIZE(owned);
    }
    gid_out = PyByteArray_FromStringAndSize(NULL, bound * 8);
    topic_out = PyByteArray_FromStringAndSize(NULL, bound * 8);
    count_out = PyByteArray_FromStringAndSize(NULL, n_members * 8);
    if (gid_out == NULL || topic_out == NULL || count_out == NULL)
        goto done;
    int64_t *gids = (int64_t *)PyByteArray_AS_STRING(gid_out);
    int64_t *topics = (int64_t *)PyByteArray_AS_STRING(topic_out);
    int64_t *counts = (int64_t *)PyByteArray_AS_STRING(count_out);
    PyObject **slots = ((PyListObject *)objects)->ob_item;
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < n_members; i++) {
        PyObject *owned = PyList_GET_ITEM(owned_lists, i);
        Py_ssize_t size = PyTuple_GET_SIZE(owned);
        Py_ssize_t first = k;
        PyObject *last_topic = NULL; /* consecutive claims mostly name one topic: one lookup for the run */
        int64_t t = -1;
        for (Py_ssize_t j = 0; j < size; j++) {
            if (j + PREFETCH_AHEAD < size)
                PREFETCH_WRITE(PyTuple_GET_ITEM(owned, j + PREFETCH_AHEAD)); /* its reference count is written */
            PyObject *tp = PyTuple_GET_ITEM(owned, j);
            if (!PyTuple_Check(tp) || PyTuple_GET_SIZE(tp) != 2) {
                PyErr_Format(PyExc_TypeError, "read_claims: owned partitions must be (topic, partition) "
                             "tuples, got %.100s", Py_TYPE(tp)->tp_name);
                goto done;
            }
            PyObject *topic = PyTuple_GET_ITEM(tp, 0);
            PyObject *partition = PyTuple_GET_ITEM(tp, 1);
            if (topic != last_topic) {
                PyObject *index = PyDict_GetItemWithError(topic_index, topic); /* borrowed */
                if (index == NULL && PyErr_Occurred())
                    goto done;
                t = -1;
                if (index != NULL) {
                    t = PyLong_AsLongLong(index);
                    if (t == -1 && PyErr_Occurred())
                        goto done;
                    if (t < 0 || t >= n_topics) {
                        PyErr_SetString(PyExc_ValueError, "read_claims: topic number out of range");
                        goto done;
                    }
                }
                last_topic = topic;
            }
            if (t < 0 || !PyLong_Check(partition))
                continue;
            int overflow = 0;
            long long p = PyLong_AsLongLongAndOverflow(partition, &overflow);
            if (p == -1 && PyErr_Occurred())
                goto done;
            if (overflow || p < 0 || p >= offsets[t + 1] - offsets[t])
                continue;
            int64_t gid = offsets[t] + p;
            PyObject *old = slots[gid];
            Py_INCREF(tp);
            slots[gid] = tp;
            Py_XDECREF(old); /* None or an earlier member's TopicPartition: frees nothing that runs code */
            known[gid] = 1;
            gids[k] = gid;
            topics[k] = t;
            k++;
        }
        counts[i] = k - first;
    }
    if (PyByteArray_Resize(gid_out, k * 8) < 0 || PyByteArray_Resize(topic_out, k * 8) < 0)
        goto done;
    result = PyTuple_Pack(3, gid_out, topic_out, count_out);
done:
    Py_XDECREF(gid_out);
    Py_XDECREF(topic_out);
    Py_XDECREF(count_out);
    PyBuffer_Release(&offsets_view);
    PyBuffer_Release(&known_view);
    return result;
}

static PyObject *hand_out(PyObject *module, PyObject *args)
{
    PyObject *owner_obj, *objects;
    Py_ssize_t members;
    (void)module;
    if (!PyArg_ParseTuple(args, "OO!n:hand_out", &owner_obj, &PyList_Type, &objects, &members))
        return NULL;
    if (members < 0) {
        PyErr_Format(PyExc_ValueError, "hand_out: members must be >= 0, got %zd", members);
        return NULL;
    }
    Py_buffer owner_view;
    if (get_buffer(owner_obj, &owner_view, 0, 8, "hand_out: owner") < 0)
        return NULL;
    const int64_t *owner = owner_view.buf;
    Py_ssize_t n = owner_view.len / 8;
    PyObject *out = NULL;
    Py_ssize_t *sizes = NULL;
    PyObject ***cursor = NULL;
    if (PyList_GET_SIZE(objects) != n) {
        PyErr_SetString(PyExc_ValueError, "hand_out: owner and objects differ in length");
        goto fail;
    }
    sizes = PyMem_Calloc((size_t)members + 1, sizeof(Py_ssize_t));
    cursor = PyMem_Malloc(((size_t)members + 1) * sizeof(PyObject **));
    if (sizes == NULL || cursor == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    PyObject **items = ((PyListObject *)objects)->ob_item;
    for (Py_ssize_t g = 0; g < n; g++) {
        int64_t o = owner[g];
        if (o >= members || o < -1) {
            PyErr_Format(PyExc_ValueError, "hand_out: owner[%zd] = %lld is not a member", g, (long long)o);
            goto fail;
        }
        if (o >= 0) {
            if (items[g] == NULL) {
                PyErr_Format(PyExc_ValueError, "hand_out: objects[%zd] is missing", g);
                goto fail;
            }
            sizes[o]++;
        }
    }
    out = PyList_New(members);
    if (out == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < members; i++) {
        PyObject *hand = PyList_New(sizes[i]); /* items NULL until filled below: nothing runs in between */
        if (hand == NULL)
            goto fail;
        PyList_SET_ITEM(out, i, hand);
        cursor[i] = ((PyListObject *)hand)->ob_item;
    }
    for (Py_ssize_t g = 0; g < n; g++) {
        int64_t o = owner[g];
        if (o >= 0) {
            PyObject *item = items[g];
            Py_INCREF(item);
            *cursor[o]++ = item;
        }
    }
    PyMem_Free(sizes);
    PyMem_Free(cursor);
    PyBuffer_Release(&owner_view);
    return out;
fail:
    Py_XDECREF(out);
    PyMem_Free(sizes);
    PyMem_Free(cursor);
    PyBuffer_Release(&owner_view);
    return NULL;
}

static PyMethodDef methods[] = {
    {"read_claims", read_claims, METH_VARARGS,
     "read_claims(owned_lists, topic_index, offsets, objects, known) -> (gids, topics, per_member): every "
     "member's existing owned partitions as int64 global ids (bytearrays); objects[gid] = the member's "
     "TopicPartition, known[gid] = 1."},
    {"hand_out", hand_out, METH_VARARGS,
     "hand_out(owner, objects, members) -> list of lists: list i holds objects[g] for every g with "
     "owner[g] == i, in ascending g."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_owned", "C form of kafka_placement.assignment.sticky.partition_objects.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__owned(void)
{
    return PyModule_Create(&module);
}
