// Syntax trees of lowered programs (the AST schema of core/ast.h): the lowered statement of a
// Program under a schedule, walked with Halide's IRVisitor. Loops carry their kind (serial,
// parallel, vectorised, unrolled) and constant extents; parallel closures are stitched back
// under their loop; loads and stores carry bytes, unit stride and their strides along the two
// innermost enclosing loops (the index, with its lets expanded, differenced in the loop's
// variable; a difference that varies along the loops averaged over sampled points of their
// ranges; a closure's reads of its caller's values and the outputs' buffer queries resolved
// to the values tcost runs with); arithmetic on values (float anywhere, integer in a stored value
// outside indices) carries its lanes and bits; allocations their size.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "core/ast.h"
#include "core/error.h"
#include "halide/program_halide.h"

namespace tcost::halide {
namespace {

using namespace Halide;

// A parallel loop's closure: its body, its loop variable and the argument through which it
// reads its caller's values (load_typed_struct_member of the struct the call passes).
struct Closure {
  Internal::Stmt body;
  std::string loop_var, arg;
};

// An output's buffer as tcost runs it, per dimension: (min, extent, stride)
// (Program::Impl::output_layout).
using OutputBuffer = std::vector<std::array<int64_t, 3>>;

// Facts of a value node: lanes and bits of its type; for loads and stores, strides.
struct Access {
  int lanes = 0, bits = 0;
  double stride = 0, outer_stride = 0;  // log2(1 + |elements|), -1 when not constant
};

// Builds the syntax tree of a lowered statement (the AST schema of core/ast.h).
class TreeBuilder : public Internal::IRVisitor {
 public:
  // `closures`: the module's parallel-loop closures by name; a call that runs one across
  // threads becomes a parallel loop node over the closure's body.
  // `outputs`: the outputs' buffers by name, as the IR names them (without ".buffer"): their
  // queries (strides, minima, extents; unknown when compiled, the caller passes the buffers)
  // read as the values tcost runs them with.
  TreeBuilder(int max_nodes, std::map<std::string, Closure> closures,
              std::map<std::string, OutputBuffer> outputs)
      : max_nodes_(max_nodes), closures_(std::move(closures)), outputs_(std::move(outputs)) {
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

  int add(int kind, double extent, double bytes, double unit_stride, const Access& a = {}) {
    const int v = static_cast<int>(tree_.kinds.size());
    tree_.kinds.push_back(kind);
    tree_.feats.resize(tree_.feats.size() + kAstFeatureWidth, 0.0f);
    extent_.push_back(extent > 0 ? extent : 1);
    feat(v, kAstLogExtent) = static_cast<float>(std::log2(1 + extent));
    feat(v, kAstDepth) = static_cast<float>(stack_.size());
    feat(v, kAstLogTrips) = static_cast<float>(std::log2(1 + trips_));
    feat(v, kAstBytes) = static_cast<float>(bytes);
    feat(v, kAstUnitStride) = static_cast<float>(unit_stride);
    feat(v, kAstLogStride) = static_cast<float>(a.stride);
    feat(v, kAstLogOuterStride) = static_cast<float>(a.outer_stride);
    feat(v, kAstLanes) = static_cast<float>(a.lanes);
    feat(v, kAstTypeBits) = static_cast<float>(a.bits);
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
  void nest(const Node* op, int kind, double extent = 0, double bytes = 0, const Access& a = {}) {
    if (full()) return;
    stack_.push_back(add(kind, extent, bytes, 0, a));
    const double saved = trips_;
    if (extent > 0) trips_ *= extent;
    IRVisitor::visit(op);
    trips_ = saved;
    stack_.pop_back();
  }
  bool full() const { return static_cast<int>(tree_.kinds.size()) >= max_nodes_; }
  static Access value_of(Type t) { return {t.lanes(), t.bits()}; }
  // A load or store: its node, then its index (integer arithmetic there is addressing, not
  // computation) and, for a store, the value it stores.
  void access(int kind, Type t, const Expr& index, const Expr& value) {
    if (full()) return;
    Access a = value_of(t);
    const Expr base = expanded_base(index);
    a.stride = log_stride(base, 1);
    a.outer_stride = log_stride(base, 2);
    stack_.push_back(add(kind, 0, access_bytes(t), unit_stride(index), a));
    ++in_index_;
    index.accept(this);
    --in_index_;
    if (value.defined()) {
      const int saved = in_index_;
      in_index_ = 0;
      ++in_value_;
      value.accept(this);
      --in_value_;
      in_index_ = saved;
    }
    stack_.pop_back();
  }
  // An index as the loops see it: a vector index by its first lane, the lets in scope expanded.
  // Since lowering 4 the first lane of any vector index (a ramp of ramps from two vectorised
  // dimensions, a shuffle), where a ramp's or broadcast's base was taken once, and the rest
  // had a stride of -1.
  Expr expanded_base(const Expr& index) const {
    Expr base = index;
    while (base.type().is_vector()) {
      if (const auto* r = base.as<Internal::Ramp>()) {
        base = r->base;
      } else if (const auto* b = base.as<Internal::Broadcast>()) {
        base = b->value;
      } else {
        base = Internal::extract_lane(base, 0);
        break;
      }
    }
    return expanded(base);
  }
  // Since lowering 4 (2026-12-07), expressions read what the IR leaves to run time as the
  // values tcost runs with: a closure's reads of its caller's values (load_typed_struct_member
  // of the struct the caller made) as those values, and the outputs' buffer queries as their
  // strides, minima and extents. Before, a stride or an extent that used them was unknown.
  class Resolve : public Internal::IRMutator {
   public:
    explicit Resolve(const std::map<std::string, OutputBuffer>& outputs) : outputs_(outputs) {}

   private:
    using IRMutator::visit;
    Expr visit(const Internal::Call* op) override {
      if (op->is_intrinsic(Internal::Call::load_typed_struct_member) && op->args.size() == 3) {
        const auto* made = strip(mutate(op->args[0])).as<Internal::Call>();
        const int64_t* k = Internal::as_const_int(op->args[2]);
        if (made != nullptr && made->is_intrinsic(Internal::Call::make_struct) && k != nullptr &&
            *k >= 0 && *k < static_cast<int64_t>(made->args.size()) &&
            made->args[*k].type() == op->type) {
          return made->args[*k];
        }
      }
      static const std::map<std::string, int> kQueries = {{"_halide_buffer_get_min", 0},
                                                          {"_halide_buffer_get_extent", 1},
                                                          {"_halide_buffer_get_stride", 2}};
      const auto q = kQueries.find(op->name);
      if (q != kQueries.end() && op->args.size() == 2) {
        const auto it = outputs_.find(buffer_name(op->args[0]));
        const int64_t* k = Internal::as_const_int(op->args[1]);
        if (it != outputs_.end() && k != nullptr && *k >= 0 &&
            *k < static_cast<int64_t>(it->second.size())) {
          return Internal::make_const(op->type, it->second[*k][q->second]);
        }
      }
      return IRMutator::visit(op);
    }
    // `e` without the casts and reinterprets around it.
    static Expr strip(const Expr& e) {
      if (const auto* c = e.as<Internal::Cast>()) return strip(c->value);
      const auto* c = e.as<Internal::Call>();
      if (c != nullptr && c->is_intrinsic(Internal::Call::reinterpret) && c->args.size() == 1) {
        return strip(c->args[0]);
      }
      return e;
    }
    // The buffer a buffer query names: the variable under its casts, without ".buffer".
    static std::string buffer_name(const Expr& e) {
      const auto* v = strip(e).as<Internal::Variable>();
      static const std::string kSuffix = ".buffer";
      if (v == nullptr || !Internal::ends_with(v->name, kSuffix)) return std::string();
      return v->name.substr(0, v->name.size() - kSuffix.size());
    }
    const std::map<std::string, OutputBuffer>& outputs_;
  };
  // log2(1 + |s|), s the elements `base` (expanded_base) moves when the `k`-th innermost
  // enclosing loop's variable steps by one; where s varies along the loops, its mean
  // magnitude over sampled points (sampled_mean_abs); -1 when s depends on loaded data.
  double log_stride(const Expr& base, size_t k) const {
    if (loop_vars_.size() < k) return 0;
    const std::string& var = loop_vars_[loop_vars_.size() - k];
    if (!Internal::expr_uses_var(base, var)) return 0;
    if (!base.type().is_scalar()) return -1;
    // Loop variables are 32-bit integers.
    const Expr step = Internal::Variable::make(Int(32), var) + 1;
    const Expr d = Internal::simplify(Internal::substitute(var, step, base) - base);
    if (const int64_t* s = Internal::as_const_int(d)) {
      return std::log2(1.0 + std::fabs(static_cast<double>(*s)));
    }
    const std::optional<double> mean = sampled_mean_abs(d);
    return mean ? std::log2(1.0 + *mean) : -1.0;
  }
  // The mean of |d| over kStrideSamples points of the enclosing loops' ranges, when d folds
  // to a constant at each (a step that varies along the loops: x / 2 upsampling, a tail's
  // min(x.o * 8, extent - 8), coordinates computed in floats); none when it does not (it
  // reads loaded data: a gather, a scatter). The points are spread over each loop's range,
  // staggered from loop to loop; a loop without a finite range sits at its minimum (or 0).
  static constexpr int kStrideSamples = 8;
  std::optional<double> sampled_mean_abs(const Expr& d) const {
    double sum = 0;
    for (int j = 0; j < kStrideSamples; ++j) {
      std::map<std::string, Expr> point;
      for (size_t i = 0; i < loop_vars_.size(); ++i) {
        const Internal::Interval r = ranges_.get(loop_vars_[i]);
        const int64_t* lo = r.has_lower_bound() ? Internal::as_const_int(r.min) : nullptr;
        const int64_t* hi = r.has_upper_bound() ? Internal::as_const_int(r.max) : nullptr;
        int64_t v = lo != nullptr ? *lo : 0;
        if (lo != nullptr && hi != nullptr && *hi > *lo) {
          const double f = std::fmod((j + 0.5) / kStrideSamples + 0.618034 * i, 1.0);
          v = std::min(*hi, *lo + static_cast<int64_t>(f * static_cast<double>(*hi - *lo + 1)));
        }
        point[loop_vars_[i]] = Internal::make_const(Int(32), v);
      }
      const int64_t* s = Internal::as_const_int(Internal::simplify(Internal::substitute(point, d)));
      if (s == nullptr) return std::nullopt;
      sum += std::fabs(static_cast<double>(*s));
    }
    return sum / kStrideSamples;
  }
  // `e` with the lets in scope expanded, and what it reads at run time resolved (Resolve).
  Expr expanded(const Expr& e) const {
    return Resolve(outputs_).mutate(lets_.empty() ? e : Internal::substitute(lets_, e));
  }
  // A constant upper bound of the integer `e` (a loop extent or an allocation's size) over the
  // ranges of the enclosing loops' variables: an extent that depends on where the loop runs
  // (a producer computed inside a consumer's tile whose region needs min/max, a tail) counts
  // at its largest. Halide's bounds give up on some lets whose value is correlated with the
  // body (a region's min and max over a fused variable); those are tried again with the lets
  // substituted. None when no bound is found (a data-dependent extent).
  std::optional<int64_t> constant_upper_bound(const Expr& e) const {
    const Expr x = Internal::simplify(expanded(e));
    if (const int64_t* c = Internal::as_const_int(x)) return *c;
    Expr b = Internal::find_constant_bound(x, Internal::Direction::Upper, ranges_);
    if (!b.defined()) {
      b = Internal::find_constant_bound(Internal::substitute_in_all_lets(x),
                                        Internal::Direction::Upper, ranges_);
    }
    const int64_t* c = b.defined() ? Internal::as_const_int(Internal::simplify(b)) : nullptr;
    return c != nullptr ? std::optional<int64_t>(*c) : std::nullopt;
  }
  // The extent counted for `e`: its constant upper bound, at least 1 (1 when unbounded).
  static double counted(std::optional<int64_t> bound) {
    return bound && *bound > 0 ? static_cast<double>(*bound) : 1.0;
  }
  // Runs `body` inside a loop over `var` from `min` (lets expanded) for at most `bound`
  // iterations, the variable's constant range known to the bounds inside (unbounded above
  // when the loop's extent or its minimum has no bound).
  template <typename F>
  void in_loop(const std::string& var, const Expr& min, std::optional<int64_t> bound, F&& body) {
    const Expr m = Internal::simplify(expanded(min));
    Expr lo = Internal::find_constant_bound(m, Internal::Direction::Lower, ranges_);
    Expr hi = Internal::find_constant_bound(m, Internal::Direction::Upper, ranges_);
    if (!lo.defined()) lo = Internal::Interval::neg_inf();
    hi = hi.defined() && bound ? Internal::simplify(hi + static_cast<int>(counted(bound)) - 1)
                               : Internal::Interval::pos_inf();
    ranges_.push(var, Internal::Interval(lo, hi));
    loop_vars_.push_back(var);
    body();
    loop_vars_.pop_back();
    ranges_.pop(var);
  }
  // Runs `body` with `name` bound to `value`, its own lets expanded, for the strides.
  template <typename F>
  void with_let(const std::string& name, const Expr& value, F&& body) {
    const auto old = lets_.find(name);
    const Expr saved = old != lets_.end() ? old->second : Expr();
    lets_[name] = expanded(value);
    body();
    if (saved.defined()) {
      lets_[name] = saved;
    } else {
      lets_.erase(name);
    }
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
    const std::optional<int64_t> bound = constant_upper_bound(op->extent);
    in_loop(op->name, op->min, bound, [&] { nest(op, kind, counted(bound)); });
  }
  void visit(const Internal::Store* op) override {
    access(kAstStore, op->value.type(), op->index, op->value);
  }
  void visit(const Internal::Load* op) override { access(kAstLoad, op->type, op->index, Expr()); }
  void visit(const Internal::LetStmt* op) override {
    op->value.accept(this);
    with_let(op->name, op->value, [&] { op->body.accept(this); });
  }
  void visit(const Internal::Let* op) override {
    op->value.accept(this);
    with_let(op->name, op->value, [&] { op->body.accept(this); });
  }
  void visit(const Internal::Allocate* op) override {
    double bytes = static_cast<double>(op->type.bytes());
    for (const Expr& e : op->extents) bytes *= counted(constant_upper_bound(e));
    nest(op, kAstAllocate, 0, bytes);
  }
  void visit(const Internal::ProducerConsumer* op) override { nest(op, kAstBlock); }
  // Arithmetic on values (float, or integer in a stored value outside any index), not on
  // indices: the computation itself.
  template <typename Node>
  void arith(const Node* op, int kind) {
    if (op->type.is_float() || (in_value_ > 0 && in_index_ == 0)) {
      nest(op, kind, 0, 0, value_of(op->type));
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
      if (it != closures_.end() && !full()) {
        const std::optional<int64_t> bound = constant_upper_bound(op->args[2]);
        const double extent = counted(bound);
        stack_.push_back(add(kAstForParallel, extent, 0, 0));
        const double saved = trips_;
        trips_ *= extent;
        // The closure's body sees none of the caller's lets: it unpacks its own from the struct
        // the call passes (its argument: the caller's values). Its loop variable's range is
        // the caller's (the call's minimum and extent).
        const Expr min = expanded(op->args[1]);
        std::map<std::string, Expr> outer;
        if (op->args.size() >= 4 && !it->second.arg.empty()) {
          outer[it->second.arg] = expanded(op->args[3]);
        }
        std::swap(outer, lets_);
        in_loop(it->second.loop_var, min, bound, [&] { it->second.body.accept(this); });
        std::swap(outer, lets_);
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
  std::map<std::string, Closure> closures_;
  std::map<std::string, OutputBuffer> outputs_;
  std::map<std::string, Expr> lets_;    // the lets in scope, each with its own lets expanded
  std::vector<std::string> loop_vars_;  // enclosing loops' variables, innermost last
  Internal::Scope<Internal::Interval> ranges_;  // their constant ranges (or infinite ends)
  int in_index_ = 0, in_value_ = 0;             // inside an index; inside a stored value
  AstTree tree_;
  std::vector<int> stack_;
  std::vector<double> extent_;
  double trips_ = 1;
};

// The program lowered under `s` for `target`: a Module whose function "tcost_program" runs the
// pipeline, beside the closures of its parallel loops (nothing compiled further). InputError
// when Halide rejects the schedule.
Module lowered(const Program& program, const Schedule& s, const Target& target) {
  try {
    apply_schedule(program, s);
    Pipeline pipeline(program.impl().outputs);
    return pipeline.compile_to_module(pipeline.infer_arguments(), "tcost_program", target);
  } catch (const Halide::Error& e) {
    throw InputError(fmt::format("{}: Halide rejected the schedule: {}", program.name(), e.what()));
  }
}

}  // namespace

AstTree lower_ast(const Program& program, const Schedule& s, int max_nodes) {
  const Module m = lowered(program, s, program.impl().target);
  std::map<std::string, Closure> closures;
  for (const auto& fn : m.functions()) {
    if (fn.name == "tcost_program") continue;
    Closure& c = closures[fn.name];
    c.body = fn.body;
    if (fn.args.size() >= 2) c.loop_var = fn.args[1].name;
    if (fn.args.size() >= 3) c.arg = fn.args[2].name;
  }
  // The outputs' buffers as tcost allocates them; a Tuple's values are buffers NAME.0, ...
  std::map<std::string, OutputBuffer> outputs;
  const Program::Impl& p = program.impl();
  for (size_t i = 0; i < p.outputs.size() && i < p.output_regions.size(); ++i) {
    const OutputBuffer b = p.output_layout(i);
    const std::string name = p.outputs[i].name();
    const int values = p.outputs[i].function().outputs();
    if (values == 1) outputs[name] = b;
    for (int j = 0; values > 1 && j < values; ++j) outputs[fmt::format("{}.{}", name, j)] = b;
  }
  for (const auto& fn : m.functions()) {
    if (fn.name != "tcost_program") continue;
    TreeBuilder tb(max_nodes, closures, outputs);
    fn.body.accept(&tb);
    return tb.finish();
  }
  throw InternalError("lowering produced no function");
}

namespace {

// The checks of a lowered statement (with Halide's asserts on) that an input buffer is read
// within its bounds: per input and dimension, the region the pipeline touches.
class BoundsChecks : public Internal::IRVisitor {
 public:
  struct Touched {
    std::string buffer;
    int dim = 0;
    Expr min, max;   // the region touched, as lowered
    Expr in_bounds;  // the assert's condition
  };
  std::vector<Touched> touched;

 private:
  using IRVisitor::visit;
  void visit(const Internal::AssertStmt* op) override {
    // Halide's message: halide_error_access_out_of_bounds("Input buffer NAME", dim, min
    // touched, max touched, min valid, max valid).
    static const std::string kInput = "Input buffer ";
    const auto* call = op->message.as<Internal::Call>();
    if (call != nullptr && call->name == "halide_error_access_out_of_bounds" &&
        call->args.size() == 6) {
      const auto* name = call->args[0].as<Internal::StringImm>();
      const auto* dim = call->args[1].as<Internal::IntImm>();
      if (name != nullptr && dim != nullptr && name->value.rfind(kInput, 0) == 0)
        touched.push_back({name->value.substr(kInput.size()), static_cast<int>(dim->value),
                           call->args[2], call->args[3], op->condition});
    }
    IRVisitor::visit(op);
  }
};

}  // namespace

std::vector<std::string> reads_outside_inputs(const Program& program, const Schedule& s) {
  Program::Impl& p = program.impl();
  p.bind_inputs();
  BoundsChecks checks;
  const Module m = lowered(program, s, p.target.without_feature(Target::NoAsserts));
  for (const auto& fn : m.functions()) fn.body.accept(&checks);
  std::vector<std::string> outside;
  for (const auto& t : checks.touched) {
    const Buffer<>* b = nullptr;
    for (const auto& candidate : p.buffers) {
      if (candidate.name() == t.buffer) b = &candidate;
    }
    if (b == nullptr || t.dim < 0 || t.dim >= b->dimensions()) continue;  // not an input's
    const Expr lo = Internal::simplify(t.min), hi = Internal::simplify(t.max);
    const int64_t* min = Internal::as_const_int(lo);
    const int64_t* max = Internal::as_const_int(hi);
    const int held_min = b->dim(t.dim).min(), held_max = b->dim(t.dim).max();
    if (min != nullptr && max != nullptr) {
      if (*min < held_min || *max > held_max)
        outside.push_back(
            fmt::format("{} is read over [{}, {}] in dimension {}, its buffer holds "
                        "[{}, {}]",
                        t.buffer, *min, *max, t.dim, held_min, held_max));
    } else if (Internal::is_const_zero(Internal::simplify(t.in_bounds))) {
      outside.push_back(
          fmt::format("{} is read outside its buffer in dimension {}", t.buffer, t.dim));
    }
  }
  return outside;
}

}  // namespace tcost::halide
