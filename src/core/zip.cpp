#include "core/zip.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/error.h"

namespace tcost {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEocdSig = 0x06054b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr uint32_t kZip64EocdSig = 0x06064b50;
constexpr size_t kEocdSize = 22;
constexpr size_t kCentralSize = 46;
constexpr size_t kLocalSize = 30;
constexpr uint64_t kMaxCommentSize = 0xffff;
constexpr size_t kChunk = 1 << 16;

uint16_t le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
uint64_t le64(const uint8_t* p) {
  return static_cast<uint64_t>(le32(p)) | (static_cast<uint64_t>(le32(p + 4)) << 32);
}
void put16(std::vector<uint8_t>& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v));
  b.push_back(static_cast<uint8_t>(v >> 8));
}
void put32(std::vector<uint8_t>& b, uint32_t v) {
  put16(b, static_cast<uint16_t>(v));
  put16(b, static_cast<uint16_t>(v >> 16));
}

uint32_t crc_of(const uint8_t* data, uint64_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (size > 0) {
    const uInt n = static_cast<uInt>(std::min<uint64_t>(size, 1u << 30));
    crc = crc32(crc, data, n);
    data += n;
    size -= n;
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace

ZipReader::ZipReader(std::string path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "rb");
  if (file_ == nullptr) {
    throw InputError(fmt::format("{}: cannot open: {}", path_, std::strerror(errno)));
  }
  try {
    if (std::fseek(file_, 0, SEEK_END) != 0) throw InputError(path_ + ": cannot seek");
    const long size = std::ftell(file_);
    if (size < 0) throw InputError(path_ + ": cannot tell file size");
    file_size_ = static_cast<uint64_t>(size);
    index();
  } catch (...) {
    std::fclose(file_);
    file_ = nullptr;
    throw;
  }
}

ZipReader::~ZipReader() {
  if (file_ != nullptr) std::fclose(file_);
}

void ZipReader::read_at(uint64_t offset, void* dst, uint64_t size) const {
  if (offset > file_size_ || size > file_size_ - offset) {
    throw InputError(
        fmt::format("{}: not a valid zip archive: a record at byte {} of {} bytes "
                    "runs past the end of the {}-byte file (truncated?)",
                    path_, offset, size, file_size_));
  }
  if (std::fseek(file_, static_cast<long>(offset), SEEK_SET) != 0 ||
      std::fread(dst, 1, size, file_) != size) {
    throw InputError(fmt::format("{}: read error at byte {}", path_, offset));
  }
}

void ZipReader::index() {
  if (file_size_ < kEocdSize) {
    throw InputError(
        fmt::format("{}: not a zip archive (npz): {} bytes is shorter than the "
                    "22-byte end record",
                    path_, file_size_));
  }
  // The end-of-central-directory record sits in the last 22 + 65535 bytes.
  const uint64_t tail_size = std::min<uint64_t>(file_size_, kEocdSize + kMaxCommentSize);
  std::vector<uint8_t> tail(tail_size);
  read_at(file_size_ - tail_size, tail.data(), tail_size);
  int64_t eocd = -1;
  for (int64_t i = static_cast<int64_t>(tail_size - kEocdSize); i >= 0; --i) {
    if (le32(&tail[i]) == kEocdSig) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) {
    throw InputError(
        fmt::format("{}: not a zip archive (npz): no end-of-central-directory "
                    "record (truncated or not a .npz file)",
                    path_));
  }
  const uint8_t* e = &tail[eocd];
  uint64_t count = le16(e + 10);
  uint64_t cd_size = le32(e + 12);
  uint64_t cd_offset = le32(e + 16);
  if (le16(e + 4) != 0 || le16(e + 6) != 0) {
    throw InputError(path_ + ": multi-disk zip archives are not supported");
  }
  const uint64_t eocd_pos = file_size_ - tail_size + static_cast<uint64_t>(eocd);
  if (count == 0xffff || cd_size == 0xffffffff || cd_offset == 0xffffffff) {
    // ZIP64: the locator precedes the end record and points at the ZIP64 end record.
    if (eocd_pos < 20) throw InputError(path_ + ": ZIP64 locator missing");
    uint8_t loc[20];
    read_at(eocd_pos - 20, loc, 20);
    if (le32(loc) != kZip64LocatorSig) throw InputError(path_ + ": ZIP64 locator missing");
    uint8_t rec[56];
    read_at(le64(loc + 8), rec, 56);
    if (le32(rec) != kZip64EocdSig) throw InputError(path_ + ": ZIP64 end record is corrupt");
    count = le64(rec + 32);
    cd_size = le64(rec + 40);
    cd_offset = le64(rec + 48);
  }
  if (cd_offset > file_size_ || cd_size > file_size_ - cd_offset) {
    throw InputError(
        fmt::format("{}: corrupt zip: central directory (offset {}, {} bytes) lies "
                    "outside the {}-byte file",
                    path_, cd_offset, cd_size, file_size_));
  }
  if (count > cd_size / kCentralSize) {
    throw InputError(
        fmt::format("{}: corrupt zip: {} entries cannot fit in a {}-byte central "
                    "directory",
                    path_, count, cd_size));
  }
  std::vector<uint8_t> cd(cd_size);
  read_at(cd_offset, cd.data(), cd_size);
  size_t pos = 0;
  for (uint64_t k = 0; k < count; ++k) {
    if (cd_size - pos < kCentralSize || le32(&cd[pos]) != kCentralSig) {
      throw InputError(
          fmt::format("{}: corrupt zip: central directory entry {} is damaged", path_, k));
    }
    const uint8_t* h = &cd[pos];
    ZipEntry entry;
    const uint16_t flags = le16(h + 8);
    entry.method = le16(h + 10);
    entry.crc32 = le32(h + 16);
    entry.compressed_size = le32(h + 20);
    entry.uncompressed_size = le32(h + 24);
    const size_t name_len = le16(h + 28);
    const size_t extra_len = le16(h + 30);
    const size_t comment_len = le16(h + 32);
    entry.local_header_offset = le32(h + 42);
    if (cd_size - pos - kCentralSize < name_len + extra_len + comment_len) {
      throw InputError(
          fmt::format("{}: corrupt zip: central directory entry {} overruns", path_, k));
    }
    entry.name.assign(reinterpret_cast<const char*>(h + kCentralSize), name_len);
    // ZIP64 extended information: present fields replace the 0xffffffff placeholders, in order.
    const uint8_t* x = h + kCentralSize + name_len;
    size_t xi = 0;
    while (xi + 4 <= extra_len) {
      const uint16_t id = le16(x + xi);
      const size_t len = le16(x + xi + 2);
      if (xi + 4 + len > extra_len) break;
      if (id == 0x0001) {
        size_t f = xi + 4;
        auto take = [&](uint64_t& field) {
          if (field != 0xffffffff) return;
          if (f + 8 > xi + 4 + len) throw InputError(path_ + ": corrupt ZIP64 extra field");
          field = le64(x + f);
          f += 8;
        };
        take(entry.uncompressed_size);
        take(entry.compressed_size);
        take(entry.local_header_offset);
      }
      xi += 4 + len;
    }
    if (flags & 1u)
      throw InputError(fmt::format("{}: member '{}' is encrypted", path_, entry.name));
    if (entry.method != 0 && entry.method != 8) {
      throw InputError(
          fmt::format("{}: member '{}' uses compression method {}; only stored (0) "
                      "and deflate (8) are supported",
                      path_, entry.name, entry.method));
    }
    if (entry.method == 0 && entry.compressed_size != entry.uncompressed_size) {
      throw InputError(
          fmt::format("{}: corrupt zip: stored member '{}' has compressed size {} "
                      "!= uncompressed size {}",
                      path_, entry.name, entry.compressed_size, entry.uncompressed_size));
    }
    entries_.push_back(std::move(entry));
    pos += kCentralSize + name_len + extra_len + comment_len;
  }
}

std::vector<uint8_t> ZipReader::read(const ZipEntry& entry, uint64_t max_bytes) const {
  if (entry.uncompressed_size > max_bytes) {
    throw InputError(fmt::format("{}: member '{}' claims {} bytes, above the limit of {} bytes",
                                 path_, entry.name, entry.uncompressed_size, max_bytes));
  }
  uint8_t lh[kLocalSize];
  read_at(entry.local_header_offset, lh, kLocalSize);
  if (le32(lh) != kLocalSig) {
    throw InputError(fmt::format("{}: corrupt zip: no local header for member '{}' at byte {}",
                                 path_, entry.name, entry.local_header_offset));
  }
  const uint64_t data_offset =
      entry.local_header_offset + kLocalSize + le16(lh + 26) + le16(lh + 28);
  if (data_offset > file_size_ || entry.compressed_size > file_size_ - data_offset) {
    throw InputError(
        fmt::format("{}: corrupt zip: member '{}' ({} bytes at byte {}) runs past "
                    "the end of the {}-byte file (truncated?)",
                    path_, entry.name, entry.compressed_size, data_offset, file_size_));
  }
  std::vector<uint8_t> out;
  if (entry.method == 0) {
    out.resize(entry.uncompressed_size);
    read_at(data_offset, out.data(), out.size());
  } else {
    // Inflate in chunks; the output buffer grows with the bytes actually produced, so a header
    // that lies about the size cannot force a large allocation.
    z_stream zs{};
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) throw InternalError("inflateInit2 failed");
    std::vector<uint8_t> in(kChunk);
    uint64_t in_left = entry.compressed_size;
    uint64_t in_pos = data_offset;
    // Start from a plausible size (deflate rarely exceeds 8:1 on numeric arrays) and double as
    // bytes arrive; never beyond the declared size.
    out.resize(std::min<uint64_t>(entry.uncompressed_size,
                                  std::max<uint64_t>(kChunk, 8 * entry.compressed_size)));
    uint64_t produced = 0;
    int stalls = 0;
    uint8_t probe = 0;  // one byte past the declared size: tells "too long" from "ends here"
    try {
      for (;;) {
        if (zs.avail_in == 0 && in_left > 0) {
          const uint64_t n = std::min<uint64_t>(in_left, kChunk);
          read_at(in_pos, in.data(), n);
          in_pos += n;
          in_left -= n;
          zs.next_in = in.data();
          zs.avail_in = static_cast<uInt>(n);
        }
        if (produced == out.size() && out.size() < entry.uncompressed_size) {
          out.resize(std::min<uint64_t>(entry.uncompressed_size, out.size() * 2));
        }
        const bool probing = produced == out.size();
        zs.next_out = probing ? &probe : out.data() + produced;
        zs.avail_out =
            probing ? 1u : static_cast<uInt>(std::min<uint64_t>(out.size() - produced, 1u << 30));
        const uInt before_out = zs.avail_out;
        const uInt before_in = zs.avail_in;
        const int rc = inflate(&zs, Z_NO_FLUSH);
        if (probing && zs.avail_out == 0) {
          throw InputError(
              fmt::format("{}: member '{}' inflates to more than its declared {} "
                          "bytes",
                          path_, entry.name, entry.uncompressed_size));
        }
        if (!probing) produced += before_out - zs.avail_out;
        if (rc == Z_STREAM_END) break;
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
          throw InputError(fmt::format("{}: member '{}' has corrupt deflate data ({})", path_,
                                       entry.name, zs.msg ? zs.msg : "unknown error"));
        }
        const bool progress = before_out != zs.avail_out || before_in != zs.avail_in;
        if (!progress && zs.avail_in == 0 && in_left == 0) {
          throw InputError(
              fmt::format("{}: member '{}' is truncated: its deflate stream ends "
                          "early",
                          path_, entry.name));
        }
        stalls = progress ? 0 : stalls + 1;
        if (stalls > 2) {
          throw InputError(
              fmt::format("{}: member '{}' has corrupt deflate data", path_, entry.name));
        }
      }
    } catch (...) {
      inflateEnd(&zs);
      throw;
    }
    inflateEnd(&zs);
    if (produced != entry.uncompressed_size) {
      throw InputError(fmt::format("{}: member '{}' inflates to {} bytes, header says {}", path_,
                                   entry.name, produced, entry.uncompressed_size));
    }
    out.resize(produced);
  }
  if (crc_of(out.data(), out.size()) != entry.crc32) {
    throw InputError(
        fmt::format("{}: member '{}' fails its CRC-32 check (corrupt data)", path_, entry.name));
  }
  return out;
}

