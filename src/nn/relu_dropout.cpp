#include "headroom/nn/relu_dropout.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <mutex>

namespace headroom::nn {
namespace {

// A 32-bit integer hash with full avalanche (every input bit flips each output bit with
// probability ~1/2): consecutive element indices give independent-looking keep decisions.
inline std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// The keep decision of element `low` of a 2^32-element block whose key is `block_key`.
inline bool kept(std::uint32_t low, std::uint32_t block_key, std::uint32_t threshold) {
  return mix32(mix32(low ^ block_key) + block_key) < threshold;
}

struct DropoutDraw {
  std::uint32_t key0 = 0;
  std::uint32_t key1 = 0;
  std::uint32_t threshold = 0;  // kept iff the element's hash < threshold: P = threshold / 2^32
  float scale = 1.0f;           // 1 / (1 - p)

  // Element i lies in block i >> 32 (one block for any tensor below 4G elements).
  std::uint32_t block_key(std::int64_t index) const {
    return key0 ^ mix32(static_cast<std::uint32_t>(static_cast<std::uint64_t>(index) >> 32) + key1);
  }
};

DropoutDraw draw(double p) {
  auto* generator = at::get_generator_or_default<at::CPUGeneratorImpl>(
      std::nullopt, at::detail::getDefaultCPUGenerator());
  std::uint64_t seed = 0;
  {
    std::lock_guard<std::mutex> lock(generator->mutex_);
    seed = generator->random64();
  }
  DropoutDraw result;
  result.key0 = static_cast<std::uint32_t>(seed);
  result.key1 = static_cast<std::uint32_t>(seed >> 32);
  const double keep = (1.0 - p) * 4294967296.0;
  result.threshold = keep >= 4294967295.0 ? 0xffffffffU : static_cast<std::uint32_t>(keep);
  result.scale = static_cast<float>(1.0 / (1.0 - p));
  return result;
}

// The float loop, compiled for AVX2 and for baseline x86-64 and picked at load time: the hash's
// 32-bit multiplies vectorise with AVX2 only. Branch-free on the float's bits, because GCC does
// not if-convert float comparisons (they may trap) and would leave the loop scalar: a negative
// number becomes +0, a NaN passes whatever the mask says (torch's dropout multiplies NaN by 0,
// which stays NaN), a dropped element becomes +0.
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx2", "default")))
#endif
void relu_dropout_float(const float* in, float* out, std::int64_t count, std::uint32_t first_low,
                        std::uint32_t block_key, std::uint32_t threshold, float scale) {
  constexpr std::uint32_t kMagnitude = 0x7fffffffU;
  constexpr std::uint32_t kInfinity = 0x7f800000U;
  for (std::int64_t i = 0; i < count; ++i) {
    const auto bits = std::bit_cast<std::uint32_t>(in[i]);
    const std::uint32_t nan = 0U - static_cast<std::uint32_t>((bits & kMagnitude) > kInfinity);
    const std::uint32_t sign = static_cast<std::uint32_t>(static_cast<std::int32_t>(bits) >> 31);
    const std::uint32_t keep =
        0U - static_cast<std::uint32_t>(
                 kept(first_low + static_cast<std::uint32_t>(i), block_key, threshold));
    out[i] = std::bit_cast<float>(bits & ~(sign & ~nan) & (keep | nan)) * scale;
  }
}

template <typename T>
void relu_dropout_generic(const T* in, T* out, std::int64_t count, std::uint32_t first_low,
                          std::uint32_t block_key, std::uint32_t threshold, float scale) {
  using Acc = at::opmath_type<T>;
  for (std::int64_t i = 0; i < count; ++i) {
    const Acc x = static_cast<Acc>(in[i]);
    if (std::isnan(x)) {
      out[i] = in[i];  // as relu then dropout: NaN stays NaN, kept or not
      continue;
    }
    const bool keep = kept(first_low + static_cast<std::uint32_t>(i), block_key, threshold);
    out[i] = keep && x > Acc(0) ? static_cast<T>(x * static_cast<Acc>(scale)) : T(0);
  }
}

template <typename T>
void relu_dropout_range(const T* in, T* out, std::int64_t begin, std::int64_t end,
                        const DropoutDraw& d) {
  constexpr std::int64_t kBlock = std::int64_t{1} << 32;
  while (begin < end) {
    const auto block_end = std::min(end, (begin / kBlock + 1) * kBlock);
    const auto low = static_cast<std::uint32_t>(begin);
    if constexpr (std::is_same_v<T, float>) {
      relu_dropout_float(in + begin, out + begin, block_end - begin, low, d.block_key(begin),
                         d.threshold, d.scale);
    } else {
      relu_dropout_generic(in + begin, out + begin, block_end - begin, low, d.block_key(begin),
                           d.threshold, d.scale);
    }
    begin = block_end;
  }
}

at::Tensor relu_dropout_cpu(const at::Tensor& x, const DropoutDraw& d) {
  const auto input = x.contiguous();
  auto output = at::empty_like(input, at::MemoryFormat::Contiguous);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "relu_dropout",
                                  [&] {
                                    const auto* in = input.const_data_ptr<scalar_t>();
                                    auto* out = output.mutable_data_ptr<scalar_t>();
                                    at::parallel_for(0, input.numel(), at::internal::GRAIN_SIZE,
                                                     [&](std::int64_t begin, std::int64_t end) {
                                                       relu_dropout_range(in, out, begin, end, d);
                                                     });
                                  });
  return output;
}

class ReluDropoutFunction : public torch::autograd::Function<ReluDropoutFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, double p) {
    const auto d = draw(p);
    auto out = relu_dropout_cpu(x, d);
    ctx->save_for_backward({out});
    ctx->saved_data["scale"] = static_cast<double>(d.scale);
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto out = ctx->get_saved_variables()[0];
    const auto scale = ctx->saved_data["scale"].toDouble();
    // out > 0 exactly where x > 0 and the element was kept.
    return {torch::threshold_backward(grads[0], out, 0).mul_(scale), at::Tensor()};
  }
};

}  // namespace

at::Tensor relu_dropout(const at::Tensor& x, double p, bool training) {
  TORCH_CHECK(p >= 0.0 && p < 1.0, "relu_dropout: p must be in [0, 1), got ", p);
  TORCH_CHECK(x.is_floating_point(), "relu_dropout: x must be floating point, got ",
              x.scalar_type());
  if (!training || p == 0.0) return torch::relu(x);
  if (!x.device().is_cpu()) return torch::dropout(torch::relu(x), p, true);
  return ReluDropoutFunction::apply(x, p);
}

}  // namespace headroom::nn
