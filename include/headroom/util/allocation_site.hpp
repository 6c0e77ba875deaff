// Names where the allocations of the current thread come from ("collate", "epoch metrics"), so
// that fault injection (memory/tensor_memory_meter.hpp, HEADROOM_INJECT_OOM) can target one site
// and an out-of-memory error can say where it happened. Header-only; each thread has its own
// site, so the sites of the training loop and of the prefetcher's thread do not mix.
#pragma once

namespace headroom::util {

// The innermost AllocationSite alive on this thread, or nullptr outside every site. The name is
// a string literal (static storage), never owned.
inline thread_local const char* current_allocation_site = nullptr;

// Scoped: marks this thread's allocations with `name` until destruction, then restores the
// enclosing site. `name` must outlive the scope (pass a string literal). Not copyable.
class AllocationSite {
 public:
  explicit AllocationSite(const char* name) : previous_(current_allocation_site) {
    current_allocation_site = name;
  }
  ~AllocationSite() { current_allocation_site = previous_; }
  AllocationSite(const AllocationSite&) = delete;
  AllocationSite& operator=(const AllocationSite&) = delete;

 private:
  const char* previous_;
};

}  // namespace headroom::util
