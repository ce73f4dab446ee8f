/* SPDX-License-Identifier: BSD-3-Clause */
/* A second extension sharing libchain1 with ext_chain (one grafted copy for
 * both). It is also linked with libpython, which repair must drop, and
 * (WITH_INNER) with libinner.so from inside the wheel. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

int chain1_value(void);
#ifdef WITH_INNER
int inner_value(void);
#else
static int inner_value(void) { return 0; }
#endif

static PyObject* value(PyObject* self, PyObject* noargs) {
  (void)self;
  (void)noargs;
  return PyLong_FromLong(chain1_value() + inner_value());
}

static PyMethodDef methods[] = {{"value", value, METH_NOARGS, "chain1_value()"},
                                {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {
    PyModuleDef_HEAD_INIT, "_ext2", NULL, -1, methods, NULL, NULL, NULL, NULL};
PyMODINIT_FUNC PyInit__ext2(void) { return PyModule_Create(&mod); }
