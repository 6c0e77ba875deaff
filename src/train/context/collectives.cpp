#include "headroom/train/context/collectives.hpp"

#include <torch/torch.h>

namespace headroom::train {
namespace {

class SingleProcess final : public Collectives {
 public:
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  void all_reduce_sum(std::vector<at::Tensor>& /*tensors*/) override {}
  void broadcast_from_rank0(std::vector<at::Tensor>& /*tensors*/) override {}
  at::Tensor all_gather_concat(const at::Tensor& local) override { return local; }
  void run_on_rank0(const std::string& /*step*/, const std::function<void()>& work) override {
    work();
  }
};

std::shared_ptr<Collectives>& installed() {
  static std::shared_ptr<Collectives> current = std::make_shared<SingleProcess>();
  return current;
}

}  // namespace

Collectives& collectives() { return *installed(); }

void set_collectives(std::shared_ptr<Collectives> collectives) {
  installed() = collectives ? std::move(collectives) : std::make_shared<SingleProcess>();
}

bool agree_with_rank0(Collectives& collectives, bool value) {
  std::vector<at::Tensor> flag = {torch::tensor({value ? 1 : 0}, torch::kInt64)};
  collectives.broadcast_from_rank0(flag);
  return flag[0].item<std::int64_t>() != 0;
}

}  // namespace headroom::train