ZipWriter::ZipWriter(std::string path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "wb");
  if (file_ == nullptr) {
    throw InputError(fmt::format("{}: cannot create: {}", path_, std::strerror(errno)));
  }
}

ZipWriter::~ZipWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void ZipWriter::write(const void* data, size_t size) {
  if (size > 0 && std::fwrite(data, 1, size, file_) != size) {
    throw InputError(fmt::format("{}: write failed: {}", path_, std::strerror(errno)));
  }
  offset_ += size;
}

void ZipWriter::add(const std::string& name, const std::vector<uint8_t>& data, bool compress) {
  TCOST_CHECK(!finished_, "add after finish");
  ZipEntry entry;
  entry.name = name;
  entry.uncompressed_size = data.size();
  entry.crc32 = crc_of(data.data(), data.size());
  entry.local_header_offset = offset_;
  std::vector<uint8_t> packed;
  const std::vector<uint8_t>* payload = &data;
  if (compress) {
    z_stream zs{};
    TCOST_CHECK(deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8,
                             Z_DEFAULT_STRATEGY) == Z_OK,
                "deflateInit2");
    packed.resize(deflateBound(&zs, data.size()));
    zs.next_in = const_cast<Bytef*>(data.data());
    zs.avail_in = static_cast<uInt>(data.size());
    zs.next_out = packed.data();
    zs.avail_out = static_cast<uInt>(packed.size());
    const int rc = deflate(&zs, Z_FINISH);
    deflateEnd(&zs);
    TCOST_CHECK(rc == Z_STREAM_END, "deflate returned {}", rc);
    packed.resize(zs.total_out);
    payload = &packed;
    entry.method = 8;
  }
  entry.compressed_size = payload->size();
  if (offset_ + payload->size() + 1024 >= 0xffffffffull) {
    throw InputError(
        fmt::format("{}: archive would exceed 4 GiB, which needs ZIP64 records that "
                    "this writer does not produce",
                    path_));
  }
  std::vector<uint8_t> h;
  put32(h, kLocalSig);
  put16(h, 20);  // version needed: 2.0 (deflate)
  put16(h, 0);   // flags
  put16(h, entry.method);
  put16(h, 0);       // time 00:00
  put16(h, 0x0021);  // date 1980-01-01: fixed, so that output is reproducible
  put32(h, entry.crc32);
  put32(h, static_cast<uint32_t>(entry.compressed_size));
  put32(h, static_cast<uint32_t>(entry.uncompressed_size));
  put16(h, static_cast<uint16_t>(name.size()));
  put16(h, 0);
  write(h.data(), h.size());
  write(name.data(), name.size());
  write(payload->data(), payload->size());
  entries_.push_back(std::move(entry));
}

