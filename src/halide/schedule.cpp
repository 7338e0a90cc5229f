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

const std::vector<int> kTiles = {8, 16, 32, 64, 128};
const std::vector<int> kVectors = {1, 4, 8, 16};
const std::vector<int> kUnrolls = {1, 2, 4};

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

bool may_compute_at_tile(const ProgramInfo& p, const std::vector<int>& compute_of_node, int v) {
  std::vector<int> cs;
  effective_consumers(p, compute_of_node, v, cs);
  for (int c : cs) {
    if (c != p.output() && compute_of_node[c] != kAtTile) return false;
  }
  return !cs.empty();
}

}  // namespace

bool StageSchedule::operator==(const StageSchedule& o) const {
  return compute == o.compute && tile_x == o.tile_x && tile_y == o.tile_y && vector == o.vector &&
         parallel == o.parallel && unroll == o.unroll && order == o.order &&
         reduce_outer == o.reduce_outer && storage == o.storage;
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
    std::vector<int> compute_of_node(p.nodes.size(), kRoot);
    // Consumers first, so that a producer knows where everything reading it is computed.
    for (size_t k = stages.size(); k-- > 0;) {
      const int v = stages[k];
      const NodeInfo& n = p.nodes[v];
      StageSchedule& st = s[k];
      const bool is_output = n.is_output;
      if (!is_output) {
        std::vector<int> where = {kRoot};
        if (!n.has_update) where.push_back(kInline);
        if (may_compute_at_tile(p, compute_of_node, v)) where.push_back(kAtTile);
        const int good = where.back() == kAtTile ? kAtTile : (n.has_update ? kRoot : kInline);
        st.compute = pick(rng, bias, good, where);
      }
      compute_of_node[v] = st.compute;
      if (st.compute == kInline) continue;
      const int64_t ex = n.dims.empty() ? 1 : n.dims[0];
      const int64_t ey = n.dims.size() > 1 ? n.dims[1] : 1;
      if (st.compute != kAtTile) {
        const auto tx = at_most(kTiles, ex);
        if (!tx.empty() && pick(rng, bias, true, {false, true})) {
          st.tile_x = pick(rng, bias, std::min(32, tx.back()), tx);
          if (n.dims.size() > 1) {
            const auto ty = at_most(kTiles, ey);
            st.tile_y = ty.empty() ? 0 : pick(rng, bias, ty.front(), ty);
            if (st.tile_y == 0) st.tile_x = 0;
          }
        }
        st.parallel = pick(rng, bias, true, {false, true});
      }
      const int64_t inner_x = st.tile_x > 0 ? st.tile_x : ex;
      const int64_t inner_y = st.tile_y > 0 ? st.tile_y : ey;
      const auto vs = at_most(kVectors, inner_x);
      st.vector = pick(rng, bias, vs.back() >= 8 ? 8 : vs.back(), vs);
      if (n.dims.size() > 1) st.unroll = pick(rng, bias, 1, at_most(kUnrolls, inner_y));
      const size_t loops = n.dims.size() + (st.tile_x > 0 ? (n.dims.size() > 1 ? 2 : 1) : 0);
      if (loops >= 4) st.order = pick(rng, bias, 0, {0, 1});
      if (n.has_update && n.update_over_pure) st.reduce_outer = pick(rng, bias, 1, {0, 1});
      if (!is_output && n.dims.size() > 1) {
        st.storage = pick(rng, bias, 0,
                          n.dims.size() > 2 ? std::vector<int>{0, 1, 2} : std::vector<int>{0, 1});
      }
    }
    const std::string key = schedule_key(s);
    if (seen.insert(key).second) out.push_back(std::move(s));
  }
  return out;
}

