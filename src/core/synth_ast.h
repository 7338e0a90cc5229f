// Synthetic syntax-tree datasets (the AST schema of ast.h): loop-nest programs (matmul and
// direct convolution with seeded shapes), configured by tile sizes, loop order, vectorisation,
// parallelism and unrolling; runtimes from a documented cost model (docs/synth.md) with noise.
#pragma once

#include <string>

#include "core/ast.h"
#include "core/synth.h"

namespace tcost {

AstSet make_synth_ast(const SynthOptions& options, int index);
SynthSummary write_synth_ast_dataset(const std::string& out_dir, const SynthOptions& options);

}  // namespace tcost
