#include "headroom/nn/checkpoint.hpp"

#include <ATen/autocast_mode.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/torch.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <utility>

namespace headroom::nn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The default generators whose streams the block may draw from: the CPU one, and the CUDA one of
// every device the inputs live on plus the current device once CUDA has a context there (the
// block may create random tensors on it). Checking for a context keeps CPU-only runs from
// initialising CUDA.
std::vector<at::Device> generator_devices(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Device> devices{at::Device(at::kCPU)};
  auto add = [&devices](at::Device device) {
    if (std::find(devices.begin(), devices.end(), device) == devices.end())
      devices.push_back(device);
  };
  for (const auto& tensor : tensors) {
    if (tensor.defined() && tensor.is_cuda()) add(tensor.device());
  }
  if (at::globalContext().hasCUDA()) {
    const auto& hooks = at::detail::getCUDAHooks();
    const auto current = hooks.current_device();
    if (current >= 0 && hooks.hasPrimaryContext(current)) add(at::Device(at::kCUDA, current));
  }
  return devices;
}

struct GeneratorStates {
  std::vector<std::pair<at::Device, at::Tensor>> states;

  static GeneratorStates capture(const std::vector<at::Device>& devices) {
    GeneratorStates result;
    for (const auto& device : devices) {
      auto generator = at::globalContext().defaultGenerator(device);
      std::lock_guard<std::mutex> lock(generator.mutex());
      result.states.emplace_back(device, generator.get_state());
    }
    return result;
  }

  void restore() const {
    for (const auto& [device, state] : states) {
      auto generator = at::globalContext().defaultGenerator(device);
      std::lock_guard<std::mutex> lock(generator.mutex());
      generator.set_state(state);
    }
  }
};

struct AutocastState {
  bool cpu_enabled = false;
  at::ScalarType cpu_dtype = at::kBFloat16;
  bool cuda_enabled = false;
  at::ScalarType cuda_dtype = at::kHalf;
  bool cache_enabled = true;

  static AutocastState capture() {
    return {at::autocast::is_autocast_enabled(at::kCPU), at::autocast::get_autocast_dtype(at::kCPU),
            at::autocast::is_autocast_enabled(at::kCUDA),
            at::autocast::get_autocast_dtype(at::kCUDA), at::autocast::is_autocast_cache_enabled()};
  }

  void apply() const {
    at::autocast::set_autocast_enabled(at::kCPU, cpu_enabled);
    at::autocast::set_autocast_dtype(at::kCPU, cpu_dtype);
    at::autocast::set_autocast_enabled(at::kCUDA, cuda_enabled);
    at::autocast::set_autocast_dtype(at::kCUDA, cuda_dtype);
    at::autocast::set_autocast_cache_enabled(cache_enabled);
  }
};

// Autocast caches the low-precision copy of a parameter the first time it is cast. A copy made
// under no-grad (the checkpointed forward) has no autograd history, and a recomputation that
// picked it up would give that parameter no gradient; so the cache is off while a checkpointed
// block runs, in both passes. The weights are cast once per block anyway.
class AutocastCacheOff {
 public:
  AutocastCacheOff() : previous_(at::autocast::is_autocast_cache_enabled()) {
    at::autocast::set_autocast_cache_enabled(false);
  }
  ~AutocastCacheOff() { at::autocast::set_autocast_cache_enabled(previous_); }
  AutocastCacheOff(const AutocastCacheOff&) = delete;
  AutocastCacheOff& operator=(const AutocastCacheOff&) = delete;

 private:
  bool previous_;
};

// Everything the backward pass needs besides the saved tensors. Carried in the autograd
// context's saved_data as a capsule, the only IValue that holds an arbitrary C++ object.
struct CheckpointState : torch::CustomClassHolder {
  CheckpointBlock block;
  std::size_t num_inputs = 0;
  std::vector<bool> input_requires_grad;
  std::vector<at::Device> generator_devices;
  GeneratorStates generators;
  AutocastState autocast;
};

// Puts the program's RNG streams and autocast mode back however the recomputation ends.
class RecomputeScope {
 public:
  explicit RecomputeScope(const CheckpointState& state)
      : generators_(GeneratorStates::capture(state.generator_devices)),
        autocast_(AutocastState::capture()) {
    state.generators.restore();
    state.autocast.apply();
  }
  ~RecomputeScope() {
    generators_.restore();
    autocast_.apply();
  }
  RecomputeScope(const RecomputeScope&) = delete;
  RecomputeScope& operator=(const RecomputeScope&) = delete;

