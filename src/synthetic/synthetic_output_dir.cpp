#include "synthetic_output_dir.hpp"

#include <cerrno>
#include <string>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

#include "headroom/util/regular_file.hpp"

namespace headroom::synthetic::detail {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

void write_synced_file(const fs::path& file, std::string_view content) {
  // Inside the staging directory the generator made; never through a link planted there.
  const int fd = util::create_for_writing(file).release();
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      errno = saved;
      throw_errno("cannot write " + file.string());
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const int saved = errno;
  if (::close(fd) != 0 || !synced) {
    if (!synced) errno = saved;
    throw_errno("cannot sync " + file.string());
  }
}

}  // namespace headroom::synthetic::detail
