// Precompiled header for headroom_core: the heavy, stable third-party headers.
#pragma once
#include <torch/torch.h>
