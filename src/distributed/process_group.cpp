#include "headroom/distributed/process_group.hpp"

#include "headroom/nn/cuda_runtime.hpp"

#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <ATen/DeviceAccelerator.h>

#include <fmt/format.h>
#include <algorithm>
#include <exception>
#include <map>
#include <optional>

#include "c10d_backends.hpp"
#include "rank_heartbeat.hpp"

namespace headroom::distributed {

struct ProcessGroup::State {
  LaunchEnvironment env;
  ProcessGroupOptions options;
  c10::Device device = c10::Device(c10::kCPU);  // where the backend's tensors must live
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> backend;
  std::optional<detail::RankHeartbeat> heartbeat;
  // run_on_rank0 calls so far: every rank makes them in the same order, so the count names the
  // call's key in the store on every rank (a key once set stays set).
  std::uint64_t rank0_steps = 0;

  // A connection to the job's store. The rendezvous connections (one per rank, rank 0's serving
  // it) count as the store's workers: rank 0's returns once every rank's has connected. Later
  // connections (heartbeats) join without being counted.
  c10::intrusive_ptr<c10d::Store> connect_store(bool serve, bool rendezvous) const {
    c10d::TCPStoreOptions store_options;
    store_options.port = static_cast<std::uint16_t>(env.master_port);
    store_options.isServer = serve;
    store_options.numWorkers =
        rendezvous ? std::optional<std::size_t>(env.world_size) : std::nullopt;
    store_options.waitWorkers = rendezvous;
    store_options.timeout = options.timeout;
    return c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
  }

  // Waits for `work`; a failure or a timeout becomes a CollectiveFailure naming the lost ranks.
  void wait(const c10::intrusive_ptr<c10d::Work>& work, const char* operation) {
    try {
      if (!work->wait(options.timeout))
        throw std::runtime_error(
            fmt::format("no answer within {} s", options.timeout.count() / 1000));
    } catch (const std::exception& error) {
      fail(operation, error.what());
    }
  }

  [[noreturn]] void fail(const char* operation, const std::string& reason) {
    const auto lost = heartbeat ? heartbeat->lost_ranks(options.heartbeat_grace) : "unknown";
    throw CollectiveFailure(fmt::format(
        "rank {} of {}: {} across ranks failed; lost {}. ({}.) Rerun the same command to resume "
        "from the last finished epoch",
        env.rank, env.world_size, operation, lost, first_line(reason)));
  }

  static std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }
};

namespace {

// c10d takes one tensor per call here (several tensors in one call mean one per device), so a
// list is flattened per dtype into one contiguous buffer on the backend's device, operated on,
// and copied back.
template <typename Operation>
void on_flat_buffers(std::vector<at::Tensor>& tensors, const c10::Device& device,
                     const Operation& operation) {
  std::map<c10::ScalarType, std::vector<std::size_t>> by_dtype;
  for (std::size_t i = 0; i < tensors.size(); ++i) by_dtype[tensors[i].scalar_type()].push_back(i);
  for (const auto& [dtype, indices] : by_dtype) {
    std::int64_t elements = 0;
    for (const auto i : indices) elements += tensors[i].numel();
    if (elements == 0) continue;  // same shapes on every rank: every rank skips it
    const auto& first = tensors[indices.front()];
    if (indices.size() == 1 && first.is_contiguous() && first.device() == device) {
      auto alias = first.view({-1});  // operated on in place: no copies
      operation(alias);
      continue;
    }
    std::vector<at::Tensor> flat_parts;
    for (const auto i : indices) flat_parts.push_back(tensors[i].reshape({-1}).to(device));
    auto flat = torch::cat(flat_parts);
    operation(flat);
    std::int64_t offset = 0;
    for (const auto i : indices) {
      const auto n = tensors[i].numel();
      tensors[i].copy_(flat.slice(0, offset, offset + n).view_as(tensors[i]));
      offset += n;
    }
  }
}

}  // namespace

std::shared_ptr<ProcessGroup> ProcessGroup::connect(const LaunchEnvironment& env,
                                                    const c10::Device& device,
                                                    const ProcessGroupOptions& options) {
  auto state = std::make_unique<State>();
  state->env = env;
  state->options = options;
  state->device = device.is_cuda() ? device : c10::Device(c10::kCPU);
  try {
    state->store = state->connect_store(/*serve=*/env.rank == 0, /*rendezvous=*/true);
    if (device.is_cuda()) {
      const int index = std::max<int>(0, device.index());
      nn::load_cuda_plugin();  // CUDA, and the NCCL backend, come with the plugin
      at::accelerator::setDeviceIndex(static_cast<c10::DeviceIndex>(index));
      state->backend =
          detail::make_nccl_backend(state->store, env.rank, env.world_size, index, options.timeout);
    } else {
      state->backend =
          detail::make_gloo_backend(state->store, env.rank, env.world_size, options.timeout);
    }
  } catch (const std::exception& error) {
    throw CollectiveFailure(fmt::format(
        "rank {} of {}: could not join the job's rendezvous at {}:{} within {} s ({}): {}",
        env.rank, env.world_size, env.master_addr, env.master_port, options.timeout.count() / 1000,
        to_string(env.launcher), State::first_line(error.what())));
  }
  auto* raw = state.get();
  state->heartbeat.emplace(
      [raw] { return raw->connect_store(/*serve=*/false, /*rendezvous=*/false); }, env.rank,
      env.world_size, options.heartbeat_interval);
  return std::shared_ptr<ProcessGroup>(new ProcessGroup(std::move(state)));
}

