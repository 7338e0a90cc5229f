// Memory at the same addresses in every measuring process (collect --arena, docs/collect.md).
//   Arena           - a reserved range of address space at a given address: `place` hands out
//                     long-lived blocks one after another (a program's inputs and outputs),
//                     `allocate` / `release` the blocks a run allocates and frees (first fit,
//                     lowest address first), so that the same sequence of requests gets the same
//                     addresses in every process, whatever the process did before.
//   measuring_arena - the process's arena at kArenaAddress, mapped on first use.
// Where a measuring process's buffers lie otherwise depends on the heap its compile left behind,
// and the fork study found much of the process-to-process scatter set by the compile. The arena
// takes the buffers' placement away from it. Independent of Halide: the JIT's malloc handlers
// and the placement of a program's buffers use it (program.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace tcost::halide {

class Arena {
 public:
  // Reserves `bytes` (a multiple of the page size: half for placed blocks, half for allocated
  // ones) at `address` exactly; std::runtime_error when the range is taken or cannot be mapped.
  // The pages are committed when first written (MAP_NORESERVE) and never returned while the
  // arena lives, so a block allocated again is already mapped.
  Arena(uintptr_t address, size_t bytes);
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // A block for the arena's life: the next page after the previous block, starting at offset
  // (n mod 8) x 512 bytes in its page for the n-th block (so that buffers placed one after
  // another do not all start at one offset in their pages, where loads of one and stores to
  // another falsely alias in the L1 cache). std::runtime_error when the placed half is full.
  void* place(size_t bytes);
  // A block of at least `bytes`, 128-byte aligned: the lowest-addressed free range that fits.
  // Thread-safe. nullptr when none fits.
  void* allocate(size_t bytes);
  // Frees a block `allocate` returned (merging it with free neighbours); false, doing nothing,
  // for a pointer that is not an allocated block of this arena.
  bool release(void* p);
  bool contains(const void* p) const {
    const auto a = reinterpret_cast<uintptr_t>(p);
    return a >= base_ && a < base_ + bytes_;
  }
  uintptr_t base() const { return base_; }
  // Asks the kernel to back the arena with transparent huge pages (madvise MADV_HUGEPAGE) from
  // now on: pages touched afterwards are 2 MiB where the kernel can find them. False, and the
  // arena works on as before on small pages, where the machine's THP mode is neither `always`
  // nor `madvise` (huge_pages_mode: the kernel accepts the advice even under `never`) or the
  // kernel refuses it.
  bool advise_huge_pages();
  // Blocks `allocate` has handed out so far.
  int64_t allocations() {
    std::lock_guard<std::mutex> g(mu_);
    return allocations_;
  }

 private:
  uintptr_t base_;
  size_t bytes_;
  size_t placed_end_ = 0;  // offset of the next placed block's page
  int placed_count_ = 0;
  int64_t allocations_ = 0;
  std::mutex mu_;
  std::map<uintptr_t, size_t> free_;  // address -> bytes, of the allocated half
  std::map<uintptr_t, size_t> used_;  // address -> bytes
};

// Far from where Linux puts a process's heap (just above the executable) and its mappings
// (below the stack), in every process alike.
constexpr uintptr_t kArenaAddress = 0x6a0000000000;
constexpr size_t kArenaBytes = size_t{64} << 30;  // 32 GiB placed, 32 GiB allocated

// The mode selected in the text of /sys/kernel/mm/transparent_hugepage/enabled ("always
// [madvise] never" -> "madvise"); "" when none is selected (no such file: a kernel without THP).
std::string huge_pages_mode(const std::string& enabled);
// This machine's transparent huge pages mode (huge_pages_mode of its sysfs file).
std::string machine_huge_pages_mode();
// Why --huge-pages cannot be honoured on this machine ("" when it can: THP `always` or
// `madvise`), for the commands to refuse the flag before measuring anything.
std::string huge_pages_unavailable();

// The arena of this process at kArenaAddress (mapped on first use; forks inherit it).
Arena& measuring_arena();

}  // namespace tcost::halide
