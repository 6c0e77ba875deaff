// A streaming XXH3-64 hash of bytes fed in pieces: what identifies content (for example the CAN
// frames of a log, whatever its file format) rather than a file's bytes. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

namespace headroom::util {

class ContentHash {
 public:
  ContentHash();
  ~ContentHash();
  ContentHash(ContentHash&&) noexcept;
  ContentHash& operator=(ContentHash&&) noexcept;

  void update(std::span<const std::byte> bytes);
  // The hash of every byte fed so far (the hash of nothing before any update).
  std::uint64_t digest() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace headroom::util
