// Memory sizes as people write them: "1GB", "512MiB", "1.5G", "300 MB", "4096" (bytes).
// Decimal units (kB, MB, GB, TB) are powers of 1000, binary ones (KiB, MiB, GiB, TiB) and the bare
// letters K, M, G, T powers of 1024, as nvidia-smi and SLURM's --mem write them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace headroom::util {

// Throws std::invalid_argument naming the text for anything else (negative, unknown unit, junk).
std::int64_t parse_byte_size(std::string_view text);

// "1.50 GiB", "300.0 MiB", "512 B".
std::string format_byte_size(double bytes);

}  // namespace headroom::util
