#include <gtest/gtest.h>
namespace headroom {
int torch_smoke();
}
TEST(Smoke, TorchLinks) { EXPECT_EQ(headroom::torch_smoke(), 4); }
