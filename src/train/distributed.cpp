#include "train/distributed.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <system_error>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>

#include "core/error.h"

namespace tcost::train {
namespace {

using Clock = std::chrono::steady_clock;

int env_int(const char* name, int fallback, int lo, int hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < lo || x > hi) {
    throw UsageError(
        fmt::format("environment {}={}: expected an integer in [{}, {}]", name, v, lo, hi));
  }
  return static_cast<int>(x);
}

std::string heartbeat_key(int rank) { return fmt::format("tcost/heartbeat/{}", rank); }

bool is_loopback(const std::string& addr) {
  return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1";
}

}  // namespace

DistEnv dist_env_from_environment() {
  DistEnv e;
  e.world = env_int("WORLD_SIZE", 1, 1, 1 << 16);
  if (e.world == 1) return e;
  e.rank = env_int("RANK", -1, 0, e.world - 1);
  if (e.rank < 0) throw UsageError("WORLD_SIZE is set but RANK is not (torchrun's environment)");
  e.local_rank = env_int("LOCAL_RANK", 0, 0, 1 << 16);
  if (const char* a = std::getenv("MASTER_ADDR"); a != nullptr && *a != '\0') e.master_addr = a;
  e.master_port = env_int("MASTER_PORT", -1, 1, 65535);
  if (e.master_port < 0) throw UsageError("WORLD_SIZE is set but MASTER_PORT is not");
  return e;
}

struct ProcessGroup::Impl {
  // The group alive in this process, for on_terminate; read and written with std::atomic_load
  // and std::atomic_store. on_terminate holds its own reference while it reports (which takes
  // seconds: lost_ranks), so the main thread's destruction of the group cannot free it meanwhile.
  static std::shared_ptr<Impl> live;
  // Set while on_terminate reports: the group's destructor then waits for it to end the process.
  static std::atomic<bool> terminating;
  static std::terminate_handler previous_terminate;
  [[noreturn]] static void on_terminate();

  DistEnv env;
  std::chrono::milliseconds timeout{60000};
  c10::intrusive_ptr<c10d::TCPStore> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg;
  std::thread heartbeat;
  std::shared_ptr<std::atomic<bool>> stop = std::make_shared<std::atomic<bool>>(false);
  bool failed = false;
  int64_t broadcasts = 0;
  double allreduce_s = 0;
  int64_t allreduce_n = 0;

  c10::intrusive_ptr<c10d::TCPStore> connect(std::chrono::milliseconds t, bool server) const {
    c10d::TCPStoreOptions so;
    so.port = static_cast<uint16_t>(env.master_port);
    so.isServer = server;
    so.waitWorkers = false;  // the process group's rendezvous waits for every rank
    so.timeout = t;
    return c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
  }

