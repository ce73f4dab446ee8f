// SPDX-License-Identifier: BSD-3-Clause
// A C++ extension needing GLIBCXX_3.4.30 (g++ 12's
// std::condition_variable::wait(std::unique_lock<std::mutex>&)), which no
// manylinux policy before manylinux_2_35 allows.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

static PyObject* handshake(PyObject*, PyObject*) {
  std::mutex m;
  std::condition_variable cv;
  std::string message;
  std::thread worker([&] {
    std::lock_guard<std::mutex> lock(m);
    message = "handshake done";
    cv.notify_one();
  });
  {
    std::unique_lock<std::mutex> lock(m);
    while (message.empty()) cv.wait(lock);
  }
  worker.join();
  return PyUnicode_FromString(message.c_str());
}

static PyMethodDef methods[] = {
    {"handshake", handshake, METH_NOARGS, "thread handshake"},
    {nullptr, nullptr, 0, nullptr}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT,
                                 "_cxx",
                                 nullptr,
                                 -1,
                                 methods,
                                 nullptr,
                                 nullptr,
                                 nullptr,
                                 nullptr};
PyMODINIT_FUNC PyInit__cxx(void) { return PyModule_Create(&mod); }
