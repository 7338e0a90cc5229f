// Minimal, defensive ZIP archive reader and writer: what .npz files need.
//   ZipReader - lists members from the central directory and extracts one member, stored
//               (method 0) or deflated (method 8), checking every offset and size against the
//               file, the CRC-32, and a caller-set bound on the extracted size. ZIP64 extra
//               fields are understood (numpy writes them). A hostile archive yields InputError,
//               never a crash, a hang or an allocation larger than the data it really holds.
//   ZipWriter - writes members stored or deflated, with a central directory. Archives past
//               4 GiB (which would need ZIP64 records) are refused with InputError.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace tcost {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0 stored, 8 deflate
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_header_offset = 0;
};

class ZipReader {
 public:
  // Opens and indexes the archive; throws InputError naming the file when it is not a valid zip.
  explicit ZipReader(std::string path);
  ~ZipReader();
  ZipReader(const ZipReader&) = delete;
  ZipReader& operator=(const ZipReader&) = delete;

  const std::string& path() const { return path_; }
  const std::vector<ZipEntry>& entries() const { return entries_; }
  // Extracts a member; max_bytes bounds the extracted size (InputError beyond it).
  std::vector<uint8_t> read(const ZipEntry& entry, uint64_t max_bytes) const;

 private:
  void read_at(uint64_t offset, void* dst, uint64_t size) const;
  void index();

  std::string path_;
  std::FILE* file_ = nullptr;
  uint64_t file_size_ = 0;
  std::vector<ZipEntry> entries_;
};

class ZipWriter {
 public:
  // Creates (truncates) the file; the archive is complete only after finish().
  explicit ZipWriter(std::string path);
  ~ZipWriter();
  ZipWriter(const ZipWriter&) = delete;
  ZipWriter& operator=(const ZipWriter&) = delete;

  void add(const std::string& name, const std::vector<uint8_t>& data, bool compress);
  void finish();

 private:
  void write(const void* data, size_t size);

  std::string path_;
  std::FILE* file_ = nullptr;
  uint64_t offset_ = 0;
  std::vector<ZipEntry> entries_;
  bool finished_ = false;
};

}  // namespace tcost
