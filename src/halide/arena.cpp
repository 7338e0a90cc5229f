#include "halide/arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

namespace tcost::halide {

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kAlign = 128;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

Arena::Arena(uintptr_t address, size_t bytes) : base_(address), bytes_(bytes) {
  if (address % kPage != 0 || bytes == 0 || bytes % (2 * kPage) != 0)
    throw std::runtime_error("arena: address and size must be whole pages");
  void* want = reinterpret_cast<void*>(address);
  void* got = mmap(want, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
  if (got == MAP_FAILED)
    throw std::runtime_error("arena: cannot map " + std::to_string(bytes >> 20) + " MiB at " +
                             std::to_string(address) + ": " + std::strerror(errno));
  if (got != want) {  // a kernel without MAP_FIXED_NOREPLACE takes the address as a hint
    munmap(got, bytes);
    throw std::runtime_error("arena: the address " + std::to_string(address) + " is taken");
  }
  free_[base_ + bytes_ / 2] = bytes_ / 2;
}

bool Arena::advise_huge_pages() {
  if (!huge_pages_unavailable().empty()) return false;
  return madvise(reinterpret_cast<void*>(base_), bytes_, MADV_HUGEPAGE) == 0;
}

std::string huge_pages_mode(const std::string& enabled) {
  const size_t open = enabled.find('['), close = enabled.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return "";
  return enabled.substr(open + 1, close - open - 1);
}

std::string machine_huge_pages_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  return huge_pages_mode(line);
}

std::string huge_pages_unavailable() {
  const std::string mode = machine_huge_pages_mode();
  if (mode == "always" || mode == "madvise") return "";
  return mode.empty() ? "this kernel has no transparent huge pages"
                      : "transparent huge pages are '" + mode +
                            "' on this machine (/sys/kernel/mm/transparent_hugepage/enabled)";
}

Arena::~Arena() { munmap(reinterpret_cast<void*>(base_), bytes_); }

void* Arena::place(size_t bytes) {
  std::lock_guard<std::mutex> g(mu_);
  const size_t offset = static_cast<size_t>(placed_count_ % 8) * 512;
  const size_t end = placed_end_ + offset + bytes;
  if (end > bytes_ / 2)
    throw std::runtime_error("arena: " + std::to_string(bytes) +
                             " bytes do not fit in what is left of the placed half");
  void* p = reinterpret_cast<void*>(base_ + placed_end_ + offset);
  placed_end_ = round_up(end, kPage);
  ++placed_count_;
  return p;
}

void* Arena::allocate(size_t bytes) {
  const size_t need = round_up(bytes == 0 ? 1 : bytes, kAlign);
  std::lock_guard<std::mutex> g(mu_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < need) continue;
    const uintptr_t at = it->first;
    const size_t left = it->second - need;
    free_.erase(it);
    if (left > 0) free_[at + need] = left;
    used_[at] = need;
    ++allocations_;
    return reinterpret_cast<void*>(at);
  }
  return nullptr;
}

bool Arena::release(void* p) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> g(mu_);
  const auto u = used_.find(at);
  if (u == used_.end()) return false;
  size_t len = u->second;
  used_.erase(u);
  uintptr_t start = at;
  // Merge with the free range after it and the one before it.
  if (const auto next = free_.find(at + len); next != free_.end()) {
    len += next->second;
    free_.erase(next);
  }
  if (auto prev = free_.lower_bound(at); prev != free_.begin()) {
    --prev;
    if (prev->first + prev->second == at) {
      start = prev->first;
      len += prev->second;
      free_.erase(prev);
    }
  }
  free_[start] = len;
  return true;
}

Arena& measuring_arena() {
  static Arena arena(kArenaAddress, kArenaBytes);
  return arena;
}

}  // namespace tcost::halide
