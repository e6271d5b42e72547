/*
 * deal(sources, members) -> list of `members` lists: the items of the lists in `sources`, taken one after
 * the other as if concatenated, dealt like cards: item k goes to list k % members, in order. The C form of
 * kafka_placement.assignment.dealing's pure-Python one (flat = concatenation; [flat[i::members] ...]).
 *
 * Why C: a fresh sticky group of a million partitions hands out a million shared TopicPartition objects.
 * The Python form touches each object three times (its reference count, in the concatenation, in the
 * slice and when the concatenation is freed); once the objects no longer fit in cache each touch is a
 * miss. Here each object is touched once, as the result needs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *deal(PyObject *module, PyObject *args)
{
    PyObject *sources;
    Py_ssize_t members;
    (void)module;
    if (!PyArg_ParseTuple(args, "O!n:deal", &PyList_Type, &sources, &members))
        return NULL;
    if (members < 1) {
        PyErr_Format(PyExc_ValueError, "deal: members must be >= 1, got %zd", members);
        return NULL;
    }
    Py_ssize_t n_sources = PyList_GET_SIZE(sources);
    Py_ssize_t total = 0;
    for (Py_ssize_t s = 0; s < n_sources; s++) {
        PyObject *source = PyList_GET_ITEM(sources, s);
        if (!PyList_Check(source)) {
            PyErr_Format(PyExc_TypeError, "deal: sources[%zd] must be a list, got %.100s", s,
                         Py_TYPE(source)->tp_name);
            return NULL;
        }
        if (PyList_GET_SIZE(source) > PY_SSIZE_T_MAX - total) {
            PyErr_SetString(PyExc_OverflowError, "deal: the sources hold more items than a list can");
            return NULL;
        }
        total += PyList_GET_SIZE(source);
    }
    PyObject *out = PyList_New(members);
    if (out == NULL)
        return NULL;
    PyObject ***slots = PyMem_Malloc((size_t)members * sizeof(PyObject **));
    if (slots == NULL) {
        Py_DECREF(out);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < members; i++) {
        Py_ssize_t size = total / members + (i < total % members ? 1 : 0);
        PyObject *hand = PyList_New(size); /* items NULL until filled below: nothing runs in between */
        if (hand == NULL) {
            PyMem_Free(slots);
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, hand);
        slots[i] = ((PyListObject *)hand)->ob_item;
    }
    Py_ssize_t hand = 0, depth = 0;
    for (Py_ssize_t s = 0; s < n_sources; s++) {
        PyObject *source = PyList_GET_ITEM(sources, s);
        Py_ssize_t size = PyList_GET_SIZE(source);
        PyObject **items = ((PyListObject *)source)->ob_item;
        for (Py_ssize_t j = 0; j < size; j++) {
            PyObject *item = items[j];
            Py_INCREF(item);
            slots[hand][depth] = item;
            if (++hand == members) {
                hand = 0;
                depth++;
            }
        }
    }
    PyMem_Free(slots);
    return out;
}

static PyMethodDef methods[] = {
    {"deal", deal, METH_VARARGS,
     "deal(sources: list[list], members: int) -> list[list]: item k of the concatenated sources to list "
     "k % members, in order."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_dealing", "C form of kafka_placement.assignment.dealing.", -1, methods,
};

PyMODINIT_FUNC PyInit__dealing(void)
{
    return PyModule_Create(&module);
}
