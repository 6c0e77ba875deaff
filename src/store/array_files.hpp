// How every kind of store finds, checks and maps its array files (private to the store area):
// the checks that keep a manifest, whatever it says, from making headroom read outside an array
// or outside the store directory. Stateless and thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/store/store_metadata.hpp"
#include "headroom/util/mapped_file.hpp"

namespace headroom::store {

// A file name the manifest gives must be one plain name inside the store directory: throws
// StoreError naming `where`, the array and the reason otherwise.
void check_file_name(const std::string& file, std::string_view name, const std::string& where);

// The store directory, resolved (symbolic links followed); throws StoreError when it cannot be.
std::filesystem::path canonical_directory(const std::filesystem::path& path,
                                          const std::string& where);

// Checks `record` against what the manifest's counts give: its dtype, its file name, its shape
// (`shape`; a dimension of kAnyRows accepts any value) and its bytes against the shape (without
// overflow). Reads nothing. Throws StoreError naming `where` and the array.
inline constexpr std::uint64_t kAnyRows = ~std::uint64_t{0};
void check_array_record(const ArrayRecord& record, std::string_view name, std::string_view dtype,
                        std::size_t element_bytes, const std::vector<std::uint64_t>& shape,
                        const std::string& where);

// Maps the array file of `record` in the store at `directory` (canonical). A symbolic link is
// followed only to a file directly inside the store; the file must be a regular one (a FIFO would
// block, a device never end) of the size the manifest gives.
std::shared_ptr<const util::MappedFile> map_array_file(
    const std::filesystem::path& directory, std::string_view name, const ArrayRecord& record,
    const std::string& where, util::MappingAccess access = util::MappingAccess::kReadOnly);

// Throws StoreError naming the file when the mapped bytes' XXH3-64 is not the record's.
void check_checksum(const util::MappedFile& mapped, const ArrayRecord& record,
                    const std::string& where);

}  // namespace headroom::store
