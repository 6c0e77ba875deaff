#include "headroom/synthetic/synthetic_vehicle.hpp"

#include <gtest/gtest.h>

#include <array>
#include <bitset>
#include <cstdint>

namespace headroom::can {
using namespace headroom::synthetic;  // NOLINT: the generator under test
namespace {

// Marks the payload bytes a field covers; fails the test when two fields share a byte.
void claim(std::bitset<8>& used, std::size_t first, std::size_t count, const EcuSpec& ecu) {
  for (std::size_t b = first; b < first + count; ++b) {
    ASSERT_LT(b, ecu.dlc) << "field past the DLC of ECU " << std::hex << ecu.id;
    ASSERT_FALSE(used[b]) << "two fields share byte " << b << " of ECU " << std::hex << ecu.id;
    used[b] = true;
  }
}

TEST(SyntheticVehicle, EverySeedGivesACarWithinTheSpec) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    SCOPED_TRACE(seed);
    const SyntheticVehicle vehicle = make_synthetic_vehicle(seed);
    ASSERT_GE(vehicle.ecus.size(), kMinSyntheticEcus);
    ASSERT_LE(vehicle.ecus.size(), kMaxSyntheticEcus);
    std::int64_t load_ppm = 0;
    for (std::size_t i = 0; i < vehicle.ecus.size(); ++i) {
      const EcuSpec& ecu = vehicle.ecus[i];
      if (i > 0) {
        EXPECT_LT(vehicle.ecus[i - 1].id, ecu.id) << "IDs sorted and distinct";
      }
      EXPECT_GT(ecu.id, 0U) << "ID 0 is the DoS attacker's";
      EXPECT_LE(ecu.id, 0x7FFU);
      EXPECT_GE(ecu.period_us, kMinSyntheticPeriodUs);
      EXPECT_LE(ecu.period_us, kMaxSyntheticPeriodUs);
      EXPECT_GT(ecu.jitter_us, 0);
      EXPECT_LT(ecu.jitter_us * 4, ecu.period_us) << "jitter must not reorder an ECU's frames";
      EXPECT_GE(ecu.dlc, 1);
      EXPECT_LE(ecu.dlc, 8);
      std::bitset<8> used;
      if (ecu.checksum) claim(used, ecu.checksum->byte, 1, ecu);
      if (ecu.counter) {
        claim(used, ecu.counter->byte, 1, ecu);
        EXPECT_TRUE(ecu.counter->bits == 4 || ecu.counter->bits == 8);
        EXPECT_LE(ecu.counter->shift + ecu.counter->bits, 8);
      }
      for (const auto& signal : ecu.signals) claim(used, signal.byte, signal.width, ecu);
      load_ppm += synthetic_frame_time_us(ecu.dlc) * 1'000'000 / ecu.period_us;
    }
    EXPECT_LE(load_ppm, 500'000) << "normal traffic must leave room on the bus";
  }
}

TEST(SyntheticVehicle, MostEcusSendEightBytesAndCarryCountersAndChecksums) {
  std::size_t ecus = 0, eight = 0, counters = 0, checksums = 0, shorter = 0;
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    for (const auto& ecu : make_synthetic_vehicle(seed).ecus) {
      ++ecus;
      eight += ecu.dlc == 8;
      shorter += ecu.dlc < 8;
      counters += ecu.counter.has_value();
      checksums += ecu.checksum.has_value();
    }
  }
  EXPECT_GT(eight * 2, ecus);
  EXPECT_GT(shorter, 0U);
  EXPECT_GT(counters * 2, ecus);
  EXPECT_GT(checksums * 2, ecus);
}

TEST(SyntheticVehicle, IsAPureFunctionOfTheSeed) {
  const SyntheticVehicle a = make_synthetic_vehicle(7);
  const SyntheticVehicle b = make_synthetic_vehicle(7);
  ASSERT_EQ(a.ecus.size(), b.ecus.size());
  for (std::size_t i = 0; i < a.ecus.size(); ++i) {
    EXPECT_EQ(a.ecus[i].id, b.ecus[i].id);
    EXPECT_EQ(a.ecus[i].period_us, b.ecus[i].period_us);
    EXPECT_EQ(a.ecus[i].dlc, b.ecus[i].dlc);
    EXPECT_EQ(a.ecus[i].constant_bytes, b.ecus[i].constant_bytes);
  }
  const SyntheticVehicle c = make_synthetic_vehicle(8);
  bool differs = a.ecus.size() != c.ecus.size();
  for (std::size_t i = 0; !differs && i < a.ecus.size(); ++i)
    differs = a.ecus[i].id != c.ecus[i].id;
  EXPECT_TRUE(differs);
}

TEST(SyntheticVehicle, ChecksumCoversEveryOtherByte) {
  EcuSpec ecu;
  ecu.id = 0x1E5;
  ecu.dlc = 4;
  ecu.checksum = ChecksumField{3, ChecksumKind::kSum};
  const std::array<std::uint8_t, 8> payload = {0x10, 0x20, 0xF0, 0x99, 0xAA, 0, 0, 0};
  // 0xE5 + 0x10 + 0x20 + 0xF0 = 0x205; the checksum byte and bytes past the DLC do not count.
  EXPECT_EQ(synthetic_checksum(ecu, payload), 0x05);
  ecu.checksum = ChecksumField{0, ChecksumKind::kXor};
  EXPECT_EQ(synthetic_checksum(ecu, payload), 0x20 ^ 0xF0 ^ 0x99);
}

TEST(SyntheticVehicle, FrameTimeMatchesA500kbitBus) {
  // A full 8-byte frame is about 120 bits incl. stuffing: ~240 us at 2 us per bit.
  EXPECT_GE(synthetic_frame_time_us(8), 222);
  EXPECT_LE(synthetic_frame_time_us(8), 270);
  for (std::uint8_t dlc = 1; dlc <= 8; ++dlc) {
    EXPECT_GT(synthetic_frame_time_us(dlc), synthetic_frame_time_us(dlc - 1));
  }
}

}  // namespace
}  // namespace headroom::can
