/* SPDX-License-Identifier: BSD-3-Clause */
/* dlopen()s libplugin.so.1 by name: nothing in DT_NEEDED refers to it, so
 * only `repair --include` bundles it, and only an RPATH on this file lets
 * dlopen find the bundled copy. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>

static PyObject* call(PyObject* self, PyObject* noargs) {
  (void)self;
  (void)noargs;
  void* h = dlopen("libplugin.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return PyErr_Format(PyExc_OSError, "dlopen: %s", dlerror());
  int (*fn)(void) = (int (*)(void))dlsym(h, "plugin_value");
  if (!fn) return PyErr_Format(PyExc_OSError, "dlsym: %s", dlerror());
  return PyLong_FromLong(fn());
}

static PyMethodDef methods[] = {{"call", call, METH_NOARGS, "plugin_value()"},
                                {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {
    PyModuleDef_HEAD_INIT, "_dl", NULL, -1, methods, NULL, NULL, NULL, NULL};
PyMODINIT_FUNC PyInit__dl(void) { return PyModule_Create(&mod); }
