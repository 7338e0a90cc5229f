#include "core/npz.h"

#include <cstdio>
#include <filesystem>

#include "core/error.h"
#include "core/zip.h"

namespace tcost {

NpzFile::NpzFile(const std::string& path, NpzReadOptions options)
    : zip_(std::make_unique<ZipReader>(path)), options_(options) {}
NpzFile::NpzFile(std::string label, std::vector<std::pair<std::string, NpyArray>> arrays)
    : label_(std::move(label)), memory_(std::move(arrays)) {}
NpzFile::~NpzFile() = default;
NpzFile::NpzFile(NpzFile&&) noexcept = default;
NpzFile& NpzFile::operator=(NpzFile&&) noexcept = default;

const std::string& NpzFile::path() const { return zip_ ? zip_->path() : label_; }

namespace {
std::string key_of(const std::string& member) {
  const std::string ext = ".npy";
  if (member.size() > ext.size() &&
      member.compare(member.size() - ext.size(), ext.size(), ext) == 0) {
    return member.substr(0, member.size() - ext.size());
  }
  return member;
}
}  // namespace

std::vector<std::string> NpzFile::keys() const {
  std::vector<std::string> out;
  if (!zip_) {
    for (const auto& [key, a] : memory_) out.push_back(key);
    return out;
  }
  for (const auto& e : zip_->entries()) out.push_back(key_of(e.name));
  return out;
}

bool NpzFile::has(const std::string& key) const {
  if (!zip_) {
    for (const auto& m : memory_) {
      if (m.first == key) return true;
    }
    return false;
  }
  for (const auto& e : zip_->entries()) {
    if (key_of(e.name) == key) return true;
  }
  return false;
}

NpyArray NpzFile::get(const std::string& key) const {
  for (const auto& m : memory_) {
    if (m.first == key) return m.second;
  }
  if (zip_) {
    for (const auto& e : zip_->entries()) {
      if (key_of(e.name) == key) {
        return parse_npy(zip_->read(e, options_.max_member_bytes),
                         fmt::format("{}: key '{}'", path(), key));
      }
    }
  }
  throw InputError(fmt::format("{}: missing key '{}'", path(), key));
}

void write_npz(const std::string& path, const std::vector<std::pair<std::string, NpyArray>>& arrays,
               bool compress) {
  // Write beside the target and rename, so that an interrupted write leaves no half file.
  const std::string tmp = path + ".tmp";
  try {
    ZipWriter zip(tmp);
    for (const auto& [key, array] : arrays) zip.add(key + ".npy", serialize_npy(array), compress);
    zip.finish();
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw InputError(fmt::format("{}: cannot write: {}", path, ec.message()));
  }
}

}  // namespace tcost
