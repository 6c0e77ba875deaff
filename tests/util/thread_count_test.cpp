// --threads above the cores: capped, and said so.
#include "headroom/util/thread_count.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace headroom::util {
namespace {

TEST(ThreadCount, ARequestAboveTheCoresIsCappedWithAWarning) {
  const unsigned cores = usable_cores();
  ASSERT_GE(cores, 1U);
  std::ostringstream warnings;
  EXPECT_EQ(capped_thread_count(100000, "--threads", warnings), cores);
  EXPECT_NE(warnings.str().find("--threads 100000"), std::string::npos) << warnings.str();
  EXPECT_NE(warnings.str().find("using " + std::to_string(cores)), std::string::npos)
      << warnings.str();
}

TEST(ThreadCount, RequestsWithinTheCoresAndZeroAreKeptSilently) {
  const unsigned cores = usable_cores();
  std::ostringstream warnings;
  EXPECT_EQ(capped_thread_count(0, "--threads", warnings), 0U);  // 0: every core, decided later
  EXPECT_EQ(capped_thread_count(1, "--threads", warnings), 1U);
  EXPECT_EQ(capped_thread_count(cores, "--threads", warnings), cores);
  EXPECT_TRUE(warnings.str().empty()) << warnings.str();
}

}  // namespace
}  // namespace headroom::util
