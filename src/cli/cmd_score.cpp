// tcost score --data DIR_OR_FILE --pred PRED.csv [--json]: scores a submission-format ranking.
#include "cli/commands.h"
#include "cli/report.h"
#include "core/dataset.h"
#include "core/error.h"
#include "core/submission.h"

namespace tcost::cli {
namespace {

struct ScoreOptions {
  std::string data;  // a .npz file or a directory searched recursively
  std::string pred;  // CSV "ID,TopConfigs"
  bool json = false;
};

void run_score(const ScoreOptions& o) {
  const auto files = list_npz_files(o.data);
  if (files.empty()) throw InputError(fmt::format("{}: no .npz files", o.data));
  print_report(score_submission(files, read_submission(o.pred), o.pred), o.json);
}

}  // namespace

void register_score(CLI::App& app) {
  auto o = std::make_shared<ScoreOptions>();
  auto* cmd = app.add_subcommand("score", "Score predictions in the competition CSV format");
  cmd->add_option("--data", o->data, "A .npz file or a directory of them")->required();
  cmd->add_option("--pred", o->pred, "CSV with header ID,TopConfigs")->required();
  cmd->add_flag("--json", o->json, "One JSON object with mean_kendall_tau and per_graph");
  cmd->callback([o] { run_score(*o); });
}

}  // namespace tcost::cli
