#include "headroom/tracking/metric_scalars.hpp"

#include <cmath>

namespace headroom::tracking {
namespace {

void collect_numbers(const nlohmann::json& value, const std::string& key, std::int64_t step,
                     std::vector<Scalar>& out) {
  if (value.is_object()) {
    for (const auto& [name, child] : value.items())
      collect_numbers(child, key.empty() ? name : key + "/" + name, step, out);
  } else if (value.is_boolean()) {
    out.push_back({key, value.get<bool>() ? 1.0 : 0.0, step});
  } else if (value.is_number()) {
    const double number = value.get<double>();
    if (std::isfinite(number)) out.push_back({key, number, step});
  }
}

void collect_strings(const nlohmann::json& value, const std::string& key, char separator,
                     std::vector<std::pair<std::string, std::string>>& out) {
  if (value.is_object()) {
    for (const auto& [name, child] : value.items())
      collect_strings(child, key.empty() ? name : key + separator + name, separator, out);
  } else {
    out.emplace_back(key, value.is_string() ? value.get<std::string>() : value.dump());
  }
}

}  // namespace

std::vector<Scalar> MetricScalars::of(const nlohmann::json& line) {
  std::vector<Scalar> out;
  const auto type = line.value("type", std::string());
  if (type == "epoch") {
    const auto epoch = line.value("epoch", std::int64_t{0});
    for (const auto& [name, value] : line.items())
      if (name != "type" && name != "epoch") collect_numbers(value, name, epoch, out);
    steps_before_epoch_ += line.value("steps", std::int64_t{0});
  } else if (type == "step") {
    const auto step = steps_before_epoch_ + line.value("step", std::int64_t{0});
    for (const auto& [name, value] : line.items())
      if (name != "type" && name != "epoch" && name != "step")
        collect_numbers(value, "step/" + name, step, out);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> flatten_to_strings(const nlohmann::json& json,
                                                                    char separator) {
  std::vector<std::pair<std::string, std::string>> out;
  collect_strings(json, "", separator, out);
  return out;
}

}  // namespace headroom::tracking