ProcessGroup::ProcessGroup(std::unique_ptr<State> state) : state_(std::move(state)) {}

ProcessGroup::~ProcessGroup() = default;

int ProcessGroup::rank() const { return state_->env.rank; }
int ProcessGroup::world_size() const { return state_->env.world_size; }
std::string ProcessGroup::backend_name() const { return state_->backend->getBackendName(); }

void ProcessGroup::all_reduce_sum(std::vector<at::Tensor>& tensors) {
  on_flat_buffers(tensors, state_->device, [this](at::Tensor& flat) {
    std::vector<at::Tensor> one = {flat};
    state_->wait(state_->backend->allreduce(one), "an all-reduce");
  });
}

void ProcessGroup::broadcast_from_rank0(std::vector<at::Tensor>& tensors) {
  on_flat_buffers(tensors, state_->device, [this](at::Tensor& flat) {
    std::vector<at::Tensor> one = {flat};
    c10d::BroadcastOptions options;
    options.rootRank = 0;
    state_->wait(state_->backend->broadcast(one, options), "a broadcast");
  });
}

void ProcessGroup::publish(const std::string& key, const std::string& value) {
  state_->store->set(key, std::vector<std::uint8_t>(value.begin(), value.end()));
}

std::string ProcessGroup::await(const std::string& key, std::chrono::milliseconds timeout) {
  try {
    state_->store->wait({key}, timeout);
    const auto value = state_->store->get(key);
    return {value.begin(), value.end()};
  } catch (const std::exception& error) {
    state_->fail("waiting for rank 0", error.what());
  }
}

void ProcessGroup::run_on_rank0(const std::string& step, const std::function<void()>& work) {
  const auto key = fmt::format("headroom/rank0/{}/{}", state_->rank0_steps++, step);
  const auto read_key = [&key](int rank) { return fmt::format("{}/read by {}", key, rank); };
  if (rank() == 0) {
    std::exception_ptr failure;
    std::string reason;
    try {
      work();
    } catch (const std::exception& error) {
      failure = std::current_exception();
      reason = error.what();
    } catch (...) {
      failure = std::current_exception();
      reason = "an unknown error";
    }
    if (!failure) {
      publish(key, "ok");
      return;
    }
    publish(key, "failed: " + reason);
    // The store lives in this process: it must outlast the others' reading of the failure, or
    // they would see only a lost rank 0. A rank that is gone does not answer; it is not waited for
    // long.
    std::vector<std::string> readers;
    for (int r = 1; r < world_size(); ++r) readers.push_back(read_key(r));
    try {
      state_->store->wait(readers, std::min<std::chrono::milliseconds>(state_->options.timeout,
                                                                       std::chrono::seconds(30)));
    } catch (const std::exception&) {  // the failure rethrown below says more than this one
    }
    std::rethrow_exception(failure);
  }
  // A day: the work (preprocessing a store, caching a teacher's outputs) may take far longer than
  // any collective; a lost rank 0 takes the store down with it and ends the wait at once.
  const auto outcome = await(key, std::chrono::hours(24));
  if (outcome == "ok") return;
  publish(read_key(rank()), "");
  const std::string_view failed = "failed: ";
  throw std::runtime_error(
      fmt::format("rank {} of {}: rank 0 could not {}: {}", rank(), world_size(), step,
                  outcome.starts_with(failed) ? outcome.substr(failed.size()) : outcome));
}

at::Tensor ProcessGroup::all_gather_concat(const at::Tensor& local) {
  const auto ranks = static_cast<std::size_t>(world_size());
  const auto device = state_->device;
  const auto gather = [&](const at::Tensor& mine) {
    std::vector<std::vector<at::Tensor>> outputs(1);
    for (std::size_t r = 0; r < ranks; ++r) outputs[0].push_back(torch::empty_like(mine));
    std::vector<at::Tensor> inputs = {mine};
    state_->wait(state_->backend->allgather(outputs, inputs), "an all-gather");
    return outputs[0];
  };
  const auto lengths =
      gather(torch::full({1}, local.numel(), torch::dtype(torch::kInt64).device(device)));
  std::int64_t longest = 0;
  std::vector<std::int64_t> sizes;
  for (const auto& length : lengths) {
    sizes.push_back(length.item<std::int64_t>());
    longest = std::max(longest, sizes.back());
  }
  if (longest == 0) return local.reshape({-1}).clone();
  auto padded = torch::zeros({longest}, local.options().device(device));
  padded.slice(0, 0, local.numel()).copy_(local.reshape({-1}));
  const auto parts = gather(padded);
  std::vector<at::Tensor> trimmed;
  for (std::size_t r = 0; r < ranks; ++r) trimmed.push_back(parts[r].slice(0, 0, sizes[r]));
  return torch::cat(trimmed).to(local.device());
}

}  // namespace headroom::distributed
