// The scalar series an experiment tracker shows, taken from the training loop's metric lines
// (train/loop/metrics_sink.hpp): every number and boolean of an epoch line, keyed by its path with
// '/' between levels ("train_loss", "validation/f1", "memory/cpu/peak_bytes") at step = epoch;
// every number of a sampled step line under "step/" ("step/tensor_bytes") at a step counted across
// epochs. Strings, arrays and non-finite numbers are left out. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace headroom::tracking {

struct Scalar {
  std::string key;
  double value = 0;
  std::int64_t step = 0;  // the epoch (epoch lines) or the training step since the first epoch
};

class MetricScalars {
 public:
  // The scalars of one line, in key order. Lines must arrive in the order the loop emits them:
  // an epoch's step lines, then its epoch line (whose "steps" moves the step count on). Lines of
  // another type give nothing.
  std::vector<Scalar> of(const nlohmann::json& line);

 private:
  std::int64_t steps_before_epoch_ = 0;
};

// `json` flattened to (path, value) with `separator` between levels, for MLflow params: strings
// as they are, other scalars and arrays as compact JSON. Objects nest; an empty object gives
// nothing.
std::vector<std::pair<std::string, std::string>> flatten_to_strings(const nlohmann::json& json,
                                                                    char separator = '.');

}  // namespace headroom::tracking
