// Progress of long work on a terminal: done/total, rate and ETA on one rewritten stderr line.
// Silent when stderr is not a terminal (CI, pipes), so logs stay clean.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace tcost {

class Progress {
 public:
  Progress(std::string label, int64_t total);
  ~Progress();
  void update(int64_t done, const std::string& note = "");
  void finish();
  // Shows the line again after finish() (e.g. after a printed epoch summary).
  void resume() { finished_ = false; }

 private:
  std::string label_;
  int64_t total_;
  bool enabled_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace tcost
