#include "core/npy.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "core/error.h"

namespace tcost {
namespace {

struct DTypeInfo {
  DType dtype;
  const char* descr;  // with the byte-order character numpy writes
  size_t size;
  bool is_float;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::kBool, "|b1", 1, false},   {DType::kInt8, "|i1", 1, false},
    {DType::kUInt8, "|u1", 1, false},  {DType::kInt16, "<i2", 2, false},
    {DType::kUInt16, "<u2", 2, false}, {DType::kInt32, "<i4", 4, false},
    {DType::kUInt32, "<u4", 4, false}, {DType::kInt64, "<i8", 8, false},
    {DType::kUInt64, "<u8", 8, false}, {DType::kFloat32, "<f4", 4, true},
    {DType::kFloat64, "<f8", 8, true},
};

const DTypeInfo& info(DType dtype) {
  for (const auto& d : kDTypes) {
    if (d.dtype == dtype) return d;
  }
  throw InternalError("unknown dtype");
}

// A cursor over numpy's header, a Python dict literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& where) : s_(text), where_(where) {}

  void skip_ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    skip_ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(fmt::format("expected '{}'", c));
  }
  std::string string_literal() {
    skip_ws();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) fail("expected a string");
    const char q = s_[i_++];
    const size_t end = s_.find(q, i_);
    if (end == std::string::npos) fail("unterminated string");
    std::string out = s_.substr(i_, end - i_);
    i_ = end + 1;
    return out;
  }
  bool boolean() {
    skip_ws();
    if (s_.compare(i_, 4, "True") == 0) {
      i_ += 4;
      return true;
    }
    if (s_.compare(i_, 5, "False") == 0) {
      i_ += 5;
      return false;
    }
    fail("expected True or False");
  }
  std::vector<int64_t> shape_tuple() {
    expect('(');
    std::vector<int64_t> dims;
    while (!eat(')')) {
      skip_ws();
      int64_t v = 0;
      size_t digits = 0;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) fail("dimension too large");
        v = v * 10 + (s_[i_++] - '0');
        ++digits;
      }
      if (s_.compare(i_, 1, "L") == 0) ++i_;  // Python 2 long suffix
      if (digits == 0) fail("expected a non-negative integer dimension");
      if (dims.size() >= 32) fail("more than 32 dimensions");
      dims.push_back(v);
      if (!eat(',')) {
        expect(')');
        break;
      }
    }
    return dims;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(fmt::format("{}: malformed .npy header ({} at character {}): {}", where_, what,
                                 i_, s_.substr(0, 200)));
  }
  bool done() {
    skip_ws();
    return i_ >= s_.size();
  }

 private:
  const std::string& s_;
  const std::string& where_;
  size_t i_ = 0;
};

DType parse_descr(const std::string& descr, const std::string& where) {
  if (descr.size() >= 2 && descr[0] == '>' && descr.substr(1) != "i1" && descr.substr(1) != "u1" &&
      descr.substr(1) != "b1") {
    throw InputError(
        fmt::format("{}: big-endian dtype '{}' is not supported; expected a "
                    "little-endian one such as '<f4'",
                    where, descr));
  }
  std::string body = descr;
  if (!body.empty() && (body[0] == '<' || body[0] == '|' || body[0] == '=' || body[0] == '>')) {
    body = body.substr(1);
  }
  for (const auto& d : kDTypes) {
    if (body == d.descr + 1) return d.dtype;
  }
  throw InputError(
      fmt::format("{}: unsupported dtype '{}'; expected bool, int8..int64, "
                  "uint8..uint64, float32 or float64",
                  where, descr));
}

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename Out>
std::vector<Out> convert(const NpyArray& a) {
  const int64_t n = a.size();
  std::vector<Out> out(static_cast<size_t>(n));
  if (a.dtype == dtype_of<Out>()) {  // same type: one copy
    if (n > 0) std::memcpy(out.data(), a.data.data(), a.data.size());
    return out;
  }
  const uint8_t* p = a.data.data();
  const size_t w = dtype_size(a.dtype);
  for (int64_t i = 0; i < n; ++i, p += w) {
    switch (a.dtype) {
      case DType::kBool:
      case DType::kUInt8:
        out[i] = static_cast<Out>(load<uint8_t>(p));
        break;
      case DType::kInt8:
        out[i] = static_cast<Out>(load<int8_t>(p));
        break;
      case DType::kInt16:
        out[i] = static_cast<Out>(load<int16_t>(p));
        break;
      case DType::kUInt16:
        out[i] = static_cast<Out>(load<uint16_t>(p));
        break;
      case DType::kInt32:
        out[i] = static_cast<Out>(load<int32_t>(p));
        break;
      case DType::kUInt32:
        out[i] = static_cast<Out>(load<uint32_t>(p));
        break;
      case DType::kInt64:
        out[i] = static_cast<Out>(load<int64_t>(p));
        break;
      case DType::kUInt64:
        out[i] = static_cast<Out>(load<uint64_t>(p));
        break;
      case DType::kFloat32:
        out[i] = static_cast<Out>(load<float>(p));
        break;
      case DType::kFloat64:
        out[i] = static_cast<Out>(load<double>(p));
        break;
    }
  }
  return out;
}

}  // namespace

const char* dtype_descr(DType dtype) { return info(dtype).descr; }
size_t dtype_size(DType dtype) { return info(dtype).size; }
bool dtype_is_float(DType dtype) { return info(dtype).is_float; }