 private:
  GeneratorStates generators_;
  AutocastState autocast_;
};

struct CheckpointFunction : torch::autograd::Function<CheckpointFunction> {
  // `tensors` = inputs followed by parameters.
  static variable_list forward(AutogradContext* ctx, at::TensorList tensors,
                               c10::intrusive_ptr<CheckpointState> state) {
    std::vector<at::Tensor> inputs(
        tensors.begin(), tensors.begin() + static_cast<std::ptrdiff_t>(state->num_inputs));
    state->generators = GeneratorStates::capture(state->generator_devices);
    state->autocast = AutocastState::capture();
    variable_list outputs;
    {
      torch::NoGradGuard no_grad;
      AutocastCacheOff cache_off;
      outputs = state->block(inputs);
    }
    variable_list non_differentiable;
    for (const auto& output : outputs) {
      if (output.defined() && !output.is_floating_point() && !output.is_complex()) {
        non_differentiable.push_back(output);
      }
    }
    if (!non_differentiable.empty()) ctx->mark_non_differentiable(non_differentiable);
    // Outputs that get no gradient stay undefined instead of becoming zero tensors.
    ctx->set_materialize_grads(false);
    ctx->save_for_backward(tensors.vec());
    ctx->saved_data["state"] = c10::IValue::make_capsule(std::move(state));
    return outputs;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto state =
        c10::static_intrusive_pointer_cast<CheckpointState>(ctx->saved_data["state"].toCapsule());
    auto saved = ctx->get_saved_variables();
    const auto num_inputs = state->num_inputs;

    std::vector<at::Tensor> inputs;
    inputs.reserve(num_inputs);
    for (std::size_t i = 0; i < num_inputs; ++i) {
      auto input = saved[i].defined() ? saved[i].detach() : saved[i];
      if (input.defined() && (input.is_floating_point() || input.is_complex())) {
        input.requires_grad_(state->input_requires_grad[i]);
      }
      inputs.push_back(std::move(input));
    }

    variable_list outputs;
    {
      RecomputeScope scope(*state);
      AutocastCacheOff cache_off;
      torch::AutoGradMode grad_on(true);
      outputs = state->block(inputs);
    }

    variable_list differentiated_outputs;
    variable_list output_grads;
    for (std::size_t k = 0; k < outputs.size() && k < grad_outputs.size(); ++k) {
      if (outputs[k].defined() && outputs[k].requires_grad() && grad_outputs[k].defined()) {
        differentiated_outputs.push_back(outputs[k]);
        output_grads.push_back(grad_outputs[k]);
      }
    }

    // Gradient slots: one per tensor given to forward, plus the (non-tensor) state argument.
    variable_list result(saved.size() + 1);
    variable_list wrt;
    std::vector<std::size_t> slots;
    for (std::size_t i = 0; i < saved.size(); ++i) {
      const auto& tensor = i < num_inputs ? inputs[i] : saved[i];
      if (tensor.defined() && tensor.requires_grad()) {
        wrt.push_back(tensor);
        slots.push_back(i);
      }
    }
    if (wrt.empty() || differentiated_outputs.empty()) return result;
    auto grads = torch::autograd::grad(differentiated_outputs, wrt, output_grads,
                                       /*retain_graph=*/false, /*create_graph=*/false,
                                       /*allow_unused=*/true);
    for (std::size_t j = 0; j < slots.size(); ++j) result[slots[j]] = grads[j];
    return result;
  }
};

bool any_requires_grad(const std::vector<at::Tensor>& tensors) {
  return std::any_of(tensors.begin(), tensors.end(),
                     [](const at::Tensor& t) { return t.defined() && t.requires_grad(); });
}

}  // namespace

std::vector<at::Tensor> checkpoint(const CheckpointBlock& block,
                                   const std::vector<at::Tensor>& inputs,
                                   const std::vector<at::Tensor>& parameters) {
  if (!torch::GradMode::is_enabled() ||
      (!any_requires_grad(inputs) && !any_requires_grad(parameters))) {
    return block(inputs);
  }
  auto state = c10::make_intrusive<CheckpointState>();
  state->block = block;
  state->num_inputs = inputs.size();
  for (const auto& input : inputs) {
    state->input_requires_grad.push_back(input.defined() && input.requires_grad());
  }
  state->generator_devices = generator_devices(inputs);

  std::vector<at::Tensor> tensors(inputs);
  tensors.insert(tensors.end(), parameters.begin(), parameters.end());
  return CheckpointFunction::apply(at::TensorList(tensors), std::move(state));
}

}  // namespace headroom::nn
