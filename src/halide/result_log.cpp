#include "halide/result_log.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "core/error.h"

namespace tcost::halide {

ResultLog::ResultLog(std::string path) : ResultLog(std::move(path), false) {}

ResultLog ResultLog::read_only(std::string path) { return ResultLog(std::move(path), true); }

ResultLog::ResultLog(std::string path, bool read_only) : path_(std::move(path)) {
  std::vector<std::string> lines;
  bool last_complete = true;
  {
    std::ifstream in(path_, std::ios::binary);
    if (read_only && !in) throw InputError(fmt::format("{}: cannot read", path_));
    std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t start = 0;
    while (start < content.size()) {
      const size_t end = content.find('\n', start);
      if (end == std::string::npos) {
        lines.push_back(content.substr(start));
        last_complete = false;
        break;
      }
      lines.push_back(content.substr(start, end - start));
      start = end + 1;
    }
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(lines[i]);
    } catch (const std::exception&) {
      // A kill mid-write leaves one cut line at the end; it is dropped and measured again.
      if (i + 1 == lines.size() && !last_complete) break;
      throw InputError(fmt::format("{}: line {} is not valid JSON", path_, i + 1));
    }
    if (!j.is_object() || !j.contains("key") || !j["key"].is_string()) {
      throw InputError(fmt::format("{}: line {} has no string \"key\"", path_, i + 1));
    }
    keep(std::move(j));
  }
  if (read_only) return;
  if (!last_complete) {
    // Rewrite without the cut line, so that appends start on a fresh line; every other line,
    // superseded ones too, stays as it was.
    std::ofstream out(path_ + ".tmp", std::ios::binary | std::ios::trunc);
    for (size_t i = 0; i + 1 < lines.size(); ++i) {
      if (!lines[i].empty()) out << lines[i] << '\n';
    }
    out.close();
    if (!out || std::rename((path_ + ".tmp").c_str(), path_.c_str()) != 0) {
      throw InputError(fmt::format("{}: cannot rewrite: {}", path_, std::strerror(errno)));
    }
  }
  file_ = std::fopen(path_.c_str(), "ab");
  if (file_ == nullptr)
    throw InputError(fmt::format("{}: cannot open for appending: {}", path_, std::strerror(errno)));
}

ResultLog::~ResultLog() {
  if (file_ != nullptr) std::fclose(file_);
}

void ResultLog::append(const nlohmann::json& record) {
  if (file_ == nullptr) throw InternalError(fmt::format("{}: opened read-only", path_));
  if (!record.contains("key") || !record["key"].is_string()) {
    throw InternalError("a result record needs a string \"key\"");
  }
  const std::string line = record.dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0 ||
      fsync(fileno(file_)) != 0) {
    throw InputError(fmt::format("{}: write failed: {}", path_, std::strerror(errno)));
  }
  keep(record);
}

void ResultLog::keep(nlohmann::json record) {
  const auto [it, added] = index_.emplace(record["key"].get<std::string>(), records_.size());
  if (added) {
    records_.push_back(std::move(record));
  } else {
    records_[it->second] = std::move(record);  // supersedes the earlier line, in its place
  }
}

const nlohmann::json* ResultLog::find(const std::string& key) const {
  const auto it = index_.find(key);
  return it == index_.end() ? nullptr : &records_[it->second];
}

}  // namespace tcost::halide
