// Internal to the training layer: ensemble files (train/ensemble.cpp), read by load_cost_model.
#pragma once

#include <memory>
#include <string>

#include "train/cost_model.h"

namespace tcost::train {

// Whether the file is an ensemble file (JSON) rather than a checkpoint.
bool is_ensemble_file(const std::string& path);
// InputError for a file that is not an ensemble, or a member that does not load or fit.
std::unique_ptr<CostModel> load_ensemble(const std::string& path, int threads);

}  // namespace tcost::train
