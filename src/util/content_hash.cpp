#include "headroom/util/content_hash.hpp"

#include <xxhash.h>

#include <new>

namespace headroom::util {

struct ContentHash::State {
  XXH3_state_t* xxh = XXH3_createState();
  State() {
    if (xxh == nullptr) throw std::bad_alloc();
    XXH3_64bits_reset(xxh);
  }
  ~State() { XXH3_freeState(xxh); }
  State(const State&) = delete;
  State& operator=(const State&) = delete;
};

ContentHash::ContentHash() : state_(std::make_unique<State>()) {}
ContentHash::~ContentHash() = default;
ContentHash::ContentHash(ContentHash&&) noexcept = default;
ContentHash& ContentHash::operator=(ContentHash&&) noexcept = default;

void ContentHash::update(std::span<const std::byte> bytes) {
  XXH3_64bits_update(state_->xxh, bytes.data(), bytes.size());
}

std::uint64_t ContentHash::digest() const { return XXH3_64bits_digest(state_->xxh); }

}  // namespace headroom::util
