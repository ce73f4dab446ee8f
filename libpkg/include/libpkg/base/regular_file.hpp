// Opening an input that must be a regular file, without blocking on anything
// else.
//
// open(2) of a FIFO for reading blocks until a writer appears, so a plain
// open-then-fstat check hangs forever on a FIFO named like the input. The
// file is opened with O_NONBLOCK (which makes that open return at once),
// checked with fstat, and only then switched back to blocking reads. Every
// reader of a whole input file (MappedFile, the archive file sources) goes
// through here, so FIFOs, devices and directories are refused in one place.
#pragma once

#include <filesystem>
#include <string>

namespace libpkg {

// Returns an O_RDONLY|O_CLOEXEC descriptor of `path`; throws Errc::io
// "cannot open: ..." or "not a regular file (a FIFO)" naming `name` (the
// path when empty). The caller closes the descriptor.
int open_regular_file(const std::filesystem::path& path,
                      const std::string& name = {});

// "a FIFO", "a character device", "a directory", ...: for error messages.
const char* file_kind_name(unsigned st_mode);

}  // namespace libpkg
