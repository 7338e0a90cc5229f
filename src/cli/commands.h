// Subcommands of the tcost CLI. Each registers its flags into its own options struct and sets
// the callback that runs it; no logic lives in main.
#pragma once

#include <CLI/CLI.hpp>

namespace tcost::cli {

void register_info(CLI::App& app);
void register_score(CLI::App& app);
void register_synth(CLI::App& app);
void register_bench(CLI::App& app);
void register_model_commands(CLI::App& app);  // train, eval, rank, ensemble
void register_collect(CLI::App& app);
void register_merge(CLI::App& app);
void register_tune(CLI::App& app);
void register_report(CLI::App& app);
void register_launch(CLI::App& app);

// collect's and tune's --huge-pages: UsageError, before anything is measured, where this
// machine's transparent huge pages are off (halide::huge_pages_unavailable).
void refuse_huge_pages_if_unavailable();

}  // namespace tcost::cli
