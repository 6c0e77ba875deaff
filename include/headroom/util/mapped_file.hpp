// A memory mapping of a whole file, read-only or copy-on-write.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>

namespace headroom::util {

// How a file's pages are mapped.
enum class MappingAccess {
  kReadOnly,     // PROT_READ, shared: a write through the mapping faults (SIGSEGV)
  kCopyOnWrite,  // private and writable: a write changes this process's copy of the page only,
                 // never the file (views handed to code that may write: the Python module)
};

// Pages are loaded on first touch, so mapping costs no RAM until data is read. Immutable and
// thread-safe; share it with std::shared_ptr to keep views (and tensors over them) valid.
class MappedFile {
 public:
  // Throws std::system_error naming the file when it cannot be opened or mapped, and
  // std::runtime_error naming it when it is not a regular file (a FIFO, a device).
  static std::shared_ptr<const MappedFile> open(const std::filesystem::path& path,
                                                MappingAccess access = MappingAccess::kReadOnly);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(data_), size_}; }
  std::size_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  MappedFile(std::filesystem::path path, void* data, std::size_t size);
  std::filesystem::path path_;
  void* data_;
  std::size_t size_;
};

}  // namespace headroom::util
