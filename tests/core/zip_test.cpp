#include "core/zip.h"

#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "test_util.h"

namespace tcost {
namespace {

using testing::ScratchDir;

std::vector<uint8_t> sample_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i % 13 == 0 ? rng() : i / 97);
  return v;
}

TEST(Zip, RoundTripStoredAndDeflated) {
  ScratchDir dir;
  const auto a = sample_bytes(100000, 1);
  const auto b = sample_bytes(0, 2);
  const auto c = sample_bytes(3, 3);
  {
    ZipWriter w(dir / "x.zip");
    w.add("a.npy", a, true);
    w.add("b.npy", b, false);
    w.add("c.npy", c, true);
    w.finish();
  }
  ZipReader r(dir / "x.zip");
  ASSERT_EQ(r.entries().size(), 3u);
  EXPECT_EQ(r.entries()[0].name, "a.npy");
  EXPECT_EQ(r.entries()[0].method, 8);
  EXPECT_LT(r.entries()[0].compressed_size, a.size());
  EXPECT_EQ(r.entries()[1].method, 0);
  EXPECT_EQ(r.read(r.entries()[0], 1 << 20), a);
  EXPECT_EQ(r.read(r.entries()[1], 1 << 20), b);
  EXPECT_EQ(r.read(r.entries()[2], 1 << 20), c);
}

TEST(Zip, SizeLimitIsEnforcedBeforeReading) {
  ScratchDir dir;
  {
    ZipWriter w(dir / "x.zip");
    w.add("a", sample_bytes(5000, 1), true);
    w.finish();
  }
  ZipReader r(dir / "x.zip");
  EXPECT_THROW(r.read(r.entries()[0], 4999), InputError);
}

TEST(Zip, NotAZipIsAnInputError) {
  ScratchDir dir;
  testing::write_bytes(dir / "empty", {});
  testing::write_bytes(dir / "text", std::vector<uint8_t>(100, 'x'));
  EXPECT_THROW(ZipReader(dir / "empty"), InputError);
  EXPECT_THROW(ZipReader(dir / "text"), InputError);
  EXPECT_THROW(ZipReader(dir / "missing"), InputError);
}

TEST(Zip, LyingUncompressedSizeIsCaught) {
  ScratchDir dir;
  const auto data = sample_bytes(4000, 5);
  {
    ZipWriter w(dir / "x.zip");
    w.add("a", data, true);
    w.finish();
  }
  auto bytes = testing::read_bytes(dir / "x.zip");
  // The central directory's uncompressed size field (offset 24 in the 46-byte header).
  size_t cd = bytes.size() - 22 - 46 - 1;
  ASSERT_EQ(bytes[cd], 0x50);
  for (uint32_t lie : {3999u, 4001u, 0x7fffffffu}) {
    auto b = bytes;
    std::memcpy(&b[cd + 24], &lie, 4);
    testing::write_bytes(dir / "lie.zip", b);
    ZipReader r(dir / "lie.zip");
    EXPECT_THROW(r.read(r.entries()[0], uint64_t{1} << 40), InputError) << lie;
  }
}

}  // namespace
}  // namespace tcost
