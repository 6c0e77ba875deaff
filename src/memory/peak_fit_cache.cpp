#include "headroom/memory/peak_fit_cache.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>

#include "headroom/util/bounded_json.hpp"
#include "headroom/util/file_reader.hpp"
#include "headroom/util/file_writer.hpp"

namespace headroom::memory {
namespace {

std::filesystem::path from_environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::filesystem::path(value)
                                            : std::filesystem::path();
}

}  // namespace

std::filesystem::path default_peak_fit_cache_dir() {
  const auto headroom_dir = from_environment("HEADROOM_CACHE_DIR");
  if (headroom_dir == "off") return {};
  if (!headroom_dir.empty()) return headroom_dir / "peak-fits";
  const auto xdg = from_environment("XDG_CACHE_HOME");
  if (!xdg.empty()) return xdg / "headroom" / "peak-fits";
  const auto home = from_environment("HOME");
  if (!home.empty()) return home / ".cache" / "headroom" / "peak-fits";
  return {};
}

PeakFitCache::PeakFitCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

std::filesystem::path PeakFitCache::file_for(const nlohmann::json& key) const {
  const auto text = key.dump();
  const auto hash =
      util::checksum_bytes(std::as_bytes(std::span<const char>(text.data(), text.size())));
  return dir_ / (util::checksum_hex(hash) + ".json");
}

std::optional<CachedPeakFit> PeakFitCache::load(const nlohmann::json& key,
                                                std::string* discarded) const {
  if (discarded != nullptr) discarded->clear();
  if (!enabled()) return std::nullopt;
  const auto file = file_for(key);
  std::optional<std::string> text;
  std::string unreadable;
  try {
    text = util::read_file_if_present(file);  // never blocks on a FIFO or reads a device
  } catch (const std::exception& e) {
    unreadable = e.what();
  }
  if (!text && unreadable.empty()) return std::nullopt;
  const auto discard = [&](const std::string& reason) -> std::optional<CachedPeakFit> {
    if (discarded != nullptr)
      *discarded = fmt::format("peak-fit cache file {} discarded: {}", file.string(), reason);
    return std::nullopt;
  };
  if (!text) return discard(unreadable);
  const auto json = util::parse_json_or_discarded(*text);
  if (json.is_discarded() || !json.is_object()) return discard("it is not a JSON object");
  if (json.value("key", nlohmann::json()) != key) return discard("it holds another key");
  CachedPeakFit cached;
  try {
    cached.fit = json.at("fit").get<PeakFit>();
    cached.samples = json.at("samples").get<std::vector<PeakSample>>();
  } catch (const nlohmann::json::exception&) {
    return discard("it lacks a field or has one of the wrong type");  // truncated or hand-edited
  }
  if (const auto problem = peak_fit_problem(cached.fit, cached.samples); !problem.empty())
    return discard(problem);
  cached.file = file;
  return cached;
}

std::filesystem::path PeakFitCache::store(const nlohmann::json& key, const PeakFit& fit,
                                          std::span<const PeakSample> samples) const {
  if (!enabled()) return {};
  const auto file = file_for(key);
  std::error_code error;
  std::filesystem::create_directories(dir_, error);
  if (error)
    throw std::runtime_error(dir_.string() + ": cannot create the peak-fit cache directory (" +
                             error.message() + ")");
  const nlohmann::json json = {
      {"key", key},
      {"fit", fit},
      {"samples", std::vector<PeakSample>(samples.begin(), samples.end())}};
  util::write_file_atomically(file, json.dump(2) + "\n");
  return file;
}

}  // namespace headroom::memory