int64_t NpyArray::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string NpyArray::shape_str() const {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

NpyArray parse_npy(std::vector<uint8_t> bytes, const std::string& where) {
  static const char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0) {
    throw InputError(fmt::format("{}: not a .npy array (bad magic bytes)", where));
  }
  const uint8_t major = bytes[6];
  size_t header_len = 0;
  size_t header_start = 0;
  if (major == 1) {
    header_len = static_cast<size_t>(bytes[8] | (bytes[9] << 8));
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw InputError(fmt::format("{}: truncated .npy header", where));
    header_len = static_cast<size_t>(bytes[8]) | (static_cast<size_t>(bytes[9]) << 8) |
                 (static_cast<size_t>(bytes[10]) << 16) | (static_cast<size_t>(bytes[11]) << 24);
    header_start = 12;
  } else {
    throw InputError(
        fmt::format("{}: unsupported .npy format version {}.{}", where, major, bytes[7]));
  }
  if (header_len > bytes.size() - header_start) {
    throw InputError(fmt::format("{}: .npy header claims {} bytes but the array holds only {}",
                                 where, header_len, bytes.size() - header_start));
  }
  const std::string header(reinterpret_cast<const char*>(bytes.data() + header_start), header_len);
  HeaderParser p(header, where);
  std::string descr;
  bool fortran = false;
  bool have_descr = false, have_order = false, have_shape = false;
  NpyArray out;
  p.expect('{');
  while (!p.eat('}')) {
    const std::string key = p.string_literal();
    p.expect(':');
    if (key == "descr") {
      p.skip_ws();
      if (p.eat('[')) {
        throw InputError(fmt::format("{}: structured dtypes are not supported", where));
      }
      descr = p.string_literal();
      have_descr = true;
    } else if (key == "fortran_order") {
      fortran = p.boolean();
      have_order = true;
    } else if (key == "shape") {
      out.shape = p.shape_tuple();
      have_shape = true;
    } else {
      p.fail("unknown key '" + key + "'");
    }
    if (!p.eat(',')) {
      p.expect('}');
      break;
    }
  }
  if (!have_descr || !have_order || !have_shape) {
    p.fail("missing 'descr', 'fortran_order' or 'shape'");
  }
  out.dtype = parse_descr(descr, where);
  const size_t item = dtype_size(out.dtype);
  // Element count times item size, refusing overflow, must match the bytes present exactly.
  uint64_t bytes_needed = item;
  for (int64_t d : out.shape) {
    if (__builtin_mul_overflow(bytes_needed, static_cast<uint64_t>(d), &bytes_needed)) {
      throw InputError(
          fmt::format("{}: shape {} overflows a 64-bit byte count", where, out.shape_str()));
    }
  }
  const uint64_t present = bytes.size() - header_start - header_len;
  if (bytes_needed != present) {
    throw InputError(fmt::format("{}: shape {} of {} needs {} bytes of data, the array holds {}",
                                 where, out.shape_str(), descr, bytes_needed, present));
  }
  // Drop the header in place and keep the buffer: no second copy of a large array.
  bytes.erase(bytes.begin(), bytes.begin() + static_cast<int64_t>(header_start + header_len));
  out.data = std::move(bytes);
  const uint8_t* src = out.data.data();
  if (fortran && out.shape.size() > 1 && out.size() > 0) {
    // Fortran order: the first index varies fastest. Walk C order and gather.
    const size_t r = out.shape.size();
    std::vector<int64_t> fstride(r);
    int64_t s = 1;
    for (size_t k = 0; k < r; ++k) {
      fstride[k] = s;
      s *= out.shape[k];
    }
    std::vector<int64_t> idx(r, 0);
    std::vector<uint8_t> c(out.data.size());
    const int64_t n = out.size();
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = 0;
      for (size_t k = 0; k < r; ++k) off += idx[k] * fstride[k];
      std::memcpy(&c[static_cast<size_t>(i) * item], src + static_cast<size_t>(off) * item, item);
      for (size_t k = r; k-- > 0;) {
        if (++idx[k] < out.shape[k]) break;
        idx[k] = 0;
      }
    }
    out.data = std::move(c);
  }
  return out;
}

std::vector<uint8_t> serialize_npy(const NpyArray& array) {
  TCOST_CHECK(array.data.size() == static_cast<size_t>(array.size()) * dtype_size(array.dtype),
              "array data of {} bytes does not match shape {}", array.data.size(),
              array.shape_str());
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                   dtype_descr(array.dtype), array.shape_str());
  // numpy pads with spaces and ends with '\n' so that the data starts 64-byte aligned.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  TCOST_CHECK(header.size() < 65536, "npy header too long");
  std::vector<uint8_t> out;
  out.reserve(10 + header.size() + array.data.size());
  static constexpr uint8_t kMagicV1[] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  for (uint8_t b : kMagicV1) out.push_back(b);
  out.push_back(static_cast<uint8_t>(header.size() & 0xff));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), array.data.begin(), array.data.end());
  return out;
}

std::vector<float> as_float32(const NpyArray& array) { return convert<float>(array); }
std::vector<double> as_float64(const NpyArray& array) { return convert<double>(array); }

std::vector<int64_t> as_int64(const NpyArray& array, const std::string& where) {
  if (dtype_is_float(array.dtype)) {
    throw InputError(
        fmt::format("{}: expected an integer dtype, found {}", where, dtype_descr(array.dtype)));
  }
  if (array.dtype == DType::kUInt64) {
    const uint8_t* p = array.data.data();
    for (int64_t i = 0; i < array.size(); ++i, p += 8) {
      if (load<uint64_t>(p) > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        throw InputError(
            fmt::format("{}: value {} at index {} exceeds int64", where, load<uint64_t>(p), i));
      }
    }
  }
  return convert<int64_t>(array);
}

}  // namespace tcost
