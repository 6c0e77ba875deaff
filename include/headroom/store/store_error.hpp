// The error for a graph store that is missing, incomplete, corrupt or of another version.
#pragma once

#include <stdexcept>

namespace headroom::store {

class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace headroom::store
