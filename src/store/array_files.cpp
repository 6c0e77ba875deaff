#include "array_files.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <system_error>

#include "headroom/store/store_error.hpp"
#include "headroom/util/file_writer.hpp"
#include "headroom/util/printable_text.hpp"

namespace headroom::store {

// A file name the manifest gives: one plain name inside the store directory.
void check_file_name(const std::string& file, std::string_view name, const std::string& where) {
  const char* reason = nullptr;
  if (file.empty() || file == "." || file == "..") {
    reason = "is not a file name";
  } else if (file.find('/') != std::string::npos) {
    reason = file.front() == '/' ? "is an absolute path, not a name inside the store"
                                 : "is a path, not a plain name inside the store";
  } else if (file.find('\0') != std::string::npos) {
    reason = "holds a NUL byte";
  }
  if (reason != nullptr) {
    throw StoreError(fmt::format("{}: array '{}': file '{}' {} (the store is corrupt)", where, name,
                                 util::printable(file, util::kMaxQuotedNameBytes), reason));
  }
}

std::filesystem::path canonical_directory(const std::filesystem::path& path,
                                          const std::string& where) {
  std::error_code ec;
  auto directory = std::filesystem::canonical(path, ec);
  if (ec)
    throw StoreError(fmt::format("{}: cannot resolve the store's path ({})", where, ec.message()));
  return directory;
}

// Maps the array file of `record` in the store at `directory` (canonical). A symbolic link is
// followed only to a file directly inside the store; the file must be a regular one (a FIFO would
// block, a device never end) of the size the manifest gives.
std::shared_ptr<const util::MappedFile> map_array_file(const std::filesystem::path& directory,
                                                       std::string_view name,
                                                       const ArrayRecord& record,
                                                       const std::string& where,
                                                       util::MappingAccess access) {
  const std::string file = util::printable(record.file, util::kMaxQuotedNameBytes);
  const auto refuse = [&](const std::string& reason) {
    return StoreError(fmt::format("{}: array '{}': file '{}' {} (the store is corrupt)", where,
                                  name, file, reason));
  };
  std::error_code ec;
  const auto resolved = std::filesystem::canonical(directory / record.file, ec);
  if (ec) throw refuse(fmt::format("cannot be opened ({})", ec.message()));
  if (resolved.parent_path() != directory)
    throw refuse("is a symbolic link leaving the store directory");
  if (!std::filesystem::is_regular_file(resolved, ec)) throw refuse("is not a regular file");
  std::shared_ptr<const util::MappedFile> mapped;
  try {
    mapped = util::MappedFile::open(resolved, access);
  } catch (const std::runtime_error& e) {  // std::system_error, or replaced since the check
    throw StoreError(fmt::format("{}: {}", where, e.what()));
  }
  if (mapped->size() != record.bytes) {
    throw StoreError(
        fmt::format("{}: array file '{}' has {} bytes, manifest says {} (truncated store?)", where,
                    file, mapped->size(), record.bytes));
  }
  return mapped;
}

void check_array_record(const ArrayRecord& record, std::string_view name, std::string_view dtype,
                        std::size_t element_bytes, const std::vector<std::uint64_t>& shape,
                        const std::string& where) {
  if (record.dtype != dtype) {
    throw StoreError(fmt::format("{}: array '{}' has dtype {}, expected {}", where, name,
                                 util::printable(record.dtype, util::kMaxQuotedNameBytes), dtype));
  }
  check_file_name(record.file, name, where);
  bool matches = record.shape.size() == shape.size();
  for (std::size_t d = 0; matches && d < shape.size(); ++d)
    matches = shape[d] == kAnyRows || shape[d] == record.shape[d];
  if (!matches) {
    std::vector<std::string> wanted;
    for (const auto d : shape) wanted.push_back(d == kAnyRows ? "any" : std::to_string(d));
    throw StoreError(fmt::format(
        "{}: array '{}' has shape [{}], the manifest's counts give [{}] (the store is corrupt)",
        where, name, fmt::join(record.shape, ", "), fmt::join(wanted, ", ")));
  }
  std::uint64_t bytes = element_bytes;
  for (const std::uint64_t d : record.shape) {
    if (__builtin_mul_overflow(bytes, d, &bytes)) {
      throw StoreError(
          fmt::format("{}: array '{}' shape [{}] is larger than any file (the store is corrupt)",
                      where, name, fmt::join(record.shape, ", ")));
    }
  }
  if (bytes != record.bytes) {
    throw StoreError(fmt::format("{}: array '{}' shape [{}] does not match its size ({} bytes)",
                                 where, name, fmt::join(record.shape, ", "), record.bytes));
  }
}

void check_checksum(const util::MappedFile& mapped, const ArrayRecord& record,
                    const std::string& where) {
  if (util::checksum_hex(util::checksum_bytes(mapped.bytes())) != record.xxh3) {
    throw StoreError(fmt::format("{}: checksum mismatch in '{}' (the store is corrupt)", where,
                                 util::printable(record.file, util::kMaxQuotedNameBytes)));
  }
}

}  // namespace headroom::store
