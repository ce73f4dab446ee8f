/* SPDX-License-Identifier: BSD-3-Clause */
/* The chain extension: uses the system's zlib (allowed by every manylinux
 * policy), libarchive (not allowed: grafted with its closure), libgomp
 * (grafted) and our libchain1 (grafted, with libchain2 behind it).
 * MODNAME is the module name (-DMODNAME=_ext1_rpath). info() returns
 * (crc32("abc"), zstd round trip through libarchive, OpenMP threads > 0,
 * chain1_value()). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <archive.h>
#include <archive_entry.h>
#include <omp.h>
#include <string.h>
#include <zlib.h>

int chain1_value(void);

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define STR2(a) #a
#define STR(a) STR2(a)

/* Writes a tar.zst with one member into memory and reads it back. */
static int archive_round_trip(char* out, size_t cap) {
  static char buf[65536];
  size_t used = 0;
  const char* text = "hello from libarchive";
  struct archive* w = archive_write_new();
  archive_write_set_format_pax_restricted(w);
  if (archive_write_add_filter_zstd(w) != ARCHIVE_OK) return -1;
  if (archive_write_open_memory(w, buf, sizeof buf, &used) != ARCHIVE_OK)
    return -2;
  struct archive_entry* e = archive_entry_new();
  archive_entry_set_pathname(e, "greeting.txt");
  archive_entry_set_size(e, (la_int64_t)strlen(text));
  archive_entry_set_filetype(e, AE_IFREG);
  archive_entry_set_perm(e, 0644);
  archive_write_header(w, e);
  archive_write_data(w, text, strlen(text));
  archive_entry_free(e);
  archive_write_close(w);
  archive_write_free(w);

  struct archive* r = archive_read_new();
  archive_read_support_filter_all(r);
  archive_read_support_format_all(r);
  if (archive_read_open_memory(r, buf, used) != ARCHIVE_OK) return -3;
  struct archive_entry* got;
  if (archive_read_next_header(r, &got) != ARCHIVE_OK) return -4;
  la_ssize_t n = archive_read_data(r, out, cap - 1);
  if (n < 0) return -5;
  out[n] = 0;
  int zstd = archive_filter_code(r, 0) == ARCHIVE_FILTER_ZSTD;
  archive_read_free(r);
  return zstd ? 1 : -6;
}

static PyObject* info(PyObject* self, PyObject* noargs) {
  (void)self;
  (void)noargs;
  char text[128];
  int rt = archive_round_trip(text, sizeof text);
  if (rt != 1)
    return PyErr_Format(PyExc_RuntimeError, "libarchive round trip failed: %d",
                        rt);
  int threads = 0;
#pragma omp parallel reduction(+ : threads)
  threads += 1;
  unsigned long crc = crc32(0L, (const Bytef*)"abc", 3);
  return Py_BuildValue("(ksii)", crc, text, threads > 0, chain1_value());
}

static PyMethodDef methods[] = {{"info", info, METH_NOARGS, "facts"},
                                {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT,
                                 STR(MODNAME),
                                 NULL,
                                 -1,
                                 methods,
                                 NULL,
                                 NULL,
                                 NULL,
                                 NULL};
PyMODINIT_FUNC CAT(PyInit_, MODNAME)(void) { return PyModule_Create(&mod); }
