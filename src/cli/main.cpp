// tcost: learned cost models for tensor compilers. One catch here maps errors to exit codes:
// 0 success, 1 bad input, 2 bad usage, 3 internal error.
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "cli/commands.h"
#include "core/blas.h"
#include "core/error.h"

namespace {

// OpenBLAS chose its kernels when it was loaded, before main; when it fell back to generic ones
// on a CPU with AVX-512 or AVX2 (core/blas.h), run again with OPENBLAS_CORETYPE set. Once only:
// the variable is then set. TCOST_KEEP_BLAS=1 keeps OpenBLAS's own choice.
void use_the_cpus_blas_kernels(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") || std::getenv("TCOST_KEEP_BLAS")) return;
  const char* core = tcost::better_openblas_core();
  if (!core || setenv("OPENBLAS_CORETYPE", core, 1) != 0) return;
  execv("/proc/self/exe", argv);
  unsetenv("OPENBLAS_CORETYPE");  // exec failed: carry on with the kernels we have
}

}  // namespace

int main(int argc, char** argv) {
  use_the_cpus_blas_kernels(argv);
  // Tensors of tens of MB are allocated and freed on every forward pass. glibc would map and
  // unmap each one (a page fault per 4 KiB every time); keep freed memory for reuse instead.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  CLI::App app{"tcost: learned cost models for tensor compilers"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Print help for all subcommands");
  tcost::cli::register_info(app);
  tcost::cli::register_score(app);
  tcost::cli::register_synth(app);
  tcost::cli::register_bench(app);
  tcost::cli::register_model_commands(app);
  tcost::cli::register_collect(app);
  tcost::cli::register_merge(app);
  tcost::cli::register_tune(app);
  tcost::cli::register_report(app);
  tcost::cli::register_launch(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "tcost: error: %s (see tcost --help)\n", e.what());
    return 2;
  } catch (const tcost::UsageError& e) {
    std::fprintf(stderr, "tcost: error: %s\n", e.what());
    return 2;
  } catch (const tcost::InputError& e) {
    std::fprintf(stderr, "tcost: error: %s\n", e.what());
    return 1;
  } catch (const tcost::InternalError& e) {
    std::fprintf(stderr, "tcost: %s\n", e.what());
    return 3;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "tcost: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tcost: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
