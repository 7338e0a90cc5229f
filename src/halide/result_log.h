// The collector's results file: one JSON object per line, appended and flushed to disk as each
// measurement finishes, so that an interrupted collection loses nothing and a restart skips
// what is done. A line cut short by a kill (the last one) is ignored on reading; any other
// malformed line is an InputError naming the file and line. A later line with the key of an
// earlier one supersedes it (a timeout measured again under a longer timeout): records() holds
// the latest, in the earlier one's place, and the file keeps both lines.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tcost::halide {

class ResultLog {
 public:
  // Opens (creating if needed) the log at `path` and reads the records already there.
  explicit ResultLog(std::string path);
  // Reads the log at `path` and never writes it (another collection's records): a missing file
  // is an InputError, a line cut short at the end is left as it is (ignored), and append() is
  // an InternalError.
  static ResultLog read_only(std::string path);
  ~ResultLog();
  ResultLog(const ResultLog&) = delete;
  ResultLog& operator=(const ResultLog&) = delete;

  // Records read at open plus those appended since, the latest of each key; each has a string
  // "key".
  const std::vector<nlohmann::json>& records() const { return records_; }
  bool done(const std::string& key) const { return index_.count(key) > 0; }
  // The record with this key, or null.
  const nlohmann::json* find(const std::string& key) const;
  // Appends one record (it must have a string "key") and flushes it to disk; one with the key
  // of a record on file supersedes it.
  void append(const nlohmann::json& record);

 private:
  ResultLog(std::string path, bool read_only);
  void keep(nlohmann::json record);  // into records_ and index_, superseding the same key
  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<nlohmann::json> records_;
  std::map<std::string, size_t> index_;  // key -> position in records_
};

}  // namespace tcost::halide
