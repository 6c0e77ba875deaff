// Peak fits (peak_model.hpp) kept on disk, so that a model that was probed once is planned
// instantly afterwards. A fit is stored under a key the caller builds from everything the peak
// depends on (model configuration, precision, checkpointing, device, torch version, probe scheme);
// the file name is a hash of the key and the file holds the key itself, so a hash collision or an
// edited file is a miss, never a wrong fit.
//
// Thread-safety: instances are immutable; concurrent writers of the same key each write a complete
// file atomically (temporary file, fsync, rename), and the last rename wins.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "headroom/memory/peak_model.hpp"

namespace headroom::memory {

// $HEADROOM_CACHE_DIR/peak-fits, else $XDG_CACHE_HOME/headroom/peak-fits, else
// ~/.cache/headroom/peak-fits. An empty result (HEADROOM_CACHE_DIR set to "off") disables caching.
std::filesystem::path default_peak_fit_cache_dir();

struct CachedPeakFit {
  PeakFit fit;
  std::vector<PeakSample> samples;
  std::filesystem::path file;
};

class PeakFitCache {
 public:
  // `dir` need not exist; it is created on the first store. An empty path disables the cache:
  // load() always misses and store() does nothing.
  explicit PeakFitCache(std::filesystem::path dir);

  // The fit stored under `key`; nullopt when there is none, or the file is unreadable, malformed,
  // holds another key or a fit that peak_fit_problem() refuses (a file edited into valid JSON
  // with zero, negative or huge coefficients is not trusted). When a file was there but is not
  // used, `discarded` (if given) receives a one-line note naming the file and the reason;
  // otherwise it is cleared.
  std::optional<CachedPeakFit> load(const nlohmann::json& key,
                                    std::string* discarded = nullptr) const;
  // Writes the fit and its samples under `key` atomically; returns the file written (empty when
  // the cache is disabled). Throws std::runtime_error naming the file when it cannot be written.
  std::filesystem::path store(const nlohmann::json& key, const PeakFit& fit,
                              std::span<const PeakSample> samples) const;
  std::filesystem::path file_for(const nlohmann::json& key) const;
  bool enabled() const { return !dir_.empty(); }

 private:
  std::filesystem::path dir_;
};

}  // namespace headroom::memory
