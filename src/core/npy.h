// The .npy array format (numpy's own): parsing, serialising and dtype conversion.
//   NpyArray        - one n-d array: dtype, shape, raw little-endian bytes in C order.
//   parse_npy       - reads versions 1.0, 2.0 and 3.0; Fortran order is converted to C order;
//                     every size is checked against the bytes present before anything is used.
//   serialize_npy   - writes version 1.0 with numpy's header padding (64-byte alignment).
//   as_float32/as_int64 - converted copies; integer targets refuse floating-point input.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace tcost {

enum class DType {
  kBool,
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
  kFloat32,
  kFloat64
};

// numpy's descriptor for a dtype, e.g. "<f4".
const char* dtype_descr(DType dtype);
// Size of one element in bytes.
size_t dtype_size(DType dtype);
bool dtype_is_float(DType dtype);

template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::kFloat32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::kFloat64;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return DType::kInt32;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return DType::kInt64;
}
template <>
constexpr DType dtype_of<uint8_t>() {
  return DType::kUInt8;
}

struct NpyArray {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // C order, little-endian, size() * dtype_size(dtype) bytes

  int64_t size() const;
  int rank() const { return static_cast<int>(shape.size()); }
  std::string shape_str() const;  // "(3, 4)", as numpy prints it

  template <typename T>
  static NpyArray of(std::vector<int64_t> shape, const std::vector<T>& values) {
    NpyArray a;
    a.dtype = dtype_of<T>();
    a.shape = std::move(shape);
    a.data.resize(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(a.data.data(), values.data(), a.data.size());
    return a;
  }
};

// `where` names the array in error messages ("file.npz: key 'node_feat'").
NpyArray parse_npy(std::vector<uint8_t> bytes, const std::string& where);
std::vector<uint8_t> serialize_npy(const NpyArray& array);

// Converted copies. as_int64 throws InputError for floating-point arrays and for uint64 values
// above INT64_MAX.
std::vector<float> as_float32(const NpyArray& array);
std::vector<double> as_float64(const NpyArray& array);
std::vector<int64_t> as_int64(const NpyArray& array, const std::string& where);

}  // namespace tcost
