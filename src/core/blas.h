// Which OpenBLAS kernels this process runs, and which it should run.
//   openblas_core       - OpenBLAS's name for the kernels it picked ("SkylakeX", "Prescott"),
//                         or "" when the process has no OpenBLAS (another BLAS, or none).
//   better_openblas_core - the OPENBLAS_CORETYPE to set when OpenBLAS fell back to generic
//                         SSE3 kernels on a CPU that has AVX-512 or AVX2+FMA, else nullptr.
// Why: OpenBLAS (DYNAMIC_ARCH, as Debian builds it) picks kernels from the CPU model at load
// time. On a virtual machine that reports a generic "Intel(R) Xeon(R) Processor" it falls back
// to Prescott; on this project's machine that made matmul 5x slower (54 against 310 GFLOP/s at
// 2048^3). The choice is made before main(), so the tcost binary re-executes itself once with
// the variable set (cli/main.cpp); the Python module and the Halide plugin cannot, and say so
// in docs/python.md and docs/tuning.md.
#pragma once

#include <string>

namespace tcost {

std::string openblas_core();
const char* better_openblas_core();
// Makes OpenBLAS run matrix products on `threads` threads (its own pool, which LibTorch's
// set_num_threads does not reach); false when the process has no OpenBLAS. train::set_threads
// calls it beside torch::set_num_threads for --threads N: left with a pool as wide as the
// machine, a --threads 1 training beside other jobs on 2 cores ran 2.4-5.7 times slower, its
// OpenBLAS threads spinning while waiting for each other. OpenBLAS rounds a product split
// between threads differently, so the last digits of a run depend on the count.
bool set_blas_threads(int threads);
// The threads OpenBLAS runs matrix products on now, or -1 when the process has no OpenBLAS.
int blas_threads();

}  // namespace tcost
