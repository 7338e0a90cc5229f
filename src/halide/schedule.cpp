#include "halide/schedule.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include <fmt/format.h>

#include "core/error.h"

namespace tcost::halide {
namespace {

// A choice among `options`: the fast one (`good`) with probability `bias`, else uniform.
template <typename T>
T pick(std::mt19937_64& rng, double bias, const T& good, const std::vector<T>& options) {
  if (std::uniform_real_distribution<double>(0, 1)(rng) < bias) return good;
  return options[rng() % options.size()];
}

std::vector<int> at_most(const std::vector<int>& values, int64_t limit) {
  std::vector<int> out;
  for (int v : values) {
    if (v <= limit) out.push_back(v);
  }
  return out;
}

int code_of(int value, const std::vector<int>& table) {
  for (size_t i = 0; i < table.size(); ++i) {
    if (table[i] == value) return static_cast<int>(i);
  }
  return -1;
}

// Tiles of 2 and 4 rows make register tiles of accumulators (Adams2019's choice for
// convolutions: 16 x 3 x 4); seven values, codes 0..6, fill the categorical slot range.
const std::vector<int> kTiles = {2, 4, 8, 16, 32, 64, 128};
const std::vector<int> kChannelTiles = {2, 4, 8, 16, 32};
const std::vector<int> kOuterTiles = {2, 4, 8};
const std::vector<int> kVectors = {1, 4, 8, 16};
const std::vector<int> kUnrolls = {1, 2, 4};
const std::vector<int> kRfactors = {2, 4, 8, 16};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Stages that read node v once inlined stages are looked through (the loop nests v feeds).
void effective_consumers(const ProgramInfo& p, const std::vector<int>& compute_of_node, int v,
                         std::vector<int>& out) {
  for (int c : p.consumers(v)) {
    if (!p.nodes[c].is_output && compute_of_node[c] == kInline) {
      effective_consumers(p, compute_of_node, c, out);
    } else {
      out.push_back(c);
    }
  }
}

// Where each node is computed, as far as decided (consumers are decided before producers).
struct Placement {
  std::vector<int> compute;   // per node: kInline, kRoot or kAtTile
  std::vector<int> at_node;   // per node: the node whose loops it is computed in (kAtTile)
  std::vector<int> at_outer;  // per node: at that node's outer tile loop
  std::vector<int> rfactor;   // per node: its reduction goes through an intermediate
  explicit Placement(size_t n) : compute(n, kRoot), at_node(n, -1), at_outer(n, 0), rfactor(n, 0) {}
  // Records where stage node v goes under `st` (defined below, after at_node_of).
  void place(const ProgramInfo& p, const std::vector<int>& stages, int v, const StageSchedule& st);
};

// The nodes at whose tile loop v may be computed: consumers c of v such that every other
// consumer of v (looking through inlined ones) is computed inside c's loops. The minimum
// at_outer each such placement needs (1 when a consumer inside c sits at c's outer loop).
std::vector<std::pair<int, int>> at_candidates(const ProgramInfo& p, const Placement& pl, int v) {
  std::vector<int> cs;
  effective_consumers(p, pl.compute, v, cs);
  std::vector<std::pair<int, int>> out;
  // A consumer, or a stage every consumer is computed at (the main output in the first space).
  std::set<int> distinct(cs.begin(), cs.end());
  for (int e : cs) {
    if (pl.compute[e] == kAtTile) distinct.insert(pl.at_node[e]);
  }
  for (int c : distinct) {
    // A scan or scatter reads its producers in update loops that are not its tile loops.
    // Nor can an rfactor's intermediate (computed at root) read what is computed in c's loops.
    if ((p.nodes[c].has_update && !p.nodes[c].update_over_pure) || pl.rfactor[c] > 0) continue;
    bool ok = true;
    int need_outer = 0;
    for (int e : cs) {
      if (e == c) continue;
      if (pl.compute[e] != kAtTile || pl.at_node[e] != c) {
        ok = false;
        break;
      }
      need_outer = std::max(need_outer, pl.at_outer[e]);
    }
    if (ok) out.push_back({c, need_outer});
  }
  return out;
}

int stage_index(const std::vector<int>& stages, int node) {
  return static_cast<int>(std::find(stages.begin(), stages.end(), node) - stages.begin());
}

// The node a schedule's `at` field names.
int at_node_of(const ProgramInfo& p, const std::vector<int>& stages, const StageSchedule& st) {
  if (st.at < 0) return p.output();
  return st.at < static_cast<int>(stages.size()) ? stages[st.at] : -1;
}

void Placement::place(const ProgramInfo& p, const std::vector<int>& stages, int v,
                      const StageSchedule& st) {
  compute[v] = st.compute;
  if (st.compute == kAtTile) {
    at_node[v] = at_node_of(p, stages, st);
    at_outer[v] = st.at_outer;
  }
}

int64_t extent(const NodeInfo& n, size_t d) { return d < n.dims.size() ? n.dims[d] : 1; }

// An output is written through its buffer, compiled without bounds asserts: its splits shift
// the last tile inwards (pure definitions) or guard it (updates), which needs every factor to
// fit the loop it splits, and a loop that is itself the outer part of a split (two-level tiles,
// unrolled tile loops) split exactly: Halide 14 writes past the output otherwise (seen).
bool output_splits_fit(const NodeInfo& n, const StageSchedule& st) {
  if (st.tile_x > extent(n, 0) || st.tile_y > extent(n, 1) || st.tile_c > extent(n, 2))
    return false;
  if ((st.outer_x > 0 && ceil_div(extent(n, 0), st.tile_x) % st.outer_x != 0) ||
      (st.outer_y > 0 && ceil_div(extent(n, 1), st.tile_y) % st.outer_y != 0))
    return false;
  const auto loops = pure_loops(n, st);
  const int factors[3] = {st.vector, st.unroll, st.unroll2};
  for (size_t k = 0; k < 3; ++k) {
    if (factors[k] <= 1) continue;
    if (k >= loops.size() || factors[k] > loops[k].extent) return false;
    const bool split_part = loops[k].level == kLoopOuter || loops[k].level == kLoopMiddle;
    if (split_part && loops[k].extent % factors[k] != 0) return false;
  }
  return true;
}

// Fusing the two outermost pure loops for parallelism needs them adjacent (reduction loops not
// outermost) and untouched by the vector and unroll splits of the innermost loops.
bool may_fuse_parallel(const NodeInfo& n, const StageSchedule& st) {
  const size_t used = st.unroll2 > 1 ? 3 : st.unroll > 1 ? 2 : 1;
  return st.reduce_outer != 2 && pure_loops(n, st).size() >= used + 2;
}

// Whether the loops of stage node c run inside a parallel loop (its own or an enclosing
// stage's): storage hoisted to root above them would be shared by threads.
bool inside_parallel(const ProgramInfo& p, const std::vector<int>& stages, const Schedule& s,
                     int c) {
  for (int guard = 0; c >= 0 && guard < 64; ++guard) {
    const StageSchedule& st = s[static_cast<size_t>(stage_index(stages, c))];
    if (st.parallel > 0) return true;
    if (st.compute != kAtTile) return false;
    c = at_node_of(p, stages, st);
  }
  return false;
}

}  // namespace

bool StageSchedule::operator==(const StageSchedule& o) const {
  return compute == o.compute && tile_x == o.tile_x && tile_y == o.tile_y && vector == o.vector &&
         parallel == o.parallel && unroll == o.unroll && order == o.order &&
         reduce_outer == o.reduce_outer && storage == o.storage && at == o.at &&
         at_outer == o.at_outer && store_root == o.store_root && tile_c == o.tile_c &&
         outer_x == o.outer_x && outer_y == o.outer_y && vector_dim == o.vector_dim &&
         unroll2 == o.unroll2 && rfactor == o.rfactor;
}

std::vector<Loop> pure_loops(const NodeInfo& n, const StageSchedule& st) {
  const size_t dims = n.dims.size();
  const int split[3] = {st.tile_x, st.tile_y, st.tile_c};
  const int outer[2] = {st.outer_x, st.outer_y};
  std::vector<Loop> inner, middle, outside;
  for (size_t d = 0; d < dims; ++d) {
    const int s = d < 3 ? split[d] : 0;
    const int dd = static_cast<int>(d);
    if (s <= 0) {
      outside.push_back({dd, kLoopWhole, extent(n, d)});
      continue;
    }
    inner.push_back({dd, kLoopInner, s});
    const int64_t tiles = ceil_div(extent(n, d), s);
    if (d < 2 && outer[d] > 0) {
      middle.push_back({dd, kLoopMiddle, outer[d]});
      outside.push_back({dd, kLoopOuter, ceil_div(tiles, outer[d])});
    } else {
      outside.push_back({dd, kLoopOuter, tiles});
    }
  }
  std::vector<Loop> loops = inner;
  loops.insert(loops.end(), middle.begin(), middle.end());
  loops.insert(loops.end(), outside.begin(), outside.end());
  // `order` reverses the loops outside the inner tile (from the third loop on in the first
  // space) and never moves a middle tile loop out of its outer one.
  const size_t first = std::max<size_t>(2, inner.size() + middle.size());
  if (st.order == 1 && loops.size() >= first + 2)
    std::reverse(loops.begin() + static_cast<long>(first), loops.end());
  // The vectorised dimension's innermost loop goes innermost.
  for (size_t k = 0; k < loops.size(); ++k) {
    if (loops[k].dim == st.vector_dim) {
      const Loop v = loops[k];
      loops.erase(loops.begin() + static_cast<long>(k));
      loops.insert(loops.begin(), v);
      break;
    }
  }
  return loops;
}

Schedule default_schedule(const ProgramInfo& p) { return Schedule(p.stages().size()); }

std::vector<Schedule> sample_schedules(const ProgramInfo& p, int count, uint64_t seed) {
  const std::vector<int> stages = p.stages();
  std::vector<Schedule> out = {default_schedule(p)};
  std::set<std::string> seen = {schedule_key(out[0])};
  std::mt19937_64 rng(seed ^ std::hash<std::string>{}(p.instance));
  for (int tries = 0; static_cast<int>(out.size()) < count + 1 && tries < 100 * (count + 1);
       ++tries) {
    const double bias = std::uniform_real_distribution<double>(0, 1)(rng);
    Schedule s(stages.size());
    Placement pl(p.nodes.size());
    // Consumers first, so that a producer knows where everything reading it is computed.
    for (size_t k = stages.size(); k-- > 0;) {
      const int v = stages[k];
      const NodeInfo& n = p.nodes[v];
      StageSchedule& st = s[k];
      if (!n.is_output) {
        std::vector<int> where = {kRoot};
        if (!n.has_update) where.push_back(kInline);
        const auto at = at_candidates(p, pl, v);
        if (!at.empty()) where.push_back(kAtTile);
        const int good = where.back() == kAtTile ? kAtTile : (n.has_update ? kRoot : kInline);
        st.compute = pick(rng, bias, good, where);
        if (st.compute == kAtTile) {
          // The nearest consumer is the usual choice; the main output is the old space's one.
          const auto [c, need_outer] = pick(rng, bias, at.front(), at);
          st.at = c == p.output() ? -1 : stage_index(stages, c);
          const StageSchedule& cs = s[static_cast<size_t>(stage_index(stages, c))];
          const bool has_outer = cs.tile_x > 0 && cs.outer_x > 0;
          st.at_outer = need_outer > 0 ? 1 : has_outer ? pick(rng, bias, 0, {0, 1}) : 0;
          if (st.at_outer > 0 && !has_outer) {
            st.compute = kRoot;  // the consumer has no outer tile loop for it
            st.at = -1;
            st.at_outer = 0;
          } else if (!n.has_update && !inside_parallel(p, stages, s, c)) {
            st.store_root = pick(rng, bias, 0, {0, 0, 1});
          }
        }
      }
      pl.place(p, stages, v, st);
      if (st.compute == kInline) continue;
      const int64_t ex = extent(n, 0), ey = extent(n, 1), ec = extent(n, 2);
      if (st.compute != kAtTile) {
        const auto tx = at_most(kTiles, ex);
        if (!tx.empty() && pick(rng, bias, true, {false, true})) {
          st.tile_x = pick(rng, bias, std::min(32, tx.back()), tx);
          if (n.dims.size() > 1) {
            const auto ty = at_most(kTiles, ey);
            const bool has4 = std::find(ty.begin(), ty.end(), 4) != ty.end();
            st.tile_y = ty.empty() ? 0 : pick(rng, bias, has4 ? 4 : ty.front(), ty);
            if (st.tile_y == 0) st.tile_x = 0;
          }
        }
        if (st.tile_x > 0 && st.tile_y > 0) {
          // A second tiling level, at most as many tiles as there are.
          auto ox = at_most(kOuterTiles, ceil_div(ex, st.tile_x));
          auto oy = at_most(kOuterTiles, ceil_div(ey, st.tile_y));
          ox.insert(ox.begin(), 0);
          oy.insert(oy.begin(), 0);
          st.outer_x = pick(rng, bias, 0, ox);
          st.outer_y = st.outer_x > 0 ? pick(rng, bias, oy.back(), oy) : 0;
          if (st.outer_y == 0) st.outer_x = 0;
        }
        if (n.dims.size() > 2) {
          auto tc = at_most(kChannelTiles, ec / 2);
          tc.insert(tc.begin(), 0);
          st.tile_c = pick(rng, bias, 0, tc);
        }
        st.parallel =
            n.dims.size() > 1 ? pick(rng, bias, 1, {0, 1, 2}) : pick(rng, bias, 1, {0, 1});
        if (n.has_update && n.update_over_pure && n.reduction >= 256 && !n.is_output)
          st.rfactor = pick(rng, bias, 0, {0, 0, 0, 2, 4, 8, 16});
      }
      if (pure_loops(n, st).size() >= 4) st.order = pick(rng, bias, 0, {0, 1});
      if (n.dims.size() > 1) {
        std::vector<int> dims = {0, 1};
        if (n.dims.size() > 2) dims.push_back(2);
        st.vector_dim = pick(rng, bias, 0, dims);
      }
      const auto loops = pure_loops(n, st);
      const auto vs = at_most(kVectors, loops[0].extent);
      st.vector = vs.empty() ? 1 : pick(rng, bias, vs.back() >= 8 ? 8 : vs.back(), vs);
      if (loops.size() > 1) st.unroll = pick(rng, bias, 1, at_most(kUnrolls, loops[1].extent));
      if (loops.size() > 2 && st.unroll > 1)
        st.unroll2 = pick(rng, bias, 1, at_most(kUnrolls, loops[2].extent));
      if (n.has_update && n.update_over_pure) st.reduce_outer = pick(rng, bias, 1, {0, 1, 2});
      if (st.parallel == 2 && !may_fuse_parallel(n, st)) st.parallel = 1;
      if (!n.is_output && n.dims.size() > 1) {
        st.storage = pick(rng, bias, 0,
                          n.dims.size() > 2 ? std::vector<int>{0, 1, 2} : std::vector<int>{0, 1});
      }
      if (n.is_output && !output_splits_fit(n, st)) {
        // Give up the decisions that do not fit, outermost first.
        st.outer_x = st.outer_y = 0;
        if (!output_splits_fit(n, st)) st.unroll2 = 1;
        if (!output_splits_fit(n, st)) st.unroll = 1;
        if (!output_splits_fit(n, st)) st.vector = 1;
        if (st.parallel == 2 && !may_fuse_parallel(n, st)) st.parallel = 1;
      }
      if (st.rfactor > 0) {  // the reduction is split across threads instead
        st.reduce_outer = 0;
        st.parallel = 0;
      }
      pl.rfactor[v] = st.rfactor;
    }
    const std::string key = schedule_key(s);
    if (seen.insert(key).second) out.push_back(std::move(s));
  }
  return out;
}

std::optional<Schedule> tweak_schedule(const ProgramInfo& p, const Schedule& parent,
                                       std::mt19937_64& rng) {
  const std::vector<int> stages = p.stages();
  if (parent.size() != stages.size() || parent.empty()) return std::nullopt;
  // A value next to `v` in `table` (with 0 before the first entry when `zero` is allowed).
  const auto step = [&](int v, std::vector<int> table, bool zero) {
    if (zero) table.insert(table.begin(), 0);
    int i = code_of(v, table);
    if (i < 0) return table[rng() % table.size()];
    const int j = (rng() % 2 == 0) ? i - 1 : i + 1;
    return table[static_cast<size_t>(std::clamp(j, 0, static_cast<int>(table.size()) - 1))];
  };
  const auto any = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
  for (int tries = 0; tries < 24; ++tries) {
    Schedule child = parent;
    const size_t k = rng() % child.size();
    StageSchedule& st = child[k];
    const NodeInfo& n = p.nodes[static_cast<size_t>(stages[k])];
    switch (rng() % 14) {
      case 0:  // the inner tile, both dims at once or one of them
        st.tile_x = step(st.tile_x, kTiles, true);
        if (st.tile_x == 0) st.tile_y = st.outer_x = st.outer_y = 0;
        if (st.tile_x > 0 && st.tile_y == 0) st.tile_y = kTiles[rng() % kTiles.size()];
        break;
      case 1:
        st.tile_y = step(st.tile_y, kTiles, false);
        break;
      case 2:
        st.tile_c = step(st.tile_c, kChannelTiles, true);
        break;
      case 3:
        st.outer_x = step(st.outer_x, kOuterTiles, true);
        st.outer_y = st.outer_x == 0 ? 0 : st.outer_y == 0 ? 2 : st.outer_y;
        break;
      case 4:
        st.outer_y = step(st.outer_y, kOuterTiles, st.outer_x == 0);
        break;
      case 5:
        st.vector = step(st.vector, kVectors, false);
        break;
      case 6:
        st.vector_dim = any(0, std::min<int>(2, static_cast<int>(n.dims.size()) - 1));
        break;
      case 7:
        st.unroll = step(st.unroll, kUnrolls, false);
        break;
      case 8:
        st.unroll2 = step(st.unroll2, kUnrolls, false);
        break;
      case 9:
        st.reduce_outer = any(0, 2);
        break;
      case 10:
        st.parallel = any(0, 2);
        break;
      case 11:
        st.order = 1 - st.order;
        break;
      case 12:
        st.storage = any(0, 2);
        break;
      default:  // where it is computed: inline or root (compute-at comes from mutation)
        if (n.is_output) continue;
        st = StageSchedule{};
        if (!n.has_update && rng() % 2 == 0) st.compute = kInline;
        break;
    }
    if (st.compute == kInline) st = StageSchedule{kInline};
    if (child == parent) continue;
    try {
      check_schedule(p, child);
      return child;
    } catch (const InputError&) {
      // not valid: another try
    }
  }
  return std::nullopt;
}

std::vector<Schedule> sketch_schedules(const ProgramInfo& p, int count, uint64_t seed) {
  const std::vector<int> stages = p.stages();
  std::vector<Schedule> out;
  std::set<std::string> seen = {schedule_key(default_schedule(p))};
  std::mt19937_64 rng(seed ^ 0x5CE7C4u ^ std::hash<std::string>{}(p.instance));
  const auto one = [&](const std::vector<int>& options) {
    return options.empty() ? 0 : options[rng() % options.size()];
  };
  // The unrolls of the two loops outside the vector loop: the first from `first` (where it
  // fits), the second only when the first unrolls.
  const auto draw_unrolls = [&](const NodeInfo& n, StageSchedule& st,
                                const std::vector<int>& first) {
    const auto loops = pure_loops(n, st);
    if (loops.size() > 1) st.unroll = one(at_most(first, loops[1].extent));
    if (loops.size() > 2 && st.unroll > 1) st.unroll2 = one(at_most({1, 2, 4}, loops[2].extent));
    st.unroll = std::max(st.unroll, 1);
    st.unroll2 = std::max(st.unroll2, 1);
  };
  for (int tries = 0; static_cast<int>(out.size()) < count && tries < 40 * (count + 1); ++tries) {
    Schedule s(stages.size());
    Placement pl(p.nodes.size());
    for (size_t k = stages.size(); k-- > 0;) {
      const int v = stages[k];
      const NodeInfo& n = p.nodes[v];
      StageSchedule& st = s[k];
      const bool reduction = n.has_update && n.update_over_pure;
      if (!n.is_output) {
        // Pointwise stages are inlined; stencils inlined or computed per consumer tile;
        // reductions per consumer tile (their accumulators in registers) or at root.
        if (!n.has_update) {
          st.compute = n.window == 0 ? one({kInline, kInline, kInline, kRoot})
                                     : one({kInline, kAtTile, kAtTile, kRoot});
        } else {
          st.compute = reduction ? one({kAtTile, kAtTile, kRoot}) : kRoot;
        }
        const auto at = at_candidates(p, pl, v);
        if (st.compute == kAtTile && at.empty()) st.compute = n.has_update ? kRoot : kInline;
        if (st.compute == kAtTile) {
          const auto& [c, need_outer] = at[rng() % at.size()];
          const StageSchedule& cs = s[static_cast<size_t>(stage_index(stages, c))];
          st.at = c == p.output() ? -1 : stage_index(stages, c);
          const bool has_outer = cs.tile_x > 0 && cs.outer_x > 0;
          st.at_outer = std::max(need_outer, has_outer ? one({0, 1}) : 0);
          if (st.at_outer > 0 && !has_outer) st = StageSchedule{};
        }
      }
      pl.place(p, stages, v, st);
      if (st.compute == kInline) continue;
      const int64_t ex = extent(n, 0), ey = extent(n, 1), ec = extent(n, 2);
      const auto vs = at_most(kVectors, ex);
      st.vector = vs.empty() ? 1 : vs.back();
      if (st.compute == kAtTile) {
        // A consumer's tile: vectorised along x, the next loops unrolled, the reduction outside
        // every pure loop.
        draw_unrolls(n, st, {2, 4});
        if (reduction) st.reduce_outer = 2;
      } else {
        // A register tile: one to four vectors across x, a few rows and channels, the
        // reduction just outside it; the outer loops parallel.
        st.tile_x = one(at_most({st.vector, 2 * st.vector, 4 * st.vector}, ex));
        if (n.dims.size() > 1 && st.tile_x > 0) st.tile_y = one(at_most({0, 2, 4, 8}, ey));
        if (n.dims.size() > 2) st.tile_c = one(at_most({0, 4, 8, 16}, ec / 2));
        if (st.tile_x > 0 && st.tile_y > 0 && rng() % 2 == 0) {
          // Two levels: a block of register tiles, which consumers' producers may share.
          st.outer_x = one(at_most(kOuterTiles, ceil_div(ex, st.tile_x)));
          st.outer_y = one(at_most(kOuterTiles, ceil_div(ey, st.tile_y)));
          if (st.outer_x == 0 || st.outer_y == 0) st.outer_x = st.outer_y = 0;
        }
        draw_unrolls(n, st, {1, 2, 4});
        if (reduction) st.reduce_outer = 1;
        st.parallel = n.dims.size() > 1 ? one({1, 2}) : 1;
        if (pure_loops(n, st).size() >= 4) st.order = one({0, 1});
        if (st.parallel == 2 && !may_fuse_parallel(n, st)) st.parallel = 1;
      }
      if (n.is_output && !output_splits_fit(n, st)) {
        st.unroll2 = 1;
        if (!output_splits_fit(n, st)) st.outer_x = st.outer_y = 0;
        if (!output_splits_fit(n, st)) st.unroll = 1;
        if (!output_splits_fit(n, st)) st.vector = 1;
        if (st.parallel == 2 && !may_fuse_parallel(n, st)) st.parallel = 1;
      }
    }
    try {
      check_schedule(p, s);
    } catch (const InputError&) {
      continue;
    }
    if (seen.insert(schedule_key(s)).second) out.push_back(std::move(s));
  }
  return out;
}

void check_schedule(const ProgramInfo& p, const Schedule& s) {
  const std::vector<int> stages = p.stages();
  if (s.size() != stages.size()) {
    throw InputError(fmt::format("{}: a schedule has {} stages, the program {}", p.instance,
                                 s.size(), stages.size()));
  }
  Placement pl(p.nodes.size());
  for (size_t k = stages.size(); k-- > 0;) {
    const int v = stages[k];
    const NodeInfo& n = p.nodes[v];
    const StageSchedule& st = s[k];
    const auto bad = [&](const std::string& what) {
      return InputError(fmt::format("{}: stage {} ({}): {}", p.instance, k, n.name, what));
    };
    if (st.compute < kInline || st.compute > kAtTile) throw bad("compute location out of range");
    if (n.is_output && st.compute != kRoot) throw bad("an output must be computed at root");
    if (st.compute == kInline && n.has_update)
      throw bad("a stage with an update cannot be inlined");
    if (st.compute != kAtTile && (st.at != -1 || st.at_outer != 0 || st.store_root != 0))
      throw bad("a compute-at location on a stage that is not computed at a tile");
    pl.compute[v] = st.compute;
    if (st.compute == kAtTile) {
      if (st.at < -1 || st.at >= static_cast<int>(stages.size()) || st.at == static_cast<int>(k))
        throw bad("computed at a stage that does not exist");
      const int c = at_node_of(p, stages, st);
      bool found = false;
      for (const auto& [cand, need_outer] : at_candidates(p, pl, v)) {
        if (cand != c) continue;
        found = true;
        if (st.at_outer < need_outer)
          throw bad("computed inside a tile of a consumer that reads it at its outer tile");
      }
      if (!found) throw bad("computed at a consumer's tile but read outside it");
      const StageSchedule& cs = s[static_cast<size_t>(stage_index(stages, c))];
      if (st.at_outer < 0 || st.at_outer > 1 || (st.at_outer == 1 && cs.outer_x == 0))
        throw bad("computed at an outer tile loop its consumer does not have");
      if (st.store_root < 0 || st.store_root > 1) throw bad("store location out of range");
      if (st.store_root == 1 && inside_parallel(p, stages, s, c))
        throw bad("stored at root but computed inside a parallel loop (a race)");
      // Halide 14 computes wrong values for sliding windows over stages with updates (seen on
      // convolutions and reductions): not in the space.
      if (st.store_root == 1 && n.has_update) throw bad("stored at root but has an update");
      pl.at_node[v] = c;
      pl.at_outer[v] = st.at_outer;
    }
    const auto in_table = [](int v2, const std::vector<int>& t) {
      return v2 == 0 || code_of(v2, t) >= 0;
    };
    if (!in_table(st.tile_x, kTiles) || !in_table(st.tile_y, kTiles) ||
        (st.tile_y != 0 && st.tile_x == 0))
      throw bad("tile sizes out of range");
    if (!in_table(st.tile_c, kChannelTiles) || (st.tile_c != 0 && n.dims.size() < 3))
      throw bad("third-dimension tile out of range");
    if (!in_table(st.outer_x, kOuterTiles) || !in_table(st.outer_y, kOuterTiles) ||
        ((st.outer_x != 0 || st.outer_y != 0) && (st.tile_x == 0 || st.tile_y == 0)))
      throw bad("outer tiles out of range (they need an inner tile)");
    if (code_of(st.vector, kVectors) < 0) throw bad("vector width out of range");
    if (code_of(st.unroll, kUnrolls) < 0 || code_of(st.unroll2, kUnrolls) < 0)
      throw bad("unroll factor out of range");
    if (st.order < 0 || st.order > 1 || st.reduce_outer < 0 || st.reduce_outer > 2)
      throw bad("loop order out of range");
    if (st.parallel < 0 || st.parallel > 2 || (st.parallel == 2 && !may_fuse_parallel(n, st)))
      throw bad("parallel mode out of range (fused loops must be outer pure loops)");
    if (st.storage < 0 || st.storage > std::min<int>(2, static_cast<int>(n.dims.size()) - 1))
      throw bad("storage order out of range (a stage of d dims has orders 0..min(2, d-1))");
    if (st.vector_dim < 0 || st.vector_dim > 2 ||
        (st.vector_dim > 0 && st.vector_dim >= static_cast<int>(n.dims.size())))
      throw bad("vectorised dimension out of range");
    if (!in_table(st.rfactor, kRfactors) ||
        (st.rfactor != 0 &&
         (!n.has_update || !n.update_over_pure || n.is_output || st.compute != kRoot)))
      throw bad("rfactor applies to reductions over the pure variables computed at root");
    pl.rfactor[v] = st.rfactor;
    if (n.is_output) {
      if (!output_splits_fit(n, st))
        throw bad("a tile, vector or unroll factor that does not fit the output's loops");
      if (st.storage != 0) throw bad("the output's storage order is fixed");
    }
  }
}

std::string schedule_key(const Schedule& s) {
  std::string out;
  for (size_t k = 0; k < s.size(); ++k) {
    const StageSchedule& st = s[k];
    if (k > 0) out += '/';
    if (st.compute == kInline) {
      out += 'i';
      continue;
    }
    out += fmt::format("{}{}x{}.v{}.p{}.u{}.o{}.ro{}.s{}", st.compute == kRoot ? 'r' : 't',
                       st.tile_x, st.tile_y, st.vector, st.parallel, st.unroll, st.order,
                       st.reduce_outer, st.storage);
    // Decisions of the extended space, only where they differ from the default: keys of the
    // first space's schedules stay what they were.
    if (st.at != -1) out += fmt::format(".a{}", st.at);
    if (st.at_outer != 0) out += ".ao";
    if (st.store_root != 0) out += ".sr";
    if (st.tile_c != 0) out += fmt::format(".tc{}", st.tile_c);
    if (st.outer_x != 0 || st.outer_y != 0) out += fmt::format(".ot{}x{}", st.outer_x, st.outer_y);
    if (st.vector_dim != 0) out += fmt::format(".vd{}", st.vector_dim);
    if (st.unroll2 != 1) out += fmt::format(".uu{}", st.unroll2);
    if (st.rfactor != 0) out += fmt::format(".rf{}", st.rfactor);
  }
  return out;
}

namespace {
constexpr size_t kFirstFields = 9, kAllFields = 18;
}  // namespace

nlohmann::json schedule_to_json(const Schedule& s) {
  nlohmann::json j = nlohmann::json::array();
  const StageSchedule plain;
  for (const auto& st : s) {
    nlohmann::json e = {st.compute, st.tile_x, st.tile_y,       st.vector, st.parallel,
                        st.unroll,  st.order,  st.reduce_outer, st.storage};
    const bool extended = st.at != plain.at || st.at_outer != 0 || st.store_root != 0 ||
                          st.tile_c != 0 || st.outer_x != 0 || st.outer_y != 0 ||
                          st.vector_dim != 0 || st.unroll2 != 1 || st.rfactor != 0;
    if (extended) {
      for (int v : {st.at, st.at_outer, st.store_root, st.tile_c, st.outer_x, st.outer_y,
                    st.vector_dim, st.unroll2, st.rfactor})
        e.push_back(v);
    }
    j.push_back(e);
  }
  return j;
}

Schedule schedule_from_json(const nlohmann::json& j) {
  if (!j.is_array()) throw InputError("a schedule must be a JSON array of stages");
  Schedule s;
  for (const auto& e : j) {
    if (!e.is_array() || (e.size() != kFirstFields && e.size() != kAllFields))
      throw InputError("a stage schedule must be an array of 9 or 18 integers");
    for (const auto& v : e) {
      if (!v.is_number_integer()) throw InputError("a stage schedule must hold integers");
    }
    StageSchedule st;
    int* fields[kAllFields] = {
        &st.compute, &st.tile_x,       &st.tile_y,  &st.vector,     &st.parallel, &st.unroll,
        &st.order,   &st.reduce_outer, &st.storage, &st.at,         &st.at_outer, &st.store_root,
        &st.tile_c,  &st.outer_x,      &st.outer_y, &st.vector_dim, &st.unroll2,  &st.rfactor};
    for (size_t i = 0; i < e.size(); ++i) *fields[i] = e[i].get<int>();
    s.push_back(st);
  }
  return s;
}

std::vector<int> storage_minor_to_major(int storage, int ndims) {
  std::vector<int> m(static_cast<size_t>(ndims));
  for (int k = 0; k < ndims; ++k) m[k] = k;
  if (storage == 1 && ndims >= 2) std::swap(m[0], m[1]);
  if (storage == 2 && ndims >= 3) std::rotate(m.begin(), m.end() - 1, m.end());
  return m;
}

void encode_stage(const NodeInfo& node, int stage, const StageSchedule& s, float* out) {
  std::fill(out, out + kStageConfigWidth, -1.0f);
  out[8] = static_cast<float>(s.compute);
  if (s.compute == kInline) return;  // no loops and no storage of its own
  const auto m = storage_minor_to_major(s.storage, static_cast<int>(node.dims.size()));
  for (size_t k = 0; k < m.size() && k < 6; ++k) out[k] = static_cast<float>(m[k]);
  out[6] = static_cast<float>(s.tile_x > 0 ? code_of(s.tile_x, kTiles) : -1);
  out[7] = static_cast<float>(s.tile_y > 0 ? code_of(s.tile_y, kTiles) : -1);
  out[9] = static_cast<float>(code_of(s.vector, kVectors));
  out[10] = static_cast<float>(s.parallel);
  out[11] = static_cast<float>(code_of(s.unroll, kUnrolls));
  out[12] = static_cast<float>(s.order);
  out[13] = node.has_update ? static_cast<float>(s.reduce_outer) : -1.0f;
  if (s.compute == kAtTile) {
    out[14] = s.at < 0 ? 0.0f : static_cast<float>(std::clamp(s.at - stage, 1, 6));
    out[15] = static_cast<float>(s.at_outer);
    out[16] = static_cast<float>(s.store_root);
  }
  out[17] = static_cast<float>(s.tile_c > 0 ? code_of(s.tile_c, kChannelTiles) : -1);
  out[18] = static_cast<float>(s.outer_x > 0 ? code_of(s.outer_x, kOuterTiles) : -1);
  out[19] = static_cast<float>(s.outer_y > 0 ? code_of(s.outer_y, kOuterTiles) : -1);
  out[20] = static_cast<float>(s.vector_dim);
  out[21] = static_cast<float>(code_of(s.unroll2, kUnrolls));
  out[22] = static_cast<float>(s.rfactor > 0 ? code_of(s.rfactor, kRfactors) : -1);
}

void encode_tile(const ProgramInfo& p, const Schedule& s, float* out) {
  std::fill(out, out + 24, 0.0f);
  const NodeInfo& o = p.nodes[p.output()];
  const StageSchedule& so = s.back();
  double sum = 0, product = 1;
  for (size_t k = 0; k < o.dims.size() && k < 6; ++k) {
    double v = static_cast<double>(o.dims[k]);
    if (k == 0 && so.tile_x > 0) v = so.tile_x;
    if (k == 1 && so.tile_y > 0) v = so.tile_y;
    if (k == 2 && so.tile_c > 0) v = so.tile_c;
    out[k] = static_cast<float>(v);
    sum += v;
    product *= v;
  }
  out[6] = static_cast<float>(sum);
  out[7] = static_cast<float>(product);
  const float rest[6] = {static_cast<float>(so.vector * (so.vector_dim + 1)),
                         static_cast<float>(so.parallel + 1),
                         static_cast<float>(so.unroll * so.unroll2),
                         static_cast<float>(so.order + 1),
                         static_cast<float>(so.reduce_outer + 1),
                         static_cast<float>(so.storage + 1)};
  sum = 0;
  product = 1;
  for (int k = 0; k < 6; ++k) {
    out[8 + k] = rest[k];
    sum += rest[k];
    product *= rest[k];
  }
  out[14] = static_cast<float>(sum);
  out[15] = static_cast<float>(product);
  sum = 0;
  product = 1;
  for (size_t k = 0; k + 1 < s.size() && k < 6; ++k) {
    const float v = static_cast<float>(s[k].compute + 1);  // 1 inline, 2 root, 3 at tile
    out[16 + k] = v;
    sum += v;
    product *= v;
  }
  out[22] = static_cast<float>(sum);
  out[23] = static_cast<float>(product);
}

}  // namespace tcost::halide
