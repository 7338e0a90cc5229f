#include "halide/zoo.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "core/ast.h"
#include "core/error.h"
#include "core/opcodes.h"
#include "halide/zoo_impl.h"

namespace tcost::halide {
namespace {

using namespace Halide;
using zoo::Family;
using zoo::Program;

std::string instance_name(const Family& f, const std::vector<int>& shape) {
  std::string s = f.name + "_";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

// `fill_inputs`: give the inputs their seeded random values (only a program that runs needs them).
Program make_program(const std::string& instance, bool fill_inputs) {
  for (const Family& f : zoo::families()) {
    for (const auto& shape : f.shapes) {
      if (instance_name(f, shape) != instance) continue;
      Program p;
      p.info.instance = instance;
      p.info.family = f.name;
      p.info.single_kernel = f.single_kernel;
      zoo::Builder b(p, std::hash<std::string>{}(instance), fill_inputs);
      f.define(b, shape);
      TCOST_CHECK(!p.info.nodes.empty() && !p.info.nodes.back().is_input, "{}: no stages",
                  instance);
      // Output bounds are known: loop extents become constants (and features of the AST).
      Func out = p.funcs.back();
      const auto& dims = p.info.nodes.back().dims;
      const std::vector<Var> args = out.args();
      for (size_t k = 0; k < args.size(); ++k) out.bound(args[k], 0, static_cast<int>(dims[k]));
      return p;
    }
  }
  throw InputError(
      fmt::format("'{}' is not a program of the zoo (see tcost collect --list)", instance));
}

// Schedules one definition (pure or update) of a stage: tiles, loop order, vector, unroll,
// parallel. Returns the loop at which stages computed "at the output's tile" are placed.
// `guard`: splits guard their tails with an if (updates of the output: the default, rounding
// up, would write past the output buffer, which is compiled without bounds asserts).
VarOrRVar schedule_definition(Stage stage, const std::vector<Var>& vars,
                              const std::vector<RVar>& rvars, const StageSchedule& st, int tag,
                              bool guard) {
  const TailStrategy tail = guard ? TailStrategy::GuardWithIf : TailStrategy::Auto;
  std::vector<VarOrRVar> pure;  // innermost first
  const std::string t = std::to_string(tag);
  Var xo("xo" + t), xi("xi" + t), yo("yo" + t), yi("yi" + t);
  if (st.tile_x > 0 && vars.size() >= 2 && st.tile_y > 0) {
    stage.tile(vars[0], vars[1], xo, yo, xi, yi, st.tile_x, st.tile_y, tail);
    pure = {xi, yi, xo, yo};
    for (size_t k = 2; k < vars.size(); ++k) pure.push_back(vars[k]);
  } else if (st.tile_x > 0) {
    stage.split(vars[0], xo, xi, st.tile_x, tail);
    pure = {xi, xo};
    for (size_t k = 1; k < vars.size(); ++k) pure.push_back(vars[k]);
  } else {
    for (const Var& v : vars) pure.push_back(v);
  }
  if (st.order == 1 && pure.size() >= 4) std::reverse(pure.begin() + 2, pure.end());
  // Reduction loops innermost (Halide's default), or just outside the inner tile.
  std::vector<VarOrRVar> loops;
  const size_t inner = st.tile_y > 0 ? 2 : 1;
  if (st.reduce_outer == 1 && !rvars.empty()) {
    for (size_t k = 0; k < pure.size(); ++k) {
      if (k == std::min(inner, pure.size())) loops.insert(loops.end(), rvars.begin(), rvars.end());
      loops.push_back(pure[k]);
    }
    if (inner >= pure.size()) loops.insert(loops.end(), rvars.begin(), rvars.end());
  } else {
    loops.insert(loops.end(), rvars.begin(), rvars.end());
    loops.insert(loops.end(), pure.begin(), pure.end());
  }
  if (loops.size() >= 2) stage.reorder(loops);
  if (st.vector > 1) stage.vectorize(pure[0], st.vector, tail);
  if (st.unroll > 1 && pure.size() >= 2) stage.unroll(pure[1], st.unroll, tail);
  if (st.parallel) stage.parallel(pure.back());
  return st.tile_x > 0 ? VarOrRVar(xo) : pure.back();
}

void apply_schedule(Program& p, const Schedule& s) {
  check_schedule(p.info, s);
  const std::vector<int> stages = p.info.stages();
  Func out = p.funcs.back();
  // The output first: the loop where stages "at the output's tile" go is one of its loops.
  LoopLevel at_tile;
  for (size_t k = stages.size(); k-- > 0;) {
    const NodeInfo& n = p.info.nodes[stages[k]];
    Func f = p.funcs[stages[k]];
    const StageSchedule& st = s[k];
    const bool is_output = stages[k] == p.info.output();
    if (st.compute == kInline) {
      f.compute_inline();
      continue;
    }
    if (!is_output) {
      if (st.compute == kRoot) f.compute_root();
      if (st.compute == kAtTile) f.compute_at(at_tile);
    }
    const std::vector<Var> vars = f.args();
    if (!is_output && st.storage != 0) {
      const auto m = storage_minor_to_major(st.storage, static_cast<int>(vars.size()));
      std::vector<Var> order;
      for (int d : m) order.push_back(vars[d]);
      f.reorder_storage(order);
    }
    VarOrRVar loop = schedule_definition(Stage(f), vars, {}, st, 2 * static_cast<int>(k), false);
    if (n.update_over_pure) {
      for (int u = 0; u < f.num_update_definitions(); ++u) {
        loop = schedule_definition(f.update(u), vars, f.rvars(u), st,
                                   2 * static_cast<int>(k) + 1000 * (u + 1), is_output);
      }
    } else if (f.num_update_definitions() > 0) {
      // Scatters and scans keep Halide's default loops (serial, in order).
      for (int u = 0; u < f.num_update_definitions(); ++u) f.update(u).unscheduled();
      loop = VarOrRVar(vars.back());
    }
    if (is_output) at_tile = LoopLevel(f, loop);  // the last stage: the one reading producers
  }
}

Target jit_target() {
  // Halide's own autotuning loop disables LLVM's loop passes: compiling is faster and the code
  // as fast (measured on this project's machine, see REFERENCE.md). Bounds asserts are off in
  // measurements; TCOST_HALIDE_ASSERTS=1 turns them on, to find out-of-bounds accesses.
  Target t = get_jit_target_from_environment().with_feature(Target::DisableLLVMLoopOpt);
  const char* asserts = std::getenv("TCOST_HALIDE_ASSERTS");
  if (asserts == nullptr || std::string(asserts) != "1") t = t.with_feature(Target::NoAsserts);
  return t;
}

// Builds the syntax tree of a lowered statement (the AST schema of core/ast.h).
class TreeBuilder : public Internal::IRVisitor {
 public:
  // `closures`: the bodies of the module's parallel-loop closures by name; a call that runs one
  // across threads becomes a parallel loop node over the closure's body.
  TreeBuilder(int max_nodes, std::map<std::string, Internal::Stmt> closures)
      : max_nodes_(max_nodes), closures_(std::move(closures)) {
    add(kAstRoot, 0, 0, 0);
    stack_.push_back(0);
  }
  AstTree finish() {
    // Post-order facts: children counts, innermost loops, footprints.
    const size_t n = tree_.kinds.size();
    std::vector<int> children(n, 0);
    std::vector<bool> has_loop_below(n, false);
    std::vector<double> bytes_below(n, 0);
    for (size_t e = tree_.edges.size() / 2; e-- > 0;) {
      const int parent = tree_.edges[2 * e], child = tree_.edges[2 * e + 1];
      ++children[parent];
      const bool child_loop =
          tree_.kinds[child] >= kAstForSerial && tree_.kinds[child] <= kAstForUnrolled;
      has_loop_below[parent] = has_loop_below[parent] || child_loop || has_loop_below[child];
      const double child_bytes = bytes_below[child] + feat(child, kAstBytes);
      bytes_below[parent] += child_bytes * (child_loop ? extent_[child] : 1.0);
    }
    for (size_t v = 0; v < n; ++v) {
      feat(v, kAstChildren) = static_cast<float>(children[v]);
      const bool loop = tree_.kinds[v] >= kAstForSerial && tree_.kinds[v] <= kAstForUnrolled;
      if (loop) {
        feat(v, kAstInnermost) = has_loop_below[v] ? 0.0f : 1.0f;
        feat(v, kAstLogFootprint) = static_cast<float>(std::log2(1 + bytes_below[v] * extent_[v]));
      }
    }
    return std::move(tree_);
  }

 private:
  using IRVisitor::visit;
  float& feat(size_t v, int k) { return tree_.feats[v * kAstFeatureWidth + k]; }

  int add(int kind, double extent, double bytes, double unit_stride) {
    const int v = static_cast<int>(tree_.kinds.size());
    tree_.kinds.push_back(kind);
    tree_.feats.resize(tree_.feats.size() + kAstFeatureWidth, 0.0f);
    extent_.push_back(extent > 0 ? extent : 1);
    feat(v, kAstLogExtent) = static_cast<float>(std::log2(1 + extent));
    feat(v, kAstDepth) = static_cast<float>(stack_.size());
    feat(v, kAstLogTrips) = static_cast<float>(std::log2(1 + trips_));
    feat(v, kAstBytes) = static_cast<float>(bytes);
    feat(v, kAstUnitStride) = static_cast<float>(unit_stride);
    if (kind == kAstAllocate) feat(v, kAstLogFootprint) = static_cast<float>(std::log2(1 + bytes));
    if (!stack_.empty()) {
      tree_.edges.push_back(stack_.back());
      tree_.edges.push_back(v);
    }
    return v;
  }
  // Adds a node and visits the IR node's children below it (or, past the size cap, visits
  // nothing more).
  template <typename Node>
  void nest(const Node* op, int kind, double extent = 0, double bytes = 0, double unit = 0) {
    if (static_cast<int>(tree_.kinds.size()) >= max_nodes_) return;
    stack_.push_back(add(kind, extent, bytes, unit));
    const double saved = trips_;
    if (extent > 0) trips_ *= extent;
    IRVisitor::visit(op);
    trips_ = saved;
    stack_.pop_back();
  }
  static double unit_stride(const Expr& index) {
    if (const auto* r = index.as<Internal::Ramp>()) {
      const int64_t* s = Internal::as_const_int(r->stride);
      return s != nullptr && *s == 1 ? 1.0 : 0.0;
    }
    return 0.0;
  }
  static double access_bytes(Type t) { return static_cast<double>(t.bytes()) * t.lanes(); }

  void visit(const Internal::For* op) override {
    int kind = kAstOther;
    switch (op->for_type) {
      case Internal::ForType::Serial:
        kind = kAstForSerial;
        break;
      case Internal::ForType::Parallel:
        kind = kAstForParallel;
        break;
      case Internal::ForType::Vectorized:
        kind = kAstForVectorized;
        break;
      case Internal::ForType::Unrolled:
        kind = kAstForUnrolled;
        break;
      default:
        break;
    }
    const int64_t* e = Internal::as_const_int(Internal::simplify(op->extent));
    nest(op, kind, e != nullptr ? static_cast<double>(*e) : 1.0);
  }
  void visit(const Internal::Store* op) override {
    nest(op, kAstStore, 0, access_bytes(op->value.type()), unit_stride(op->index));
  }
  void visit(const Internal::Load* op) override {
    nest(op, kAstLoad, 0, access_bytes(op->type), unit_stride(op->index));
  }
  void visit(const Internal::Allocate* op) override {
    double bytes = static_cast<double>(op->type.bytes());
    for (const Expr& e : op->extents) {
      const int64_t* c = Internal::as_const_int(e);
      bytes *= c != nullptr ? static_cast<double>(*c) : 1.0;
    }
    nest(op, kAstAllocate, 0, bytes);
  }
  void visit(const Internal::ProducerConsumer* op) override { nest(op, kAstBlock); }
  // Arithmetic on values (float), not on indices: the computation itself.
  template <typename Node>
  void arith(const Node* op, int kind) {
    if (op->type.is_float()) {
      nest(op, kind);
    } else {
      IRVisitor::visit(op);
    }
  }
  void visit(const Internal::Add* op) override { arith(op, kAstAdd); }
  void visit(const Internal::Sub* op) override { arith(op, kAstAdd); }
  void visit(const Internal::Mul* op) override { arith(op, kAstMul); }
  void visit(const Internal::Div* op) override { arith(op, kAstMul); }
  void visit(const Internal::Min* op) override { arith(op, kAstMinMax); }
  void visit(const Internal::Max* op) override { arith(op, kAstMinMax); }
  void visit(const Internal::Select* op) override { arith(op, kAstSelect); }
  void visit(const Internal::Call* op) override {
    if (op->name == "halide_do_par_for" && op->args.size() >= 3) {
      const auto it = closures_.find(closure_name(op->args[0]));
      if (it != closures_.end() && static_cast<int>(tree_.kinds.size()) < max_nodes_) {
        const int64_t* e = Internal::as_const_int(Internal::simplify(op->args[2]));
        const double extent = e != nullptr ? static_cast<double>(*e) : 1.0;
        stack_.push_back(add(kAstForParallel, extent, 0, 0));
        const double saved = trips_;
        trips_ *= extent;
        it->second.accept(this);
        trips_ = saved;
        stack_.pop_back();
        return;
      }
    }
    arith(op, kAstCall);
  }
  // The closure a task call names: the first variable or call name under its casts.
  static std::string closure_name(const Expr& e) {
    std::string name;
    if (const auto* v = e.as<Internal::Variable>()) name = v->name;
    if (const auto* c = e.as<Internal::Call>()) {
      name = c->args.empty() ? c->name : closure_name(c->args[0]);
      if (name.empty()) name = c->name;
    }
    if (const auto* c = e.as<Internal::Cast>()) name = closure_name(c->value);
    while (!name.empty() && name[0] == ':') name.erase(0, 1);
    return name;
  }
  void visit(const Internal::IfThenElse* op) override { nest(op, kAstSelect); }

  int max_nodes_;
  std::map<std::string, Internal::Stmt> closures_;
  AstTree tree_;
  std::vector<int> stack_;
  std::vector<double> extent_;
  double trips_ = 1;
};

}  // namespace

std::vector<InstanceName> zoo_instances() {
  std::vector<InstanceName> out;
  for (const Family& f : zoo::families()) {
    for (const auto& shape : f.shapes) out.push_back({instance_name(f, shape), f.name, f.split});
  }
  return out;
}

std::vector<std::string> zoo_families() {
  std::vector<std::string> out;
  for (const Family& f : zoo::families()) out.push_back(f.name);
  return out;
}

ProgramInfo describe(const std::string& instance) { return make_program(instance, false).info; }

std::string jit_target_name() { return jit_target().to_string(); }

std::function<void()> build(const std::string& instance, const Schedule& s, int threads) {
  // Halide's thread pool reads HL_NUM_THREADS when it starts: a fixed thread count for every
  // measurement (set in the measuring child process before the first run).
  setenv("HL_NUM_THREADS", std::to_string(threads).c_str(), 1);
  try {
    auto p = std::make_shared<Program>(make_program(instance, true));
    apply_schedule(*p, s);
    std::vector<int> extents;
    for (int64_t d : p->info.nodes.back().dims) extents.push_back(static_cast<int>(d));
    auto out = std::make_shared<Buffer<float>>(extents);
    auto pipeline = std::make_shared<Pipeline>(p->funcs.back());
    pipeline->compile_jit(jit_target());
    return [pipeline, p, out] { pipeline->realize(*out); };
  } catch (const Halide::Error& e) {
    throw std::runtime_error(std::string("Halide rejected the schedule: ") + e.what());
  }
}

AstTree lower_ast(const std::string& instance, const Schedule& s, int max_nodes) {
  try {
    Program p = make_program(instance, false);
    apply_schedule(p, s);
    Pipeline pipeline(p.funcs.back());
    const Module m = pipeline.compile_to_module({}, "tcost_program", jit_target());
    std::map<std::string, Internal::Stmt> closures;
    for (const auto& fn : m.functions()) {
      if (fn.name != "tcost_program") closures[fn.name] = fn.body;
    }
    for (const auto& fn : m.functions()) {
      if (fn.name != "tcost_program") continue;
      TreeBuilder tb(max_nodes, closures);
      fn.body.accept(&tb);
      return tb.finish();
    }
    throw InternalError("lowering produced no function");
  } catch (const Halide::Error& e) {
    throw InputError(fmt::format("{}: Halide rejected the schedule: {}", instance, e.what()));
  }
}

namespace zoo {

Buffer<float> Builder::input(const std::string& name, const std::vector<int>& dims, float lo,
                             float hi) {
  // Slack: 64 columns after x, 16 rows before and after y (a tail shifted inwards over a region
  // smaller than its split factor starts before row 0).
  std::vector<int> alloc = dims;
  alloc[0] += 64;
  if (alloc.size() > 1) alloc[1] += 32;
  Buffer<float> b(alloc, name);
  if (alloc.size() > 1) b.translate(1, -16);
  if (fill_) {
    std::mt19937 rng(static_cast<uint32_t>(seed_ + p_.inputs.size() * 7919));
    std::uniform_real_distribution<float> u(lo, hi);
    b.for_each_value([&](float& v) { v = u(rng); });
  }
  NodeInfo n;
  n.name = name;
  n.opcode = op::kParameter;
  n.is_input = true;
  n.dims.assign(dims.begin(), dims.end());
  p_.info.nodes.push_back(n);
  p_.funcs.emplace_back();
  p_.inputs.push_back(b);
  return b;
}

int Builder::node_id(const std::string& name) const {
  for (size_t i = 0; i < p_.info.nodes.size(); ++i) {
    if (p_.info.nodes[i].name == name) return static_cast<int>(i);
  }
  throw InternalError(fmt::format("{}: no node named '{}'", p_.info.instance, name));
}

Func Builder::stage(Func f, const std::string& opcode, const std::vector<int>& dims,
                    const std::vector<std::string>& producers, const StageOptions& o) {
  NodeInfo n;
  // Halide makes a repeated Func name unique ("scores$1"): the node keeps the given name.
  n.name = f.name().substr(0, f.name().find('$'));
  n.opcode = opcode_id(opcode);
  TCOST_CHECK(n.opcode > 0, "unknown opcode {}", opcode);
  TCOST_CHECK(static_cast<int>(dims.size()) == f.dimensions(), "{}: dims", n.name);
  n.dims.assign(dims.begin(), dims.end());
  for (const auto& q : producers) n.producers.push_back(node_id(q));
  n.reduction = o.reduction;
  n.window = o.window;
  n.stride = o.stride;
  n.has_update = f.has_update_definition();
  n.update_over_pure = o.update_over_pure;
  p_.info.nodes.push_back(n);
  p_.funcs.push_back(f);
  return f;
}

}  // namespace zoo
}  // namespace tcost::halide