  // Which ranks stopped beating: their counters do not move for 2.5 s. Rank 0 when the store
  // (served by rank 0's process) cannot be reached.
  std::vector<int> lost_ranks() const {
    std::vector<int> gone;
    try {
      const auto probe = connect(std::chrono::milliseconds(5000), false);
      std::vector<int64_t> before(static_cast<size_t>(env.world));
      for (int r = 0; r < env.world; ++r) {
        if (r != env.rank) before[static_cast<size_t>(r)] = probe->add(heartbeat_key(r), 0);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2500));
      for (int r = 0; r < env.world; ++r) {
        if (r != env.rank && probe->add(heartbeat_key(r), 0) == before[static_cast<size_t>(r)])
          gone.push_back(r);
      }
    } catch (const std::exception&) {
      gone = {0};
    }
    return gone;
  }

  // The error for a failed collective or store call: names the ranks that stopped beating.
  std::string failure(const std::string& what) const {
    const auto gone = lost_ranks();
    std::string who;
    for (int r : gone) who += (who.empty() ? "" : ", ") + std::to_string(r);
    // The Gloo message is long and multi-line; its first line is enough.
    const std::string first = what.substr(0, what.find('\n'));
    if (gone.empty()) {
      return fmt::format("distributed training (rank {}): communication failed: {}", env.rank,
                         first);
    }
    return fmt::format(
        "distributed training (rank {}): lost rank {} (it stopped answering{}); stopping: {}",
        env.rank, who, gone == std::vector<int>{0} ? ", or the store it serves is gone" : "",
        first);
  }

  [[noreturn]] void fail(const std::string& what) {
    failed = true;
    throw InputError(failure(what));
  }

  void wait(const c10::intrusive_ptr<c10d::Work>& work) {
    try {
      work->wait();
    } catch (const std::exception& e) {
      fail(e.what());
    }
  }

  // Tensors grouped by dtype into flat buckets of at most `bucket_bytes`; `op` issues one
  // collective per bucket; all are in flight before the first wait.
  template <typename Op>
  void bucketed(const std::vector<torch::Tensor>& tensors, int64_t bucket_bytes, Op op) {
    struct Bucket {
      std::vector<torch::Tensor> parts;
      int64_t bytes = 0;
      torch::Tensor flat;
      c10::intrusive_ptr<c10d::Work> work;
    };
    std::vector<Bucket> buckets;
    std::map<c10::ScalarType, size_t> open;
    for (const auto& t : tensors) {
      const auto it = open.find(t.scalar_type());
      if (it == open.end() ||
          buckets[it->second].bytes + static_cast<int64_t>(t.nbytes()) > bucket_bytes) {
        buckets.emplace_back();
        open[t.scalar_type()] = buckets.size() - 1;
      }
      Bucket& b = buckets[open[t.scalar_type()]];
      b.parts.push_back(t);
      b.bytes += static_cast<int64_t>(t.nbytes());
    }
    torch::NoGradGuard no_grad;
    for (auto& b : buckets) {
      std::vector<torch::Tensor> flat;
      for (const auto& p : b.parts) flat.push_back(p.reshape(-1));
      b.flat = torch::cat(flat);
      std::vector<at::Tensor> v{b.flat};
      try {
        b.work = op(v);
      } catch (const std::exception& e) {
        fail(e.what());
      }
    }
    for (auto& b : buckets) wait(b.work);
    for (auto& b : buckets) {
      int64_t off = 0;
      for (auto& p : b.parts) {
        const int64_t n = p.numel();
        p.copy_(b.flat.narrow(0, off, n).view_as(p));
        off += n;
      }
    }
  }
};

// LibTorch's store clients and Gloo run threads of their own. When a peer dies, one of them can
// throw (std::system_error "Connection reset by peer") where nothing catches it, which would
// abort the process with SIGABRT before the main thread's collective reports the loss. While a
// group is alive, such an exception ends the process as a failed collective does: one
// "tcost: error: ... lost rank N" line and exit status 1.
std::shared_ptr<ProcessGroup::Impl> ProcessGroup::Impl::live;
std::atomic<bool> ProcessGroup::Impl::terminating{false};
std::terminate_handler ProcessGroup::Impl::previous_terminate = nullptr;

