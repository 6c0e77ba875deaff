// What a store's graphs give every model: how many identities node feature 0 takes and how many
// node features there are. Both come from the store (store::identity_classes,
// StoreMetadata::node_feature_count); presets take them from here.
#pragma once

#include <cstdint>

namespace headroom::models {

struct ModelInputs {
  // Implicit from a count of IDs: the KD-GAT features (11) with CAN-ID identity.
  ModelInputs(std::int64_t ids, std::int64_t features = 11)  // NOLINT(google-explicit-*)
      : num_ids(ids), in_features(features) {}

  std::int64_t num_ids;      // embedding rows: distinct values of feature 0
  std::int64_t in_features;  // node features, feature 0 included
};

}  // namespace headroom::models
