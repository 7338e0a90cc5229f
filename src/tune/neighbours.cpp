#include "tune/neighbours.h"

#include "core/error.h"

namespace tcost::tune {
namespace {

bool valid(const halide::ProgramInfo& p, const halide::Schedule& s) {
  try {
    halide::check_schedule(p, s);
    return true;
  } catch (const InputError&) {
    return false;
  }
}

}  // namespace

std::optional<halide::Schedule> mutate(const halide::ProgramInfo& p, const halide::Schedule& parent,
                                       const std::vector<halide::Schedule>& donors,
                                       std::mt19937_64& rng) {
  if (donors.empty() || parent.empty()) return std::nullopt;
  for (int tries = 0; tries < 8; ++tries) {
    halide::Schedule child = parent;
    const auto& donor = donors[rng() % donors.size()];
    const size_t stage = rng() % child.size();
    child[stage] = donor[stage];
    // A stage that moves in or out of its consumer's loops can make a producer's location
    // invalid: sometimes take the donor's producers too.
    if (rng() % 2 == 0) {
      for (size_t k = 0; k < stage; ++k) {
        if (!valid(p, child)) child[k] = donor[k];
      }
    }
    if (!(child == parent) && valid(p, child)) return child;
  }
  return std::nullopt;
}

std::optional<halide::Schedule> crossover(const halide::ProgramInfo& p, const halide::Schedule& a,
                                          const halide::Schedule& b, std::mt19937_64& rng) {
  if (a.size() != b.size()) return std::nullopt;
  halide::Schedule child = a;
  for (size_t k = 0; k < child.size(); ++k) {
    if (rng() % 2 == 1) child[k] = b[k];
  }
  if (!valid(p, child)) return std::nullopt;
  return child;
}

}  // namespace tcost::tune
