// New candidate schedules from measured ones, valid by construction of the sampler and checked
// with check_schedule (Halide-free):
//   mutate    - one stage of a parent takes the decisions that stage has in a random valid
//               schedule (a donor from the sampler); a few tries until the result is valid.
//   crossover - every stage from one of two parents, at random; invalid children are dropped.
#pragma once

#include <optional>
#include <random>
#include <vector>

#include "halide/schedule.h"

namespace tcost::tune {

std::optional<halide::Schedule> mutate(const halide::ProgramInfo& p, const halide::Schedule& parent,
                                       const std::vector<halide::Schedule>& donors,
                                       std::mt19937_64& rng);
std::optional<halide::Schedule> crossover(const halide::ProgramInfo& p, const halide::Schedule& a,
                                          const halide::Schedule& b, std::mt19937_64& rng);

}  // namespace tcost::tune
