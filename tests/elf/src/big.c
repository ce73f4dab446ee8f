/* SPDX-License-Identifier: BSD-3-Clause */
/* Keeps a large payload object (linked next to it) referenced, so the
 * kill-mid-write test has a big but valid shared library to edit. */
extern const char _binary_payload_bin_start[];
extern const char _binary_payload_bin_end[];

int fixture_value(void) { return 4242; }

unsigned long big_payload_size(void) {
  return (unsigned long)(_binary_payload_bin_end - _binary_payload_bin_start);
}
