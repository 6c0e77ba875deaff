// util::edit_distance and util::nearest_name: the "did you mean" of config errors.
#include "headroom/util/nearest_name.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace headroom::util {
namespace {

TEST(NearestName, EditDistanceCountsEachEditOnce) {
  EXPECT_EQ(edit_distance("window", "window"), 0U);
  EXPECT_EQ(edit_distance("windoww", "window"), 1U);         // insertion
  EXPECT_EQ(edit_distance("windw", "window"), 1U);           // deletion
  EXPECT_EQ(edit_distance("max_epochs", "max-epochs"), 1U);  // substitution
  EXPECT_EQ(edit_distance("wnidow", "window"), 1U);          // adjacent swap
  EXPECT_EQ(edit_distance("Window", "window"), 0U);          // case-insensitive
  EXPECT_EQ(edit_distance("", "abc"), 3U);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3U);
}

TEST(NearestName, SuggestsTheClosestPlausibleName) {
  const std::vector<std::string> keys = {"window", "stride", "threads", "max-epochs", "batch-size"};
  EXPECT_EQ(nearest_name("windoww", keys), "window");
  EXPECT_EQ(nearest_name("max_epochs", keys), "max-epochs");
  EXPECT_EQ(nearest_name("batchsize", keys), "batch-size");
  EXPECT_EQ(nearest_name("thread", keys), "threads");
  EXPECT_EQ(nearest_name("learning-rate", keys), "");  // nothing close: no guess
  EXPECT_EQ(nearest_name("x", std::vector<std::string>{}), "");
}

}  // namespace
}  // namespace headroom::util
