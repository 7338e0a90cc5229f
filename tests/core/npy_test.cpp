#include "core/npy.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace tcost {
namespace {

std::vector<uint8_t> with_header(const std::string& header, size_t data_bytes, int version = 1) {
  std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(version), 0};
  const size_t n = header.size();
  b.push_back(static_cast<uint8_t>(n));
  b.push_back(static_cast<uint8_t>(n >> 8));
  if (version >= 2) {
    b.push_back(static_cast<uint8_t>(n >> 16));
    b.push_back(static_cast<uint8_t>(n >> 24));
  }
  b.insert(b.end(), header.begin(), header.end());
  for (size_t i = 0; i < data_bytes; ++i) b.push_back(static_cast<uint8_t>(i));
  return b;
}

TEST(Npy, RoundTripKeepsDtypeShapeAndValues) {
  const auto a = NpyArray::of<float>({2, 3}, {1, 2, 3, 4, 5, 6.5f});
  const auto bytes = serialize_npy(a);
  EXPECT_EQ((bytes.size() - a.data.size()) % 64, 0u);  // numpy's alignment
  const NpyArray b = parse_npy(bytes, "t");
  EXPECT_EQ(b.dtype, DType::kFloat32);
  EXPECT_EQ(b.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(as_float32(b), (std::vector<float>{1, 2, 3, 4, 5, 6.5f}));
  const auto one = parse_npy(serialize_npy(NpyArray::of<int64_t>({1}, {7})), "t");
  EXPECT_EQ(one.shape_str(), "(1,)");
}

TEST(Npy, ConvertsIntegerAndFloatDtypes) {
  const NpyArray i64 =
      parse_npy(serialize_npy(NpyArray::of<int64_t>({3}, {-1, 0, 1LL << 40})), "t");
  EXPECT_EQ(as_int64(i64, "t"), (std::vector<int64_t>{-1, 0, 1LL << 40}));
  const NpyArray f64 = NpyArray::of<double>({2}, {0.25, -3});
  EXPECT_EQ(as_float32(f64), (std::vector<float>{0.25f, -3.0f}));
  EXPECT_THROW(as_int64(f64, "t"), InputError);
}

TEST(Npy, ReadsVersion2HeadersAndFortranOrder) {
  // 2x3 int32 in Fortran order: memory holds column-major [0 3 1 4 2 5] for [[0,1,2],[3,4,5]].
  auto b = with_header("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }\n", 0, 2);
  for (int32_t v : {0, 3, 1, 4, 2, 5}) {
    for (int k = 0; k < 4; ++k) b.push_back(static_cast<uint8_t>(v >> (8 * k)));
  }
  const NpyArray a = parse_npy(b, "t");
  EXPECT_EQ(as_int64(a, "t"), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
}

TEST(Npy, RejectsMalformedHeaders) {
  EXPECT_THROW(parse_npy({1, 2, 3}, "t"), InputError);
  EXPECT_THROW(parse_npy(with_header("{'descr': '<f4', 'shape': (2,), }", 8), "t"), InputError);
  EXPECT_THROW(
      parse_npy(with_header("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8), "t"),
      InputError);
  EXPECT_THROW(
      parse_npy(with_header("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16), "t"),
      InputError);
  EXPECT_THROW(
      parse_npy(
          with_header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8),
          "t"),
      InputError);
  // Shapes that overflow, or that need more (or fewer) bytes than are present.
  EXPECT_THROW(parse_npy(with_header("{'descr': '<f8', 'fortran_order': False, 'shape': "
                                     "(4294967296, 4294967296), }",
                                     8),
                         "t"),
               InputError);
  EXPECT_THROW(
      parse_npy(
          with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }", 8),
          "t"),
      InputError);
  EXPECT_THROW(
      parse_npy(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 8), "t"),
      InputError);
  EXPECT_THROW(
      parse_npy(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 8), "t"),
      InputError);
  EXPECT_THROW(
      parse_npy(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 8), "t"),
      InputError);
  // Header length beyond the bytes.
  auto b = with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8);
  b[8] = 0xff;
  b[9] = 0xff;
  EXPECT_THROW(parse_npy(b, "t"), InputError);
}

TEST(Npy, ErrorNamesTheArray) {
  try {
    parse_npy(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 8),
              "g.npz: key 'node_feat'");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("g.npz: key 'node_feat'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("needs 12 bytes"), std::string::npos);
  }
}

}  // namespace
}  // namespace tcost
