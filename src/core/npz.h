// .npz archives: a zip of .npy members, as numpy's savez and savez_compressed write them.
//   NpzFile   - opens an archive and reads members on demand (header checks happen at open).
//   write_npz - writes an archive atomically (a temporary file renamed into place), stored or
//               deflate-compressed; numpy reads it back identically.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/npy.h"

namespace tcost {

class ZipReader;

struct NpzReadOptions {
  // Largest extracted member accepted, in bytes: a guard against zip bombs.
  uint64_t max_member_bytes = uint64_t{16} << 30;
};

class NpzFile {
 public:
  explicit NpzFile(const std::string& path, NpzReadOptions options = {});
  // Arrays already in memory (a dict handed over from Python, say), read through the same
  // accessors: readers validate them exactly as they validate a file. `label` stands for the
  // path in error messages.
  NpzFile(std::string label, std::vector<std::pair<std::string, NpyArray>> arrays);
  ~NpzFile();
  NpzFile(NpzFile&&) noexcept;
  NpzFile& operator=(NpzFile&&) noexcept;

  const std::string& path() const;
  std::vector<std::string> keys() const;  // member names without ".npy"
  bool has(const std::string& key) const;
  // Reads and parses one member; InputError naming the file and key when absent or malformed.
  NpyArray get(const std::string& key) const;

 private:
  std::unique_ptr<ZipReader> zip_;  // null for arrays in memory
  NpzReadOptions options_;
  std::string label_;
  std::vector<std::pair<std::string, NpyArray>> memory_;
};

void write_npz(const std::string& path, const std::vector<std::pair<std::string, NpyArray>>& arrays,
               bool compress);

}  // namespace tcost
