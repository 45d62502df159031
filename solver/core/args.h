/* Arguments declared once: each entry point of solver._core lists its
 * arguments in one table (an X-macro), from which come the C struct they are
 * parsed into, the parser (METH_FASTCALL | METH_KEYWORDS: no tuple, no dict,
 * no format string read per call) and the docstring with its text signature
 * (so inspect.signature and help() show the same names and defaults), as
 * CPython's Argument Clinic makes them for its own modules.
 *
 * A table is `#define NAME_ARGS(REQ, OPT) REQ(KIND, name) OPT(KIND, name, default) ...`:
 * required arguments first, each optional one with its default written as
 * Python writes it (an int or float literal, None, True or False).  KIND is
 * one of the converters below.  The C default of a None OBJECT is Py_None. */
#ifndef RICOCHET_ARGS_H
#define RICOCHET_ARGS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

/* The C type each kind is parsed into. */
#define CTYPE_INT int
#define CTYPE_BOOL int
#define CTYPE_DOUBLE double
#define CTYPE_SSIZE Py_ssize_t
#define CTYPE_LLONG long long
#define CTYPE_ULLONG unsigned long long
#define CTYPE_OBJECT PyObject *
#define CTYPE_BYTES ArgBytes
#define CTYPE_REQUEST Asked

/* A default as C reads it, from the Python literal. */
#define CDEFAULT_INT(v) v
#define CDEFAULT_BOOL(v) ARG_##v
#define CDEFAULT_DOUBLE(v) v
#define CDEFAULT_SSIZE(v) v
#define CDEFAULT_LLONG(v) v
#define CDEFAULT_ULLONG(v) v
#define CDEFAULT_OBJECT(v) ARG_##v
#define ARG_True 1
#define ARG_False 0
#define ARG_None Py_None

/* bytes, borrowed from the caller's object for the call. */
typedef struct {
    const char *s;
    Py_ssize_t len;
} ArgBytes;

/* What the parser needs of an entry point's table. */
typedef struct {
    const char *function;       /* for messages: "solve" */
    const char *const *names;   /* in order, NULL-terminated */
    Py_ssize_t count, required;
} ArgTable;

/* Places the call's arguments (positional, then by keyword) into slots, one per
 * declared argument (NULL: not given); -1 with a TypeError as CPython words it. */
static int args_gather(const ArgTable *t, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                       PyObject **slots) {
    if (nargs > t->count) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %zd arguments (%zd given)", t->function, t->count, nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < t->count; i++) slots[i] = i < nargs ? args[i] : NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        Py_ssize_t i = 0;
        while (i < t->count && PyUnicode_CompareWithASCIIString(key, t->names[i]) != 0) i++;
        if (i == t->count) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", t->function, key);
            return -1;
        }
        if (slots[i]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", t->function, t->names[i]);
            return -1;
        }
        slots[i] = args[nargs + k];
    }
    for (Py_ssize_t i = 0; i < t->required; i++)
        if (!slots[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (pos %zd)", t->function, t->names[i],
                         i + 1);
            return -1;
        }
    return 0;
}

static int arg_type_error(const ArgTable *t, const char *name, const char *wanted, PyObject *o) {
    PyErr_Format(PyExc_TypeError, "%s() argument '%s' must be %s, not %.50s", t->function, name, wanted,
                 Py_TYPE(o)->tp_name);
    return -1;
}

/* The converters: 0, or -1 with an error set.  Integers take what has
 * __index__ (never a float), as PyArg_Parse's i, n, L and K do. */
static int convert_LLONG(const ArgTable *t, const char *name, PyObject *o, long long *out) {
    if (!PyLong_Check(o) && !PyIndex_Check(o)) return arg_type_error(t, name, "int", o);
    int overflow;
    *out = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) {
        PyErr_Format(PyExc_OverflowError, "%s() argument '%s' is out of range", t->function, name);
        return -1;
    }
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

