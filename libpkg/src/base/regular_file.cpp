#include "libpkg/base/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libpkg/base/error.hpp"

namespace libpkg {

const char* file_kind_name(unsigned st_mode) {
  switch (st_mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a directory";
    case S_IFIFO:
      return "a FIFO";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFSOCK:
      return "a socket";
    case S_IFLNK:
      return "a symbolic link";
    default:
      return "not a regular file";
  }
}

int open_regular_file(const std::filesystem::path& path,
                      const std::string& name) {
  const std::string& shown = name.empty() ? path.string() : name;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw_errno(shown, "cannot open");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw_errno(shown, "cannot stat");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(
        Errc::io, shown,
        std::string("not a regular file (") + file_kind_name(st.st_mode) + ")");
  }
  // Regular files ignore O_NONBLOCK for reads, but clear it anyway so the
  // descriptor behaves exactly like a plain open.
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

}  // namespace libpkg
