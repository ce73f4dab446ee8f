// SPDX-License-Identifier: BSD-3-Clause
// torchlike._C: the extension module, on the plain CPython C API (no pybind11,
// so the only dependencies are the libraries under test and libgomp).
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <omp.h>

#include <exception>
#include <list>
#include <stdexcept>
#include <string>

#include "torchlike/torch.h"
#if TORCHLIKE_WITH_CUDA
#include "torchlike/cuda.h"
#endif

namespace {

// Runs F, turning C++ exceptions into Python ones (nullptr return).
template <class F>
PyObject* guarded(F&& f) {
  try {
    return f();
  } catch (const std::out_of_range& e) {
    PyErr_SetString(PyExc_KeyError, e.what());
  } catch (const std::invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

PyObject* to_py(const std::string& s) {
  return PyUnicode_FromStringAndSize(s.data(), static_cast<Py_ssize_t>(s.size()));
}

PyObject* to_py(const std::list<std::string>& items) {
  PyObject* out = PyList_New(0);
  if (!out) return nullptr;
  for (const auto& s : items) {
    PyObject* item = to_py(s);
    if (!item || PyList_Append(out, item) < 0) {
      Py_XDECREF(item);
      Py_DECREF(out);
      return nullptr;
    }
    Py_DECREF(item);
  }
  return out;
}

bool from_py(PyObject* obj, std::string& out) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(obj, &size);
  if (!data) return false;
  out.assign(data, static_cast<size_t>(size));
  return true;
}

PyObject* py_version(PyObject*, PyObject*) {
  return guarded([] { return to_py(torch::version()); });
}

PyObject* py_ops(PyObject*, PyObject*) {
  return guarded([] { return to_py(torch::registered_ops()); });
}

// call_op(qualname, self, *args) -> str
PyObject* py_call_op(PyObject*, PyObject* args) {
  Py_ssize_t n = PyTuple_Size(args);
  if (n < 2) {
    PyErr_SetString(PyExc_TypeError, "call_op(qualname, self, *args) takes at least 2 arguments");
    return nullptr;
  }
  std::string name, self;
  std::list<std::string> rest;
  if (!from_py(PyTuple_GET_ITEM(args, 0), name) || !from_py(PyTuple_GET_ITEM(args, 1), self))
    return nullptr;
  for (Py_ssize_t i = 2; i < n; ++i) {
    std::string s;
    if (!from_py(PyTuple_GET_ITEM(args, i), s)) return nullptr;
    rest.push_back(std::move(s));
  }
  return guarded([&] { return to_py(torch::call_op(name, self, rest)); });
}

PyObject* py_describe(PyObject*, PyObject* arg) {
  long long n = PyLong_AsLongLong(arg);
  if (n == -1 && PyErr_Occurred()) return nullptr;
  return guarded([&] { return to_py(torch::describe(at::arange(n, "arange"))); });
}

// parallel_sum(n) -> (sum of 0..n-1 computed by an OpenMP loop, threads used)
PyObject* py_parallel_sum(PyObject*, PyObject* arg) {
  long long n = PyLong_AsLongLong(arg);
  if (n == -1 && PyErr_Occurred()) return nullptr;
  return guarded([&]() -> PyObject* {
    at::Tensor t = at::arange(n, "parallel_sum");
    const float* data = t.data().data();
    const long long size = static_cast<long long>(t.numel());
    double total = 0.0;
    int threads = 1;
    Py_BEGIN_ALLOW_THREADS
#pragma omp parallel reduction(+ : total)
    {
#pragma omp single
      threads = omp_get_num_threads();
#pragma omp for
      for (long long i = 0; i < size; ++i) total += data[i];
    }
    Py_END_ALLOW_THREADS
    return Py_BuildValue("(di)", total, threads);
  });
}

#if TORCHLIKE_WITH_CUDA
PyObject* py_cuda_device_count(PyObject*, PyObject*) {
  return PyLong_FromLong(torch::cuda::device_count());
}

PyObject* py_cuda_arch_list(PyObject*, PyObject*) {
  return guarded([] { return to_py(torch::cuda::arch_list()); });
}
#endif

PyMethodDef kMethods[] = {
    {"version", py_version, METH_NOARGS, "Version string reported by libtorchlike."},
    {"ops", py_ops, METH_NOARGS, "Qualified names of the registered ops."},
    {"call_op", py_call_op, METH_VARARGS, "call_op(qualname, self, *args) -> str"},
    {"describe", py_describe, METH_O, "describe(n): torch::describe(at::arange(n))"},
    {"parallel_sum", py_parallel_sum, METH_O,
     "parallel_sum(n) -> (sum of range(n), OpenMP threads used)"},
#if TORCHLIKE_WITH_CUDA
    {"_cuda_device_count", py_cuda_device_count, METH_NOARGS, "Visible CUDA devices."},
    {"_cuda_arch_list", py_cuda_arch_list, METH_NOARGS, "Architectures compiled in."},
#endif
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT,
                       "torchlike._C",
                       "C++ core of torchlike (libtorchlike + OpenMP).",
                       -1,
                       kMethods,
                       nullptr,
                       nullptr,
                       nullptr,
                       nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__C() {
  PyObject* m = PyModule_Create(&kModule);
  if (!m) return nullptr;
  PyObject* cuda = PyBool_FromLong(TORCHLIKE_WITH_CUDA);
  if (PyModule_AddIntConstant(m, "_GLIBCXX_USE_CXX11_ABI", _GLIBCXX_USE_CXX11_ABI) < 0 ||
      PyModule_AddStringConstant(m, "__version__", TORCHLIKE_VERSION) < 0 ||
      PyModule_AddObject(m, "_cuda_compiled", cuda) < 0) {  // steals CUDA on success only
    Py_DECREF(cuda);
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
