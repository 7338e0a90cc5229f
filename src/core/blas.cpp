#include "core/blas.h"

#include <dlfcn.h>

#include <cstring>

namespace tcost {

std::string openblas_core() {
  using CoreName = char* (*)();
  const auto fn = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const char* name = fn ? fn() : nullptr;
  return name ? name : "";
}

const char* better_openblas_core() {
  const std::string core = openblas_core();
  // OpenBLAS's fallbacks for CPUs it does not recognise: kernels without AVX.
  static const char* const kGeneric[] = {"Prescott", "Core2", "Penryn", "Dunnington",
                                         "Nehalem",  "Atom",  "Katmai", "Northwood"};
  bool generic = false;
  for (const char* g : kGeneric) generic = generic || core == g;
  if (!generic) return nullptr;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512cd"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return nullptr;
}

bool set_blas_threads(int threads) {
  using SetThreads = void (*)(int);
  const auto fn = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  if (fn && threads > 0) fn(threads);
  return fn != nullptr;
}

int blas_threads() {
  using GetThreads = int (*)();
  const auto fn = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  return fn ? fn() : -1;
}

}  // namespace tcost
