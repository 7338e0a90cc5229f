// tcost launch: starts N local processes of a tcost subcommand with torchrun's environment
// (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), as
// `torchrun --standalone` does; with --nnodes and --node-rank, one machine's share of a
// multi-machine group (docs/distributed.md). It forwards SIGINT and SIGTERM to its children; when
// one fails it stops the others and exits non-zero.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/error.h"

namespace tcost::cli {
namespace {

struct LaunchOptions {
  int nproc = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;  // 0: a free port (one machine only)
  std::vector<std::string> command;
};

std::vector<pid_t> g_children;
std::atomic<int> g_signal{0};

void forward_signal(int sig) {
  g_signal = sig;
  for (pid_t p : g_children) {
    if (p > 0) kill(p, sig);
  }
}

// A port nothing listens on now (the kernel's choice for port 0).
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw InputError(fmt::format("launch: socket: {}", std::strerror(errno)));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof(a);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(fd);
    throw InputError(fmt::format("launch: no free port: {}", std::strerror(errno)));
  }
  close(fd);
  return ntohs(a.sin_port);
}

std::string describe(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {}", WTERMSIG(status));
  return "stopped";
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

void run_launch(const LaunchOptions& o) {
  if (o.command.empty()) throw UsageError("launch: give the command after --, e.g. -- train ...");
  if (o.node_rank >= o.nnodes) throw UsageError("launch: --node-rank must be below --nnodes");
  if (o.nnodes > 1 && o.master_port == 0)
    throw UsageError("launch: several machines need an agreed --master-port");
  const int port = o.master_port > 0 ? o.master_port : free_port();
  const int world = o.nproc * o.nnodes;
  std::vector<std::string> argv_s = {"/proc/self/exe"};
  argv_s.insert(argv_s.end(), o.command.begin(), o.command.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string exe(4096, '\0');
  const ssize_t n = readlink("/proc/self/exe", exe.data(), exe.size() - 1);
  if (n <= 0) throw InputError("launch: cannot find this executable (/proc/self/exe)");
  exe.resize(static_cast<size_t>(n));

  struct sigaction sa {};
  sa.sa_handler = forward_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  g_children.assign(static_cast<size_t>(o.nproc), -1);
  fmt::print(stderr, "launch: {} processes, ranks {}..{} of {}, rendezvous {}:{}\n", o.nproc,
             o.node_rank * o.nproc, o.node_rank * o.nproc + o.nproc - 1, world, o.master_addr,
             port);
  for (int local = 0; local < o.nproc; ++local) {
    const pid_t pid = fork();
    if (pid < 0) {
      forward_signal(SIGTERM);
      throw InputError(fmt::format("launch: fork: {}", std::strerror(errno)));
    }
    if (pid == 0) {
      setenv("RANK", std::to_string(o.node_rank * o.nproc + local).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(local).c_str(), 1);
      setenv("LOCAL_WORLD_SIZE", std::to_string(o.nproc).c_str(), 1);
      setenv("MASTER_ADDR", o.master_addr.c_str(), 1);
      setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      execv(exe.c_str(), argv.data());
      std::fprintf(stderr, "launch: exec %s: %s\n", exe.c_str(), std::strerror(errno));
      _exit(127);
    }
    g_children[static_cast<size_t>(local)] = pid;
  }
  // Wait for all; the first failure stops the rest (SIGTERM, then SIGKILL after 10 s).
  int code = 0;
  int alive = o.nproc;
  auto kill_deadline = std::chrono::steady_clock::time_point::max();
  while (alive > 0) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid < 0 && errno != EINTR) break;
    if (pid <= 0) {
      if (std::chrono::steady_clock::now() > kill_deadline) {
        for (pid_t p : g_children) {
          if (p > 0) kill(p, SIGKILL);
        }
        kill_deadline = std::chrono::steady_clock::time_point::max();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    int local = -1;
    for (size_t i = 0; i < g_children.size(); ++i) {
      if (g_children[i] == pid) {
        local = static_cast<int>(i);
        g_children[i] = -1;
      }
    }
    if (local < 0) continue;
    --alive;
    const bool failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (failed && code == 0) {
      code = exit_code_of(status);
      fmt::print(stderr, "launch: rank {} {}; stopping the others\n", o.node_rank * o.nproc + local,
                 describe(status));
      for (pid_t p : g_children) {
        if (p > 0) kill(p, SIGTERM);
      }
      kill_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    }
  }
  if (code == 0 && g_signal != 0) code = 128 + g_signal;
  if (code != 0) std::exit(code);
}

}  // namespace

void register_launch(CLI::App& app) {
  auto o = std::make_shared<LaunchOptions>();
  auto* cmd = app.add_subcommand(
      "launch",
      "Start N local tcost processes of a subcommand with torchrun's environment "
      "(tcost launch --nproc 2 -- train ...)");
  cmd->add_option("--nproc", o->nproc, "Processes on this machine")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--nnodes", o->nnodes, "Machines in the group")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--node-rank", o->node_rank, "This machine's index among them")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--master-addr", o->master_addr, "Address of rank 0's machine")
      ->capture_default_str();
  cmd->add_option("--master-port", o->master_port,
                  "Rendezvous port (0: a free port, on one machine)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("command", o->command, "The tcost subcommand and its arguments, after --")
      ->required();
  cmd->callback([o] { run_launch(*o); });
}

}  // namespace tcost::cli
