// Printing a ScoreReport, shared by `tcost score` and `tcost eval`: one JSON object (keys
// mean_kendall_tau, mean_opa, per_graph, and mean_slowdown_1/5/10 when tile graphs are present;
// undefined metrics are null), or one text line per graph plus the means.
#pragma once

#include "core/submission.h"

namespace tcost::cli {

void print_report(const ScoreReport& report, bool json);

}  // namespace tcost::cli