void ProcessGroup::Impl::on_terminate() {
  const std::shared_ptr<Impl> impl = std::atomic_load(&live);
  if (impl != nullptr) terminating = true;
  const std::exception_ptr current = std::current_exception();
  if (impl != nullptr && current != nullptr) {
    std::string what = "an unknown exception";
    try {
      std::rethrow_exception(current);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    const std::string message = impl->failure(what);
    std::fprintf(stderr, "tcost: error: %s\n", message.c_str());
    std::fflush(stderr);
    _exit(1);
  }
  if (previous_terminate != nullptr) previous_terminate();
  std::abort();
}

ProcessGroup::ProcessGroup(const DistEnv& env, std::chrono::milliseconds timeout)
    : impl_(std::make_shared<Impl>()) {
  impl_->env = env;
  impl_->timeout = timeout;
  // A peer that dies closes its sockets: writing to them must be an error to report, not a
  // SIGPIPE that ends this process silently.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    impl_->store = impl_->connect(timeout, env.rank == 0);
    auto opts = c10d::ProcessGroupGloo::Options::create(timeout);
    // On one machine the loopback device; across machines the interface GLOO_SOCKET_IFNAME
    // names, else the one this host's name resolves to (as torchrun does).
    if (is_loopback(env.master_addr)) {
      opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    } else if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
      opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
    } else {
      opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    }
    opts->threads = 1;
    impl_->pg =
        c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, env.rank, env.world, opts);
  } catch (const std::exception& e) {
    const std::string first = std::string(e.what()).substr(0, std::string(e.what()).find('\n'));
    throw InputError(fmt::format(
        "distributed training (rank {} of {}): could not join the group at {}:{} within {} s: {}",
        env.rank, env.world, env.master_addr, env.master_port, timeout.count() / 1000, first));
  }
  // The heartbeat, on its own connection to the store.
  auto beat_store = impl_->connect(timeout, false);
  // It owns what it uses: after a failure it is detached and may outlive Impl.
  impl_->heartbeat = std::thread([stop = impl_->stop, key = heartbeat_key(env.rank), beat_store] {
    while (!stop->load()) {
      try {
        beat_store->add(key, 1);
      } catch (const std::exception&) {
        return;  // the store is gone: the collectives will say so
      }
      for (int i = 0; i < 5 && !stop->load(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::atomic_store(&Impl::live, impl_);
  if (Impl::previous_terminate == nullptr)
    Impl::previous_terminate = std::set_terminate(Impl::on_terminate);
  // Fault injection for tests/dist: a thread of this process throws where nothing catches it,
  // as LibTorch's store threads can when a peer dies.
  if (const char* f = std::getenv("TCOST_DIST_FAULT"); f != nullptr && std::string(f) == "thread") {
    std::thread([] {
      throw std::system_error(ECONNRESET, std::system_category(), "injected by TCOST_DIST_FAULT");
    }).detach();
  }
}

ProcessGroup::~ProcessGroup() {
  // Another thread's uncaught exception is being reported (on_terminate, seconds: it names the
  // lost ranks) and will end the process with its error and status 1. Returning from here could
  // let the main thread end it first, with status 0 (training that stops early finishes within
  // those seconds): wait for it, a minute at most.
  for (int i = 0; i < 600 && Impl::terminating.load(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  *impl_->stop = true;
  std::atomic_store(&Impl::live, std::shared_ptr<Impl>());
  if (impl_->failed) {
    // A peer is gone: Gloo's threads may wait on it forever. Leave them and the store to the
    // process's exit instead of joining them here.
    impl_->heartbeat.detach();
    impl_->pg.release();
    impl_->store.release();
    return;
  }
  if (impl_->heartbeat.joinable()) impl_->heartbeat.join();
}

int ProcessGroup::rank() const { return impl_->env.rank; }
int ProcessGroup::world() const { return impl_->env.world; }

void ProcessGroup::allreduce_sum(const std::vector<torch::Tensor>& tensors, int64_t bucket_bytes) {
  const auto t0 = Clock::now();
  impl_->bucketed(tensors, bucket_bytes, [&](std::vector<at::Tensor>& v) {
    return impl_->pg->allreduce(v, c10d::AllreduceOptions{});
  });
  impl_->allreduce_s += std::chrono::duration<double>(Clock::now() - t0).count();
  ++impl_->allreduce_n;
}

std::vector<double> ProcessGroup::allreduce_sum(const std::vector<double>& values) {
  auto t = torch::tensor(values, torch::kFloat64);
  allreduce_sum({t});
  return std::vector<double>(t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
}

void ProcessGroup::broadcast(const std::vector<torch::Tensor>& tensors) {
  impl_->bucketed(tensors, 25 << 20, [&](std::vector<at::Tensor>& v) {
    c10d::BroadcastOptions o;
    o.rootRank = 0;
    return impl_->pg->broadcast(v, o);
  });
}

std::string ProcessGroup::broadcast_bytes(const std::string& bytes) {
  const std::string key = fmt::format("tcost/broadcast/{}", impl_->broadcasts++);
  try {
    if (impl_->env.rank == 0) {
      impl_->store->set(key, std::vector<uint8_t>(bytes.begin(), bytes.end()));
      return bytes;
    }
    const auto v = impl_->store->get(key);
    return std::string(v.begin(), v.end());
  } catch (const std::exception& e) {
    impl_->fail(e.what());
  }
}

void ProcessGroup::barrier() {
  try {
    impl_->wait(impl_->pg->barrier());
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    impl_->fail(e.what());
  }
}

double ProcessGroup::allreduce_seconds() const { return impl_->allreduce_s; }
int64_t ProcessGroup::allreduce_calls() const { return impl_->allreduce_n; }

}  // namespace tcost::train
