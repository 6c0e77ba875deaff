#include "headroom/util/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <cerrno>
#include <system_error>

#include "headroom/util/regular_file.hpp"

namespace headroom::util {

std::shared_ptr<const MappedFile> MappedFile::open(const std::filesystem::path& path,
                                                   MappingAccess access) {
  // Opening a FIFO would block, and a device has no size to map: only a regular file is mapped.
  const int fd = open_regular_for_reading(path).release();
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    throw std::system_error(error, std::generic_category(),
                            fmt::format("cannot stat '{}'", path.string()));
  }
  const auto size = static_cast<std::size_t>(info.st_size);
  void* data = nullptr;
  if (size > 0) {
    data = access == MappingAccess::kReadOnly
               ? ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0)
               : ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      const int error = errno;
      ::close(fd);
      throw std::system_error(error, std::generic_category(),
                              fmt::format("cannot map '{}'", path.string()));
    }
  }
  ::close(fd);  // the mapping keeps the file referenced
  return std::shared_ptr<const MappedFile>(new MappedFile(path, data, size));
}

MappedFile::MappedFile(std::filesystem::path path, void* data, std::size_t size)
    : path_(std::move(path)), data_(data), size_(size) {}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace headroom::util
