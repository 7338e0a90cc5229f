// Data-parallel training on PyTorch's own distributed engine: c10d with the Gloo backend, as
// Debian's libtorch ships it (docs/distributed.md). Nothing here is a protocol of ours.
//   DistEnv       - what torchrun's environment says: RANK, WORLD_SIZE, MASTER_ADDR,
//                   MASTER_PORT and LOCAL_RANK (one process, world 1, when WORLD_SIZE is unset).
//   ProcessGroup  - joins the group through c10d's TCPStore at MASTER_ADDR:MASTER_PORT (rank 0
//                   serves it) and a ProcessGroupGloo; sums tensors across ranks in buckets (all
//                   issued before the first wait), broadcasts rank 0's tensors and bytes. When a
//                   collective fails or times out it names the rank that was lost: every rank
//                   beats a heartbeat counter in the store, and the one whose counter stopped is
//                   the one gone (rank 0 when the store itself is gone).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace tcost::train {

struct DistEnv {
  int rank = 0;
  int world = 1;
  int local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
};

// UsageError for values that do not parse or do not fit (RANK >= WORLD_SIZE, a port out of
// range, WORLD_SIZE > 1 without MASTER_PORT).
DistEnv dist_env_from_environment();

class ProcessGroup {
 public:
  // Waits at most `timeout` for every rank to join, and for each collective afterwards.
  ProcessGroup(const DistEnv& env, std::chrono::milliseconds timeout);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const;
  int world() const;
  // Sums every tensor in place across ranks. Tensors of one dtype are flattened into buckets of
  // at most `bucket_bytes` (one all-reduce each, all in flight at once), then copied back.
  void allreduce_sum(const std::vector<torch::Tensor>& tensors, int64_t bucket_bytes = 25 << 20);
  std::vector<double> allreduce_sum(const std::vector<double>& values);
  // Rank 0's values in place on every rank.
  void broadcast(const std::vector<torch::Tensor>& tensors);
  // Rank 0's bytes on every rank (through the store).
  std::string broadcast_bytes(const std::string& bytes);
  // Every rank reaches this point (or the lost one is named).
  void barrier();
  // Seconds spent in all-reduce calls so far, and how many there were.
  double allreduce_seconds() const;
  int64_t allreduce_calls() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;  // shared with on_terminate while it reports a failure
};

}  // namespace tcost::train
