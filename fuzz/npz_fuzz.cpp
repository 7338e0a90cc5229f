// Fuzzes the whole .npz reading path (zip, npy, TpuGraphs validation): any input must load or
// raise InputError; a crash, a sanitizer report, a hang or another exception is a bug.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "core/error.h"
#include "core/tpugraphs_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/tcost_fuzz_" + std::to_string(::getpid()) + ".npz";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  tcost::LoadOptions options;
  options.npz.max_member_bytes = uint64_t{64} << 20;  // keep the fuzzer's memory small
  try {
    tcost::load_graph(path, options);
  } catch (const tcost::InputError&) {
  }
  return 0;
}