static int convert_INT(const ArgTable *t, const char *name, PyObject *o, int *out) {
    long long v;
    if (convert_LLONG(t, name, o, &v) != 0) return -1;
    if (v < INT_MIN || v > INT_MAX) {
        PyErr_Format(PyExc_OverflowError, "%s() argument '%s' is out of range", t->function, name);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int convert_SSIZE(const ArgTable *t, const char *name, PyObject *o, Py_ssize_t *out) {
    long long v;
    if (convert_LLONG(t, name, o, &v) != 0) return -1;
    if (v < PY_SSIZE_T_MIN || v > PY_SSIZE_T_MAX) {
        PyErr_Format(PyExc_OverflowError, "%s() argument '%s' is out of range", t->function, name);
        return -1;
    }
    *out = (Py_ssize_t)v;
    return 0;
}

static int convert_ULLONG(const ArgTable *t, const char *name, PyObject *o, unsigned long long *out) {
    if (!PyLong_Check(o)) return arg_type_error(t, name, "int", o);
    *out = PyLong_AsUnsignedLongLongMask(o); /* as K: the low 64 bits */
    return *out == (unsigned long long)-1 && PyErr_Occurred() ? -1 : 0;
}

static int convert_BOOL(const ArgTable *t, const char *name, PyObject *o, int *out) {
    *out = PyObject_IsTrue(o);
    return *out < 0 ? -1 : 0;
}

static int convert_DOUBLE(const ArgTable *t, const char *name, PyObject *o, double *out) {
    if (PyFloat_CheckExact(o)) { *out = PyFloat_AS_DOUBLE(o); return 0; }
    if (!PyFloat_Check(o) && !PyLong_Check(o) && !PyIndex_Check(o)) return arg_type_error(t, name, "float", o);
    *out = PyFloat_AsDouble(o);
    return *out == -1.0 && PyErr_Occurred() ? -1 : 0;
}

static int convert_OBJECT(const ArgTable *t, const char *name, PyObject *o, PyObject **out) {
    *out = o;
    return 0;
}

static int convert_BYTES(const ArgTable *t, const char *name, PyObject *o, ArgBytes *out) {
    if (!PyBytes_Check(o)) return arg_type_error(t, name, "bytes", o);
    out->s = PyBytes_AS_STRING(o);
    out->len = PyBytes_GET_SIZE(o);
    return 0;
}

/* The generators a table is expanded with. */
#define ARG_FIELD_REQ(kind, name) CTYPE_##kind name;
#define ARG_FIELD_OPT(kind, name, dflt) CTYPE_##kind name;
#define ARG_NAME_REQ(kind, name) #name,
#define ARG_NAME_OPT(kind, name, dflt) #name,
#define ARG_COUNT_REQ(kind, name) +1
#define ARG_COUNT_OPT(kind, name, dflt)
#define ARG_INIT_REQ(kind, name)
#define ARG_INIT_OPT(kind, name, dflt) out->name = CDEFAULT_##kind(dflt);
#define ARG_CONVERT_REQ(kind, name) \
    if (convert_##kind(&table, #name, slots[i], &out->name) != 0) return -1; \
    i++;
#define ARG_CONVERT_OPT(kind, name, dflt) \
    if (slots[i] && convert_##kind(&table, #name, slots[i], &out->name) != 0) return -1; \
    i++;
#define ARG_SIG_REQ(kind, name) ", " #name
#define ARG_SIG_OPT(kind, name, dflt) ", " #name "=" #dflt

/* From a table LIST: the struct TYPE the arguments of FUNCTION are parsed
 * into and TYPE_parse(args, nargs, kwnames, &out), for a METH_FASTCALL |
 * METH_KEYWORDS entry point. */
#define DECLARE_ARGS(TYPE, FUNCTION, LIST)                                                                   \
    typedef struct { LIST(ARG_FIELD_REQ, ARG_FIELD_OPT) } TYPE;                                              \
    static int TYPE##_parse(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, TYPE *out) {        \
        static const char *const names[] = {LIST(ARG_NAME_REQ, ARG_NAME_OPT) NULL};                          \
        static const ArgTable table = {FUNCTION, names, sizeof names / sizeof *names - 1,                    \
                                       0 LIST(ARG_COUNT_REQ, ARG_COUNT_OPT)};                                \
        PyObject *slots[sizeof names / sizeof *names];                                                       \
        if (args_gather(&table, args, nargs, kwnames, slots) != 0) return -1;                                \
        LIST(ARG_INIT_REQ, ARG_INIT_OPT)                                                                     \
        Py_ssize_t i = 0;                                                                                    \
        LIST(ARG_CONVERT_REQ, ARG_CONVERT_OPT)                                                               \
        (void)i;                                                                                             \
        return 0;                                                                                            \
    }

/* The docstring: the text signature (every argument, in order, with its
 * default) and then RETURNS, what the function gives back. */
#define ARGS_DOC(FUNCTION, LIST, RETURNS) FUNCTION "($module" LIST(ARG_SIG_REQ, ARG_SIG_OPT) ")\n--\n\n" RETURNS

#endif
