// The store a benchmark runs on when none is given: stores/hcrl_sa when it has been built
// (`headroom preprocess ../shared/data/can/hcrl_sa --out stores/hcrl_sa`), else headroom's
// synthetic default, generated and preprocessed once under build/bench-data.
#pragma once

#include <filesystem>

#include "headroom/preprocess/preprocessor.hpp"
#include "headroom/synthetic/synthetic_traffic.hpp"

namespace headroom::bench {

inline std::filesystem::path default_store() {
  if (std::filesystem::exists("stores/hcrl_sa/manifest.json")) return "stores/hcrl_sa";
  const std::filesystem::path root = "build/bench-data";
  const auto store = root / "synthetic-store";
  if (!std::filesystem::exists(store / "manifest.json")) {
    synthetic::generate_synthetic_dataset(root / "synthetic", {}, /*overwrite=*/true);
    preprocess::PreprocessOptions options;
    options.progress = 0;
    options.overwrite = true;
    preprocess::preprocess_dataset(root / "synthetic", store, options);
  }
  return store;
}

}  // namespace headroom::bench
