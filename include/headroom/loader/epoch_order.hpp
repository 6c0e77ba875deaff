// The epoch order: the one place headroom shuffles. The graph stages' batches, the sampled node
// stage's parts, the Python BytePackedBatchSampler and the fusion stage's split and epochs all take
// their order from here (tests/layering/epoch_order_sources_test.cpp refuses any other shuffle in
// the sources).
//
// Contract: epoch_permutation(count, seed, epoch, stream) is a pure function of its four
// arguments. It is the same in every process, on every machine, compiler and standard library (no
// std::shuffle or std distribution, whose outputs are unspecified), so a run resumed at epoch e
// plans epochs e, e+1, ... exactly as the uninterrupted run did. The stream tag keeps two users of
// one seed apart: the node stage's parts and fusion's split under the same --seed are unrelated.
//
// The algorithm, stated so that another language can reproduce it (tests/python/test_sampler.py
// does), with every operation modulo 2^64 and SplitMix64 as in util/split_mix.hpp:
//   state = SplitMix64(seed XOR tag(stream) XOR (epoch * 0x9E3779B97F4A7C15)).next()
//   rng   = SplitMix64(state)
//   order = [0, 1, ..., count - 1]
//   for i = count down to 2: j = rng.below(i); swap(order[i - 1], order[j])
// where rng.below(b) draws next() until it is at least (2^64 - b) mod b and returns it mod b.
// The graph batches' tag is 0, so their order is the one headroom has always drawn.
//
// Every function here is pure and safe to call from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace headroom::loader {

// Who the order is for. The value is the 64-bit tag the seed is XORed with (the ASCII of a short
// name for all but the graph batches); a new user gets a new tag, never an existing one.
enum class OrderStream : std::uint64_t {
  kGraphBatches = 0,                     // graph stages' batches; the Python sampler's
  kNodeParts = 0x6E6F64652D706172ULL,    // "node-par": the sampled node stage's parts
  kFusionSplit = 0x667573652D73706CULL,  // "fuse-spl": fusion's fitting / held-out split
  kFusionEpochs = 0x667573652D657063ULL  // "fuse-epc": the order fusion visits graphs in an epoch
};

// The stream's name as the Python binding spells it ("graph-batches", "node-parts",
// "fusion-split", "fusion-epochs"), and back; nullopt for a name that is none of them.
std::string_view order_stream_name(OrderStream stream);
std::optional<OrderStream> order_stream_named(std::string_view name);

// The permutation of [0, count) for (seed, epoch, stream), by the algorithm above. Throws
// std::invalid_argument when count exceeds what a uint32 index holds.
std::vector<std::uint32_t> epoch_permutation(std::uint64_t count, std::uint64_t seed,
                                             std::uint64_t epoch,
                                             OrderStream stream = OrderStream::kGraphBatches);

// `ids` in the order of epoch_permutation(ids.size(), seed, epoch, stream): element k of the
// result is ids[permutation[k]].
std::vector<std::uint32_t> shuffled(std::span<const std::uint32_t> ids, std::uint64_t seed,
                                    std::uint64_t epoch,
                                    OrderStream stream = OrderStream::kGraphBatches);

// Consecutive slices of at most `batch_size` ids (the last may be shorter; none is empty).
std::vector<std::vector<std::uint32_t>> chunk(std::span<const std::uint32_t> ids,
                                              std::size_t batch_size);

}  // namespace headroom::loader