void ZipWriter::finish() {
  TCOST_CHECK(!finished_, "finish twice");
  const uint64_t cd_offset = offset_;
  for (const ZipEntry& e : entries_) {
    std::vector<uint8_t> h;
    put32(h, kCentralSig);
    put16(h, 20);  // made by
    put16(h, 20);  // needed
    put16(h, 0);
    put16(h, e.method);
    put16(h, 0);
    put16(h, 0x0021);
    put32(h, e.crc32);
    put32(h, static_cast<uint32_t>(e.compressed_size));
    put32(h, static_cast<uint32_t>(e.uncompressed_size));
    put16(h, static_cast<uint16_t>(e.name.size()));
    put16(h, 0);  // extra
    put16(h, 0);  // comment
    put16(h, 0);  // disk
    put16(h, 0);  // internal attributes
    put32(h, 0);  // external attributes
    put32(h, static_cast<uint32_t>(e.local_header_offset));
    write(h.data(), h.size());
    write(e.name.data(), e.name.size());
  }
  const uint64_t cd_size = offset_ - cd_offset;
  std::vector<uint8_t> h;
  put32(h, kEocdSig);
  put16(h, 0);
  put16(h, 0);
  put16(h, static_cast<uint16_t>(entries_.size()));
  put16(h, static_cast<uint16_t>(entries_.size()));
  put32(h, static_cast<uint32_t>(cd_size));
  put32(h, static_cast<uint32_t>(cd_offset));
  put16(h, 0);
  write(h.data(), h.size());
  finished_ = true;
  if (std::fclose(file_) != 0) {
    file_ = nullptr;
    throw InputError(fmt::format("{}: close failed: {}", path_, std::strerror(errno)));
  }
  file_ = nullptr;
}

}  // namespace tcost
