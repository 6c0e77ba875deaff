#include "headroom/util/process_role.hpp"

#include <stdexcept>
#include <string>

namespace headroom::util {
namespace {

ProcessRole& current_role() {
  static ProcessRole role;
  return role;
}

}  // namespace

const ProcessRole& process_role() { return current_role(); }

void set_process_role(ProcessRole role) {
  if (role.world_size < 1 || role.rank < 0 || role.rank >= role.world_size)
    throw std::invalid_argument("process role: rank " + std::to_string(role.rank) +
                                " is outside 0.." + std::to_string(role.world_size - 1));
  if (role.ranks_on_node < 1 || role.ranks_on_node > role.world_size)
    throw std::invalid_argument("process role: " + std::to_string(role.ranks_on_node) +
                                " ranks on this node of a run of " +
                                std::to_string(role.world_size));
  current_role() = role;
}

}  // namespace headroom::util