void check_schedule(const ProgramInfo& p, const Schedule& s) {
  const std::vector<int> stages = p.stages();
  if (s.size() != stages.size()) {
    throw InputError(fmt::format("{}: a schedule has {} stages, the program {}", p.instance,
                                 s.size(), stages.size()));
  }
  std::vector<int> compute_of_node(p.nodes.size(), kRoot);
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
    compute_of_node[v] = st.compute;
    if (st.compute == kAtTile && !may_compute_at_tile(p, compute_of_node, v))
      throw bad("computed at the output's tile but read outside it");
    if ((st.tile_x != 0 && code_of(st.tile_x, kTiles) < 0) ||
        (st.tile_y != 0 && code_of(st.tile_y, kTiles) < 0) || (st.tile_y != 0 && st.tile_x == 0))
      throw bad("tile sizes out of range");
    if (code_of(st.vector, kVectors) < 0) throw bad("vector width out of range");
    if (code_of(st.unroll, kUnrolls) < 0) throw bad("unroll factor out of range");
    if (st.order < 0 || st.order > 1 || st.reduce_outer < 0 || st.reduce_outer > 1)
      throw bad("loop order out of range");
    if (st.storage < 0 || st.storage > 2) throw bad("storage order out of range");
    if (n.is_output) {
      const int64_t ex = n.dims.empty() ? 1 : n.dims[0];
      const int64_t ey = n.dims.size() > 1 ? n.dims[1] : 1;
      if (st.tile_x > ex || st.tile_y > ey || st.vector > (st.tile_x > 0 ? st.tile_x : ex) ||
          st.unroll > (st.tile_y > 0 ? st.tile_y : ey))
        throw bad("tile, vector or unroll wider than the output");
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
                       st.tile_x, st.tile_y, st.vector, st.parallel ? 1 : 0, st.unroll, st.order,
                       st.reduce_outer, st.storage);
  }
  return out;
}

nlohmann::json schedule_to_json(const Schedule& s) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& st : s) {
    j.push_back({st.compute, st.tile_x, st.tile_y, st.vector, st.parallel ? 1 : 0, st.unroll,
                 st.order, st.reduce_outer, st.storage});
  }
  return j;
}

Schedule schedule_from_json(const nlohmann::json& j) {
  if (!j.is_array()) throw InputError("a schedule must be a JSON array of stages");
  Schedule s;
  for (const auto& e : j) {
    if (!e.is_array() || e.size() != 9)
      throw InputError("a stage schedule must be an array of 9 integers");
    for (const auto& v : e) {
      if (!v.is_number_integer()) throw InputError("a stage schedule must hold integers");
    }
    StageSchedule st;
    st.compute = e[0].get<int>();
    st.tile_x = e[1].get<int>();
    st.tile_y = e[2].get<int>();
    st.vector = e[3].get<int>();
    st.parallel = e[4].get<int>() != 0;
    st.unroll = e[5].get<int>();
    st.order = e[6].get<int>();
    st.reduce_outer = e[7].get<int>();
    st.storage = e[8].get<int>();
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

void encode_stage(const NodeInfo& node, const StageSchedule& s, float* out) {
  std::fill(out, out + kStageConfigWidth, -1.0f);
  out[8] = static_cast<float>(s.compute);
  if (s.compute == kInline) return;  // no loops and no storage of its own
  const auto m = storage_minor_to_major(s.storage, static_cast<int>(node.dims.size()));
  for (size_t k = 0; k < m.size() && k < 6; ++k) out[k] = static_cast<float>(m[k]);
  out[6] = static_cast<float>(s.tile_x > 0 ? code_of(s.tile_x, kTiles) : -1);
  out[7] = static_cast<float>(s.tile_y > 0 ? code_of(s.tile_y, kTiles) : -1);
  out[9] = static_cast<float>(code_of(s.vector, kVectors));
  out[10] = s.parallel ? 1.0f : 0.0f;
  out[11] = static_cast<float>(code_of(s.unroll, kUnrolls));
  out[12] = static_cast<float>(s.order);
  out[13] = node.has_update ? static_cast<float>(s.reduce_outer) : -1.0f;
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
    out[k] = static_cast<float>(v);
    sum += v;
    product *= v;
  }
  out[6] = static_cast<float>(sum);
  out[7] = static_cast<float>(product);
  const float rest[6] = {
      static_cast<float>(so.vector),           so.parallel ? 2.0f : 1.0f,
      static_cast<float>(so.unroll),           static_cast<float>(so.order + 1),
      static_cast<float>(so.reduce_outer + 1), static_cast<float>(so.storage + 1)};
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
