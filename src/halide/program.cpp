// Programs from Halide pipelines: the description derived from the IR, schedules applied in
// place, JIT builds and runs. Map:
//   InputFinder / estimates_map  - the inputs and parameters a pipeline reads; their estimates
//                                  as substitutions.
//   callee_boxes                 - bounds inference of one definition; make_program runs it
//                                  consumers first from the outputs' estimates.
//   OpCounter / access_facts     - operation counts by kind; stencil windows and strides.
//   classify                     - the HLO opcode class of a stage, from its definitions.
//   make_program                 - all of the above into a Program.
//   apply (Source)               - a schedule applied to the Funcs, optionally written as C++.
//   compile / run_output / schedule_workload / autoschedule_workload.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.h"
#include "core/opcodes.h"
#include "halide/arena.h"
#include "halide/program_halide.h"
#include "halide/spin_pool.h"

namespace tcost::halide {

using namespace Halide;
using Internal::Call;
using Internal::Function;
using Internal::Interval;
using Internal::Scope;

std::vector<int> ProgramInfo::stages() const {
  std::vector<int> out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!nodes[i].is_input) out.push_back(static_cast<int>(i));
  }
  return out;
}

std::vector<int> ProgramInfo::outputs() const {
  std::vector<int> out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].is_output) out.push_back(static_cast<int>(i));
  }
  return out;
}

int ProgramInfo::output() const {
  const auto o = outputs();
  return o.empty() ? static_cast<int>(nodes.size()) - 1 : o.back();
}

std::vector<int> ProgramInfo::consumers(int v) const {
  std::vector<int> out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (std::find(nodes[i].producers.begin(), nodes[i].producers.end(), v) !=
        nodes[i].producers.end())
      out.push_back(static_cast<int>(i));
  }
  return out;
}

Program::Program(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
const ProgramInfo& Program::info() const { return impl_->info; }

namespace {

bool is_load(const Call* c) {
  return c != nullptr && (c->call_type == Call::Halide || c->call_type == Call::Image);
}

// The names of the stages and inputs an expression reads.
class LoadFinder : public Internal::IRVisitor {
 public:
  std::set<std::string> names;

 private:
  using IRVisitor::visit;
  void visit(const Call* op) override {
    if (is_load(op)) names.insert(op->name);
    IRVisitor::visit(op);
  }
};

std::set<std::string> loads_in(const Expr& e) {
  LoadFinder f;
  e.accept(&f);
  return f.names;
}

// Every expression of a definition: values, left-hand-side arguments, predicate, and the
// bounds of its reduction domain.
std::vector<Expr> definition_exprs(const Internal::Definition& d) {
  std::vector<Expr> out = d.values();
  for (const Expr& a : d.args()) out.push_back(a);
  if (d.predicate().defined()) out.push_back(d.predicate());
  for (const auto& rv : d.schedule().rvars()) {
    out.push_back(rv.min);
    out.push_back(rv.extent);
  }
  return out;
}

std::vector<const Internal::Definition*> definitions(const Function& f) {
  std::vector<const Internal::Definition*> out = {&f.definition()};
  for (const auto& u : f.updates()) out.push_back(&u);
  return out;
}

// The inputs and parameters an expression reads.
class InputFinder : public Internal::IRGraphVisitor {
 public:
  std::vector<std::string> images;  // in order of first read
  std::map<std::string, Internal::Parameter> image_params, scalar_params;
  std::map<std::string, Buffer<>> buffers;

 private:
  using IRGraphVisitor::visit;
  void visit(const Call* op) override {
    if (op->call_type == Call::Image) {
      if (std::find(images.begin(), images.end(), op->name) == images.end())
        images.push_back(op->name);
      if (op->param.defined()) image_params[op->name] = op->param;
      if (op->image.defined()) buffers[op->name] = op->image;
    }
    IRGraphVisitor::visit(op);
  }
  void visit(const Internal::Variable* op) override {
    if (op->param.defined()) {
      (op->param.is_buffer() ? image_params : scalar_params)[op->param.name()] = op->param;
    }
  }
};

// Substitutions for every parameter the pipeline reads: scalar params by their estimates,
// buffer params' min/extent by their dimension estimates, concrete buffers by their shape.
std::map<std::string, Expr> estimates_map(const InputFinder& in) {
  std::map<std::string, Expr> m;
  for (const auto& [name, p] : in.scalar_params) {
    if (p.estimate().defined()) m[name] = p.estimate();
  }
  for (const auto& [name, p] : in.image_params) {
    for (int d = 0; d < p.dimensions(); ++d) {
      if (p.min_constraint_estimate(d).defined())
        m[fmt::format("{}.min.{}", name, d)] = p.min_constraint_estimate(d);
      if (p.extent_constraint_estimate(d).defined())
        m[fmt::format("{}.extent.{}", name, d)] = p.extent_constraint_estimate(d);
    }
  }
  for (const auto& [name, b] : in.buffers) {
    for (int d = 0; d < b.dimensions(); ++d) {
      m[fmt::format("{}.min.{}", name, d)] = b.dim(d).min();
      m[fmt::format("{}.extent.{}", name, d)] = b.dim(d).extent();
      m[fmt::format("{}.stride.{}", name, d)] = b.dim(d).stride();
    }
  }
  return m;
}

std::string to_text(const Expr& e) {
  std::ostringstream out;
  out << e;
  return out.str();
}

int64_t const_value(const Expr& e, const std::map<std::string, Expr>& params,
                    const std::string& what) {
  if (!e.defined()) throw InputError(fmt::format("{}: unbounded", what));
  const Expr s = Internal::simplify(Internal::substitute(params, e));
  if (const int64_t* v = Internal::as_const_int(s)) return *v;
  if (const uint64_t* v = Internal::as_const_uint(s)) return static_cast<int64_t>(*v);
  throw InputError(fmt::format(
      "{}: not a constant ({}); give every input, output and scalar parameter an estimate", what,
      to_text(s)));
}

using Region = std::vector<std::pair<int64_t, int64_t>>;  // (min, max) per dimension

void push_region(const Function& f, const Region& r, Scope<Interval>& s) {
  for (size_t k = 0; k < f.args().size() && k < r.size(); ++k)
    s.push(f.args()[k],
           Interval(Expr(static_cast<int>(r[k].first)), Expr(static_cast<int>(r[k].second))));
}

// Adds `box` to the boxes of `name` (their union).
void merge_box(std::map<std::string, Internal::Box>& boxes, const std::string& name,
               const Internal::Box& box) {
  const auto it = boxes.find(name);
  boxes[name] = it == boxes.end() ? box : Internal::box_union(it->second, box);
}

// Boxes of every callee over one definition of f, with the pure variables ranging over `scope`
// (single points, or the whole region) and reduction variables over their domains.
std::map<std::string, Internal::Box> callee_boxes(const Function& f, const Internal::Definition& d,
                                                  const Scope<Interval>& outer,
                                                  const std::map<std::string, Expr>& params) {
  Scope<Interval> scope;
  scope.set_containing_scope(&outer);
  for (const auto& rv : d.schedule().rvars()) {
    const Expr lo = Internal::simplify(Internal::substitute(params, rv.min));
    const Expr hi = Internal::simplify(Internal::substitute(params, rv.min + rv.extent - 1));
    scope.push(rv.var, Interval(lo, hi));
  }
  std::map<std::string, Internal::Box> out;
  for (const Expr& e : definition_exprs(d)) {
    for (auto& [name, box] : Internal::boxes_required(Internal::substitute(params, e), scope)) {
      if (name != f.name()) merge_box(out, name, box);
    }
  }
  return out;
}

// Counts operations by kind, and notes callees read through an index that depends on a load.
class OpCounter : public Internal::IRGraphVisitor {
 public:
  explicit OpCounter(double weight) : weight_(weight) {}
  std::array<double, kNumOpKinds> ops{};
  std::set<std::string> indirect;  // callees read indirectly
  std::vector<std::string> math;   // math calls by name, e.g. "exp_f32"
  void count(const Expr& e) { e.accept(this); }

 private:
  using IRGraphVisitor::include;
  // Counts every occurrence (IRGraphVisitor would visit a shared subexpression once).
  void include(const Expr& e) override { e.accept(this); }
  void add(int kind) { ops[kind] += weight_; }
  void visit(const Internal::Add* op) override { add(kOpAdd), IRGraphVisitor::visit(op); }
  void visit(const Internal::Sub* op) override { add(kOpAdd), IRGraphVisitor::visit(op); }
  void visit(const Internal::Mul* op) override { add(kOpMul), IRGraphVisitor::visit(op); }
  void visit(const Internal::Div* op) override { add(kOpDiv), IRGraphVisitor::visit(op); }
  void visit(const Internal::Mod* op) override { add(kOpDiv), IRGraphVisitor::visit(op); }
  void visit(const Internal::Min* op) override { add(kOpMinMax), IRGraphVisitor::visit(op); }
  void visit(const Internal::Max* op) override { add(kOpMinMax), IRGraphVisitor::visit(op); }
  void visit(const Internal::EQ* op) override { add(kOpCompare), IRGraphVisitor::visit(op); }
  void visit(const Internal::NE* op) override { add(kOpCompare), IRGraphVisitor::visit(op); }
  void visit(const Internal::LT* op) override { add(kOpCompare), IRGraphVisitor::visit(op); }
  void visit(const Internal::LE* op) override { add(kOpCompare), IRGraphVisitor::visit(op); }
  void visit(const Internal::GT* op) override { add(kOpCompare), IRGraphVisitor::visit(op); }
  void visit(const Internal::GE* op) override { add(kOpCompare), IRGraphVisitor::visit(op); }
  void visit(const Internal::And* op) override { add(kOpCompare), IRGraphVisitor::visit(op); }
  void visit(const Internal::Or* op) override { add(kOpCompare), IRGraphVisitor::visit(op); }
  void visit(const Internal::Not* op) override { add(kOpCompare), IRGraphVisitor::visit(op); }
  void visit(const Internal::Select* op) override { add(kOpSelect), IRGraphVisitor::visit(op); }
  void visit(const Internal::Cast* op) override { add(kOpCast), IRGraphVisitor::visit(op); }
  void visit(const Call* op) override {
    if (is_load(op)) {
      bool indirect = false;
      for (const Expr& a : op->args) indirect = indirect || contains_load(a);
      add(indirect ? kOpLoadIndirect : op->call_type == Call::Image ? kOpLoadInput : kOpLoadFunc);
      if (indirect) this->indirect.insert(op->name);
    } else if (op->call_type == Call::PureExtern || op->call_type == Call::Extern) {
      add(kOpTranscendental);
      math.push_back(op->name);
    } else if (op->is_intrinsic(Call::shift_left) || op->is_intrinsic(Call::shift_right) ||
               op->is_intrinsic(Call::bitwise_and) || op->is_intrinsic(Call::bitwise_or) ||
               op->is_intrinsic(Call::bitwise_xor) || op->is_intrinsic(Call::bitwise_not)) {
      add(kOpBitwise);
    }
    IRGraphVisitor::visit(op);
  }
  static bool contains_load(const Expr& e) { return !loads_in(e).empty(); }
  double weight_;
};

// The opcode class of a stage, from the shape of its definitions and what it reads.
int classify(const Function& f, const NodeInfo& n, const OpCounter& ops, bool spatial_producer) {
  const auto has_math = [&](const char* prefix) {
    for (const auto& m : ops.math) {
      if (m.rfind(prefix, 0) == 0) return true;
    }
    return false;
  };
  if (f.has_update_definition()) {
    Expr v = f.updates().back().values()[0];
    while (const auto* let = v.as<Internal::Let>()) v = let->body;
    if (!n.update_over_pure) {
      return ops.ops[kOpLoadIndirect] > 0 || !ops.indirect.empty() ? op::kScatter
                                                                   : op::kReduceWindow;
    }
    // A multiply-accumulate of two loads: a dot product, or a convolution when one producer
    // is read over the stage's two innermost (spatial) dimensions.
    const auto* add = v.as<Internal::Add>();
    if (add != nullptr && (add->b.as<Internal::Mul>() || add->a.as<Internal::Mul>()) &&
        ops.ops[kOpLoadFunc] + ops.ops[kOpLoadInput] >= 2)
      return spatial_producer || n.window > 1 ? op::kConvolution : op::kDot;
    return n.window > 1 ? op::kReduceWindow : op::kReduce;
  }
  if (ops.ops[kOpLoadIndirect] > 0) return op::kGather;
  if (has_math("exp")) return op::kExponential;
  if (has_math("tanh")) return op::kTanh;
  if (has_math("pow")) return op::kPower;
  if (has_math("log")) return op::kLog;
  if (n.stride > 0 && n.stride < 1) return op::kBroadcast;  // upsampling
  Expr v = f.definition().values()[0];
  while (const auto* let = v.as<Internal::Let>()) v = let->body;  // definitions may be CSE'd
  if (n.window > 1) {
    if (v.as<Internal::Max>()) return op::kMaximum;
    if (v.as<Internal::Min>()) return op::kMinimum;
    return ops.ops[kOpMul] > 0 ? op::kConvolution : op::kReduceWindow;
  }
  if (const auto* mx = v.as<Internal::Max>(); mx != nullptr && mx->a.as<Internal::Min>())
    return op::kClamp;
  if (const auto* mn = v.as<Internal::Min>(); mn != nullptr && mn->a.as<Internal::Max>())
    return op::kClamp;
  if (has_math("sqrt")) return op::kSqrt;
  if (v.as<Internal::Add>()) return op::kAdd;
  if (v.as<Internal::Sub>()) return op::kSubtract;
  if (v.as<Internal::Mul>()) return op::kMultiply;
  if (v.as<Internal::Div>()) return op::kDivide;
  if (v.as<Internal::Max>()) return op::kMaximum;
  if (v.as<Internal::Min>()) return op::kMinimum;
  if (v.as<Internal::Select>()) return op::kSelect;
  if (v.as<Internal::Cast>()) return op::kConvert;
  if (const Call* c = v.as<Call>(); is_load(c)) return op::kCopy;
  return op::kFusion;
}

std::string type_name(Type t) {
  if (t.is_bool()) return "bool";
  if (t.is_float()) return fmt::format("float{}", t.bits());
  return fmt::format("{}int{}", t.is_uint() ? "u" : "", t.bits());
}

// Window and stride of f's accesses to its producers along its pure dimensions: per producer
// dimension whose index moves with a pure variable of f (a direct read), the access width at
// single points of f's region and the step per unit of that variable.
void access_facts(const Function& f, const Region& region, const std::set<std::string>& indirect,
                  const std::map<std::string, Expr>& params, NodeInfo& n, bool& spatial) {
  const auto& args = f.args();
  const auto at = [&](const std::vector<int64_t>& point) {
    Scope<Interval> s;
    for (size_t k = 0; k < args.size(); ++k)
      s.push(args[k], Interval::single_point(Expr(static_cast<int>(point[k]))));
    std::map<std::string, Internal::Box> all;
    for (const auto* d : definitions(f)) {
      for (auto& [name, box] : callee_boxes(f, *d, s, params)) merge_box(all, name, box);
    }
    return all;
  };
  std::vector<int64_t> mid(args.size());
  for (size_t k = 0; k < args.size(); ++k)
    mid[k] = region[k].first + (region[k].second - region[k].first) / 2;
  const auto base = at(mid);
  const auto value = [&](const Expr& e) -> std::optional<int64_t> {
    if (!e.defined()) return std::nullopt;
    const Expr s = Internal::simplify(e);
    if (const int64_t* v = Internal::as_const_int(s)) return *v;
    return std::nullopt;
  };
  constexpr int kShift = 4;
  // Per pure dimension k of f (x, y): the widest direct access that moves with it.
  int widths[2] = {1, 1};
  double stride = 0;
  std::map<std::string, Internal::Box> shifted_along[2];  // boxes with x (y) moved by kShift
  for (size_t k = 0; k < args.size() && k < 2; ++k) {
    std::vector<int64_t> moved = mid, next = mid;
    moved[k] += kShift;
    next[k] += 1;  // upsampling reads one or two points depending on parity
    shifted_along[k] = at(moved);
    const auto& shifted = shifted_along[k];
    const auto neighbour = at(next);
    for (const auto& [name, box] : base) {
      if (indirect.count(name) || !shifted.count(name) || !neighbour.count(name)) continue;
      for (size_t d = 0; d < box.size(); ++d) {
        const auto lo = value(box[d].min), hi = value(box[d].max);
        const auto lo2 = value(shifted.at(name)[d].min);
        const auto l = value(neighbour.at(name)[d].min), h = value(neighbour.at(name)[d].max);
        if (!lo || !hi || !lo2 || !l || !h || *lo2 == *lo) continue;
        const int w = static_cast<int>(std::max(*hi - *lo, *h - *l) + 1);
        if (w > widths[k] || (w == widths[k] && stride == 0)) {
          widths[k] = w;
          stride = static_cast<double>(*lo2 - *lo) / kShift;
        }
      }
    }
  }
  const int window = std::max(widths[0], widths[1]);
  // A producer read over both of f's innermost dimensions, at the same positions (images).
  if (args.size() >= 3) {
    const auto& bx = shifted_along[0];
    const auto& by = shifted_along[1];
    for (const auto& [name, box] : base) {
      if (indirect.count(name) || box.size() < 2 || !bx.count(name) || !by.count(name)) continue;
      const auto x0 = value(box[0].min), x1 = value(bx.at(name)[0].min);
      const auto y0 = value(box[1].min), y1 = value(by.at(name)[1].min);
      if (x0 && x1 && y0 && y1 && *x1 != *x0 && *y1 != *y0) spatial = true;
    }
  }
  n.window = window > 1 ? window : 0;
  n.stride = window > 1 ? stride : 0;
  // A stencil: its window area stands for the reduction.
  if (!f.has_update_definition() && window > 1) n.reduction = int64_t{widths[0]} * widths[1];
}

}  // namespace

// Each Function of the program mapped to itself: FuncSchedule::deep_copy then keeps the
// schedule's references (wrappers) to the program's own Functions.
std::map<Internal::FunctionPtr, Internal::FunctionPtr> identity_map(
    const std::vector<Function>& functions) {
  std::map<Internal::FunctionPtr, Internal::FunctionPtr> same;
  for (const Function& f : functions) {
    if (f.get_contents().defined()) same[f.get_contents()] = f.get_contents();
  }
  return same;
}

std::vector<std::array<int64_t, 3>> Program::Impl::output_layout(size_t i) const {
  std::vector<std::array<int64_t, 3>> layout;
  int64_t stride = 1;
  for (const auto& [lo, extent] : output_regions.at(i)) {
    layout.push_back({lo, extent, stride});
    stride *= extent;
  }
  return layout;
}

void Program::Impl::reset_schedules() {
  auto same = identity_map(functions);
  for (size_t i = 0; i < functions.size(); ++i) {
    Function f = functions[i];
    if (!f.get_contents().defined()) continue;
    f.schedule() = saved_func[i].deep_copy(same);
    // Whole definitions: rfactor rewrites an update's values, not just its schedule.
    f.definition() = saved_definitions[i][0].get_copy();
    for (size_t u = 0; u < f.updates().size(); ++u)
      f.update(static_cast<int>(u)) = saved_definitions[i][u + 1].get_copy();
  }
}

Target jit_target() {
  // Halide's own autotuning loop disables LLVM's loop passes: compiling is faster and the code
  // as fast (measured on this project's machine, see REFERENCE.md). Bounds asserts are off in
  // measurements; TCOST_HALIDE_ASSERTS=1 turns them on, to find out-of-bounds accesses.
  Target t = get_jit_target_from_environment()
                 .without_feature(Target::AVX512_SapphireRapids)
                 .with_feature(Target::DisableLLVMLoopOpt);
  const char* asserts = std::getenv("TCOST_HALIDE_ASSERTS");
  if (asserts == nullptr || std::string(asserts) != "1") t = t.with_feature(Target::NoAsserts);
  return t;
}

std::string jit_target_name() { return jit_target().to_string(); }

std::string target_name(const Program& p) { return p.impl().target.to_string(); }

namespace {

// Halide's warnings ("Not folding Func ...") would flood a collection's terminal: they are
// dropped unless TCOST_HALIDE_WARNINGS=1. Errors still throw CompileError, as without a
// reporter.
class Reporter : public CompileTimeErrorReporter {
 public:
  void warning(const char* msg) override {
    if (const char* show = std::getenv("TCOST_HALIDE_WARNINGS"); show && std::string(show) == "1")
      std::fputs(msg, stderr);
  }
  void error(const char* msg) override { throw CompileError(msg); }
};

void install_reporter() {
  static Reporter reporter;
  static const bool once = (set_custom_compile_time_error_reporter(&reporter), true);
  (void)once;
}

}  // namespace

Program make_program(const PipelineSource& src) {
  install_reporter();
  if (src.outputs.empty()) throw InputError(fmt::format("{}: a program needs an output", src.name));
  auto impl = std::make_shared<Program::Impl>();
  ProgramInfo& info = impl->info;
  info.instance = src.name;
  info.family = src.family.empty() ? src.name : src.family;
  info.single_kernel = src.single_kernel;
  impl->outputs = src.outputs;
  impl->tolerances = src.tolerances;
  if (!impl->tolerances.empty() && impl->tolerances.size() != src.outputs.size())
    throw InternalError(fmt::format("{}: {} output tolerances for {} outputs", src.name,
                                    impl->tolerances.size(), src.outputs.size()));
  impl->tolerances.resize(src.outputs.size(), kFloatTolerance);
  impl->buffers = src.buffers;
  impl->seed = src.seed;
  impl->fill = src.fill;
  impl->target = jit_target();
  std::vector<Function> outs;
  for (const Func& f : src.outputs) outs.push_back(f.function());
  std::map<std::string, Function> env = Internal::build_environment(outs);
  for (const auto& [name, f] : env) {
    if (f.has_extern_definition())
      throw InputError(
          fmt::format("{}: stage '{}' is an extern stage, which tcost cannot "
                      "schedule",
                      src.name, name));
  }
  const std::vector<std::string> order = Internal::topological_order(outs, env);
  // Inputs, in order of first read, then the stages.
  InputFinder inputs;
  for (const auto& name : order) {
    for (const auto* d : definitions(env.at(name))) {
      for (const Expr& e : definition_exprs(*d)) e.accept(&inputs);
    }
  }
  impl->image_params = inputs.image_params;
  impl->scalar_params = inputs.scalar_params;
  for (const auto& [name, p] : inputs.scalar_params) {
    if (!p.estimate().defined())
      throw InputError(
          fmt::format("{}: scalar parameter '{}' has no estimate (set_estimate)", src.name, name));
  }
  const std::map<std::string, Expr> params = estimates_map(inputs);
  std::map<std::string, int> id;
  for (const auto& name : inputs.images) {
    id[name] = static_cast<int>(info.nodes.size());
    NodeInfo n;
    n.name = name;
    n.opcode = op::kParameter;
    n.is_input = true;
    info.nodes.push_back(n);
    impl->functions.emplace_back();
  }
  for (const auto& name : order) {
    id[name] = static_cast<int>(info.nodes.size());
    NodeInfo n;
    // Halide makes a repeated Func name unique ("scores$1"): the node keeps the given name.
    n.name = name.substr(0, name.find('$'));
    info.nodes.push_back(n);
    impl->functions.push_back(env.at(name));
  }
  // Types of inputs.
  for (const auto& name : inputs.images) {
    NodeInfo& n = info.nodes[id[name]];
    if (inputs.buffers.count(name)) n.type = type_name(inputs.buffers.at(name).type());
    if (inputs.image_params.count(name)) n.type = type_name(inputs.image_params.at(name).type());
  }
  // Regions: outputs from their estimates, then consumers before producers.
  std::map<std::string, Region> region;
  for (const Func& f : src.outputs) {
    const Function fn = f.function();
    Region r(fn.args().size(), {0, -1});
    std::vector<bool> seen(fn.args().size(), false);
    for (const auto& b : fn.schedule().estimates()) {
      const auto it = std::find(fn.args().begin(), fn.args().end(), b.var);
      if (it == fn.args().end()) continue;
      const size_t k = static_cast<size_t>(it - fn.args().begin());
      const std::string what =
          fmt::format("{}: the estimate of output '{}' in {}", src.name, fn.name(), b.var);
      const int64_t lo = const_value(b.min, params, what);
      r[k] = {lo, lo + const_value(b.extent, params, what) - 1};
      seen[k] = true;
    }
    for (size_t k = 0; k < seen.size(); ++k) {
      if (!seen[k])
        throw InputError(
            fmt::format("{}: output '{}' has no estimate for dimension {} ({}); "
                        "call set_estimate on it",
                        src.name, fn.name(), k, fn.args()[k]));
    }
    region[fn.name()] = r;
    info.nodes[id[fn.name()]].is_output = true;
    impl->output_regions.emplace_back();
    for (const auto& [lo, hi] : r) impl->output_regions.back().push_back({lo, hi - lo + 1});
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Function& f = env.at(*it);
    if (!region.count(*it)) {
      throw InternalError(fmt::format("{}: stage '{}' is read by nothing", src.name, *it));
    }
    const Region& r = region.at(*it);
    for (const auto* d : definitions(f)) {
      Scope<Interval> scope;
      push_region(f, r, scope);
      for (const auto& [callee, box] : callee_boxes(f, *d, scope, params)) {
        Region cr(box.size());
        for (size_t k = 0; k < box.size(); ++k) {
          const std::string what = fmt::format("{}: the region of '{}' (dimension {}) read by '{}'",
                                               src.name, callee, k, f.name());
          cr[k] = {const_value(box[k].min, params, what), const_value(box[k].max, params, what)};
        }
        auto [at, fresh] = region.emplace(callee, cr);
        if (!fresh) {
          for (size_t k = 0; k < cr.size() && k < at->second.size(); ++k) {
            at->second[k].first = std::min(at->second[k].first, cr[k].first);
            at->second[k].second = std::max(at->second[k].second, cr[k].second);
          }
        }
      }
    }
  }
  // Per node: extents, producers; per stage: definitions' facts.
  for (size_t v = 0; v < info.nodes.size(); ++v) {
    NodeInfo& n = info.nodes[v];
    const Region& r = region.at(n.is_input ? n.name : impl->functions[v].name());
    for (const auto& [lo, hi] : r) n.dims.push_back(hi - lo + 1);
    if (n.is_input) {
      impl->input_regions[static_cast<int>(v)] = {};
      for (const auto& [lo, hi] : r)
        impl->input_regions[static_cast<int>(v)].push_back({lo, hi - lo + 1});
      continue;
    }
    const Function& f = impl->functions[v];
    n.type = type_name(f.output_types()[0]);
    n.values = static_cast<int>(f.outputs());
    n.has_update = f.has_update_definition();
    double points = 1;
    for (int64_t d : n.dims) points *= static_cast<double>(d);
    std::set<std::string> callees;
    OpCounter total(1.0);
    for (size_t u = 0; u < f.updates().size(); ++u) {
      const auto& def = f.updates()[u];
      for (size_t k = 0; k < def.args().size(); ++k) {
        const auto* var = def.args()[k].as<Internal::Variable>();
        if (var == nullptr || var->name != f.args()[k]) n.update_over_pure = false;
      }
    }
    for (const auto* d : definitions(f)) {
      double volume = 1;
      for (const auto& rv : d->schedule().rvars()) {
        volume *= static_cast<double>(
            const_value(rv.extent, params, fmt::format("{}: the extent of {}", n.name, rv.var)));
      }
      const bool is_update = d != &f.definition();
      if (is_update) n.reduction += static_cast<int64_t>(volume);
      const double weight = !is_update ? 1.0 : n.update_over_pure ? volume : volume / points;
      OpCounter c(weight);
      for (const Expr& e : d->values()) c.count(e);
      if (is_update) {
        for (const Expr& e : d->args()) c.count(e);
      }
      if (d->predicate().defined()) c.count(d->predicate());
      for (int k = 0; k < kNumOpKinds; ++k) total.ops[k] += c.ops[k];
      total.indirect.insert(c.indirect.begin(), c.indirect.end());
      total.math.insert(total.math.end(), c.math.begin(), c.math.end());
      for (const Expr& e : definition_exprs(*d)) {
        for (const auto& name : loads_in(e)) {
          if (name != f.name()) callees.insert(name);
        }
      }
    }
    for (const auto& c : callees) n.producers.push_back(id.at(c));
    std::sort(n.producers.begin(), n.producers.end());
    n.ops = total.ops;
    bool spatial = false;
    access_facts(f, r, total.indirect, params, n, spatial);
    n.opcode = classify(f, n, total, spatial);
  }
  // The schedules every Func has now: apply_schedule starts from them.
  if (src.bound_outputs) {
    for (size_t i = 0; i < src.outputs.size(); ++i) {
      Func out = src.outputs[i];
      const auto& r = impl->output_regions[i];
      const std::vector<Var> args = out.args();
      for (size_t k = 0; k < args.size(); ++k)
        out.bound(args[k], static_cast<int>(r[k].first), static_cast<int>(r[k].second));
    }
  }
  auto same = identity_map(impl->functions);
  for (const Function& f : impl->functions) {
    if (!f.get_contents().defined()) {
      impl->saved_func.emplace_back();
      impl->saved_definitions.emplace_back();
      continue;
    }
    impl->saved_func.push_back(f.schedule().deep_copy(same));
    impl->saved_definitions.push_back({f.definition().get_copy()});
    for (const auto& u : f.updates()) impl->saved_definitions.back().push_back(u.get_copy());
  }
  return Program(impl);
}

void Program::Impl::bind_inputs() {
  if (inputs_bound) return;
  inputs_bound = true;
  if (fill) fill();
  std::mt19937 rng(static_cast<uint32_t>(seed));
  for (auto& [name, p] : image_params) {
    // A buffer over the region read, with slack (see zoo.h), of seeded values in [0, 1) for
    // floats and over the whole range for integers below 32 bits.
    int v = -1;
    for (size_t i = 0; i < info.nodes.size(); ++i) {
      if (info.nodes[i].name == name) v = static_cast<int>(i);
    }
    TCOST_CHECK(v >= 0, "input {} has no node", name);
    const auto& r = input_regions.at(v);
    std::vector<int> sizes;
    // Slack as the zoo's inputs have, unless exact (a schedule reading outside the region
    // then fails its bounds check instead of reading slack that a user's buffer lacks).
    const int after_x = exact_inputs ? 0 : 64, around_y = exact_inputs ? 0 : 16;
    for (size_t k = 0; k < r.size(); ++k)
      sizes.push_back(static_cast<int>(r[k].second) + (k == 0   ? after_x
                                                       : k == 1 ? 2 * around_y
                                                                : 0));
    Buffer<> b(p.type(), sizes, name);
    for (size_t k = 0; k < r.size(); ++k)
      b.translate(static_cast<int>(k), static_cast<int>(r[k].first) - (k == 1 ? around_y : 0));
    fill_random(b, rng);
    p.set_buffer(b);
    buffers.push_back(b);
  }
  for (auto& [name, p] : scalar_params) {
    const Expr e = Internal::simplify(cast(p.type(), p.estimate()));
    halide_scalar_value_t value{};
    const Type t = p.type();
    if (const double* f = Internal::as_const_float(e)) {
      if (t.bits() == 64)
        value.u.f64 = *f;
      else
        value.u.f32 = static_cast<float>(*f);
    } else if (const int64_t* i = Internal::as_const_int(e)) {
      value.u.i64 = *i;  // little-endian: the low bytes hold the narrower types
    } else if (const uint64_t* u = Internal::as_const_uint(e)) {
      value.u.u64 = *u;
    } else {
      throw InputError(
          fmt::format("{}: the estimate of parameter '{}' is not a constant", info.instance, name));
    }
    if (t.is_bool()) value.u.b = value.u.u64 != 0;
    p.set_scalar(t, value);
  }
}

void fill_random(Buffer<>& b, std::mt19937& rng) {
  const Type t = b.type();
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const auto draw = [&]() -> double {
    if (t.is_float()) return unit(rng);
    if (t.is_bool()) return static_cast<double>(rng() & 1);
    const int bits = std::min(t.bits(), 16);
    return static_cast<double>(rng() % (uint64_t{1} << bits));
  };
  // Buffers made here are dense: every element lies in [data, data + elements * bytes).
  auto* base = static_cast<uint8_t*>(b.data());
  const size_t n = b.number_of_elements(), bytes = static_cast<size_t>(t.bytes());
  for (size_t i = 0; i < n; ++i) {
    void* a = base + i * bytes;
    const double v = draw();
    if (t == Float(32))
      *static_cast<float*>(a) = static_cast<float>(v);
    else if (t == Float(64))
      *static_cast<double*>(a) = v;
    else if (t.bits() == 8)
      *static_cast<uint8_t*>(a) = static_cast<uint8_t>(v);
    else if (t.bits() == 16)
      *static_cast<uint16_t*>(a) = static_cast<uint16_t>(v);
    else if (t.bits() == 32)
      *static_cast<uint32_t*>(a) = static_cast<uint32_t>(v);
    else if (t.bits() == 64)
      *static_cast<uint64_t*>(a) = static_cast<uint64_t>(v);
    else if (t.is_bool())
      *static_cast<bool*>(a) = v != 0;
  }
}

namespace {

// The loops of a definition at which producers computed at its inner or outer tile go.
struct DefinitionLoops {
  VarOrRVar inner_tile, outer_tile;
};

// The C++ of the directives apply_schedule issues (what `-e schedule` writes): every directive
// names its variables by their names, which is how Halide matches them.
class Source {
 public:
  void line(const std::string& l) { lines_ += "    " + l + "\n"; }
  std::string text() const { return lines_; }
  static std::string ident(const std::string& name) {
    std::string out;
    for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return out;
  }
  static std::string v(const VarOrRVar& x) {
    return fmt::format("{}(\"{}\")", x.is_rvar ? "RVar" : "Var", x.name());
  }
  static std::string tail(TailStrategy t) {
    return t == TailStrategy::GuardWithIf ? "TailStrategy::GuardWithIf" : "TailStrategy::Auto";
  }

 private:
  std::string lines_;
};

// Schedules one definition (pure or update) of a stage after its loop plan (pure_loops):
// splits, order with the reduction loops, vector, unrolls, parallelism; writes the directives
// to `src` when given. `guard`: splits guard their tails with an if (updates of outputs: the
// default, rounding up, would write past the output buffer, which is compiled without bounds
// asserts; stages computed per tile).
DefinitionLoops schedule_definition(Stage stage, const NodeInfo& n, const std::vector<Var>& vars,
                                    const std::vector<RVar>& rvars, const StageSchedule& st,
                                    int tag, bool guard, Source* src, const std::string& name) {
  const TailStrategy tail = guard ? TailStrategy::GuardWithIf : TailStrategy::Auto;
  const auto emit = [&](const std::string& l) {
    if (src != nullptr) src->line(name + l + ";");
  };
  const std::string t = std::to_string(tag);
  const std::vector<Loop> plan = pure_loops(n, st);
  // The Halide variable of each (dimension, level).
  std::map<std::pair<int, int>, VarOrRVar> var;
  const int split[3] = {st.tile_x, st.tile_y, st.tile_c};
  const int outer[2] = {st.outer_x, st.outer_y};
  const char* names = "xyc";
  for (size_t d = 0; d < vars.size(); ++d) {
    const int di = static_cast<int>(d);
    const int f = d < 3 ? split[d] : 0;
    if (f <= 0) {
      var.emplace(std::make_pair(di, static_cast<int>(kLoopWhole)), vars[d]);
      continue;
    }
    const std::string base = std::string(1, names[d]) + t;
    Var in(base + "i"), out(base + "o");
    stage.split(vars[d], out, in, f, tail);
    emit(fmt::format(".split({}, {}, {}, {}, {})", Source::v(vars[d]), Source::v(out),
                     Source::v(in), f, Source::tail(tail)));
    var.emplace(std::make_pair(di, static_cast<int>(kLoopInner)), in);
    if (d < 2 && outer[d] > 0) {
      Var mid(base + "m"), top(base + "O");
      stage.split(out, top, mid, outer[d], tail);
      emit(fmt::format(".split({}, {}, {}, {}, {})", Source::v(out), Source::v(top), Source::v(mid),
                       outer[d], Source::tail(tail)));
      var.emplace(std::make_pair(di, static_cast<int>(kLoopMiddle)), mid);
      var.emplace(std::make_pair(di, static_cast<int>(kLoopOuter)), top);
    } else {
      var.emplace(std::make_pair(di, static_cast<int>(kLoopOuter)), out);
    }
  }
  std::vector<VarOrRVar> pure;  // innermost first
  for (const Loop& l : plan) pure.push_back(var.at({l.dim, l.level}));
  // Reduction loops innermost (Halide's default), just outside the inner tile, or outermost.
  std::vector<VarOrRVar> loops;
  if (st.reduce_outer == 0 || rvars.empty()) {
    loops.insert(loops.end(), rvars.begin(), rvars.end());
    loops.insert(loops.end(), pure.begin(), pure.end());
  } else {
    const size_t at =
        st.reduce_outer == 2 ? pure.size() : std::min<size_t>(st.tile_y > 0 ? 2 : 1, pure.size());
    loops.insert(loops.end(), pure.begin(), pure.begin() + static_cast<long>(at));
    loops.insert(loops.end(), rvars.begin(), rvars.end());
    loops.insert(loops.end(), pure.begin() + static_cast<long>(at), pure.end());
  }
  if (loops.size() >= 2) {
    stage.reorder(loops);
    std::string list;
    for (const auto& l : loops) list += (list.empty() ? "" : ", ") + Source::v(l);
    emit(".reorder({" + list + "})");
  }
  DefinitionLoops out{pure.back(), pure.back()};
  if (st.tile_x > 0) {
    out.inner_tile = var.at({0, st.outer_x > 0 ? kLoopMiddle : kLoopOuter});
    out.outer_tile = var.at({0, kLoopOuter});
  }
  if (st.parallel == 2 && pure.size() >= 2) {
    Var fused("f" + t);
    stage.fuse(pure[pure.size() - 2], pure.back(), fused).parallel(fused);
    emit(fmt::format(".fuse({}, {}, {}).parallel({})", Source::v(pure[pure.size() - 2]),
                     Source::v(pure.back()), Source::v(fused), Source::v(fused)));
    // Tile loops that were fused away are the fused loop now.
    if (out.inner_tile.name() == pure.back().name() ||
        out.inner_tile.name() == pure[pure.size() - 2].name())
      out.inner_tile = fused;
    if (out.outer_tile.name() == pure.back().name() ||
        out.outer_tile.name() == pure[pure.size() - 2].name())
      out.outer_tile = fused;
  } else if (st.parallel >= 1) {
    stage.parallel(pure.back());
    emit(fmt::format(".parallel({})", Source::v(pure.back())));
  }
  if (st.vector > 1) {
    stage.vectorize(pure[0], st.vector, tail);
    emit(fmt::format(".vectorize({}, {}, {})", Source::v(pure[0]), st.vector, Source::tail(tail)));
  }
  const int unrolls[2] = {st.unroll, st.unroll2};
  for (size_t k = 1; k <= 2; ++k) {
    if (unrolls[k - 1] <= 1 || pure.size() <= k) continue;
    stage.unroll(pure[k], unrolls[k - 1], tail);
    emit(
        fmt::format(".unroll({}, {}, {})", Source::v(pure[k]), unrolls[k - 1], Source::tail(tail)));
  }
  return out;
}

// rfactor: the outermost reduction variable of update u split into `parts` chunks reduced in
// parallel into an intermediate Func (computed at root), which the update then combines.
void apply_rfactor(Func f, int u, const StageSchedule& st, int tag, Source* src,
                   const std::string& name) {
  const auto& rvs = f.function().update(u).schedule().rvars();
  if (rvs.empty()) return;
  const int64_t* extent = Internal::as_const_int(Internal::simplify(rvs.back().extent));
  if (extent == nullptr || *extent < 2 * st.rfactor) return;  // too short to split
  const int chunk = static_cast<int>((*extent + st.rfactor - 1) / st.rfactor);
  const std::string t = std::to_string(tag);
  RVar r = f.rvars(u).back(), ro("ro" + t), ri("ri" + t);
  Var part("u" + t);
  f.update(u).split(r, ro, ri, chunk);
  Func partial = f.update(u).rfactor(ro, part);
  partial.compute_root();
  partial.update(0).parallel(part);
  if (src != nullptr) {
    const std::string pname = name + "_partial" + std::to_string(u);
    src->line(fmt::format("{}.update({}).split({}, {}, {}, {});", name, u, Source::v(r),
                          Source::v(ro), Source::v(ri), chunk));
    src->line(fmt::format("Func {} = {}.update({}).rfactor({}, {});", pname, name, u, Source::v(ro),
                          Source::v(part)));
    src->line(fmt::format("{}.compute_root();", pname));
    src->line(fmt::format("{}.update(0).parallel({});", pname, Source::v(part)));
  }
}

// Whether definition `d` reads the stage or input `name`, directly or through stages the
// schedule inlines into it.
bool reads(const Program::Impl& p, const Schedule& s, const std::vector<int>& stages,
           const Internal::Definition& d, const std::string& name) {
  std::set<std::string> loads;
  for (const Expr& e : definition_exprs(d)) {
    const auto l = loads_in(e);
    loads.insert(l.begin(), l.end());
  }
  if (loads.count(name)) return true;
  for (size_t k = 0; k < stages.size(); ++k) {
    const Function& w = p.functions[stages[k]];
    if (s[k].compute == kInline && loads.count(w.name()) &&
        reads(p, s, stages, w.definition(), name))
      return true;
  }
  return false;
}

void apply(const Program& program, const Schedule& s, Source* src) {
  Program::Impl& p = program.impl();
  check_schedule(p.info, s);
  p.reset_schedules();
  const std::vector<int> stages = p.info.stages();
  // Consumers first: the loops where their producers go are theirs: those of the last
  // definition, or of the pure one when that reads the producer (a stage whose pure
  // definition reads one product and whose update adds another: an LSTM's gates).
  std::map<int, DefinitionLoops> tile_loops, pure_tile_loops;  // by node
  std::set<int> at_targets;  // nodes other stages are computed inside
  for (const StageSchedule& st : s) {
    if (st.compute == kAtTile && st.at >= 0) at_targets.insert(stages[static_cast<size_t>(st.at)]);
  }
  for (size_t k = stages.size(); k-- > 0;) {
    const int v = stages[k];
    const NodeInfo& n = p.info.nodes[v];
    Func f(p.functions[v]);
    const StageSchedule& st = s[k];
    const std::string name = Source::ident(f.name());
    const auto emit = [&](const std::string& l) {
      if (src != nullptr) src->line(name + l + ";");
    };
    if (src != nullptr) src->line(fmt::format("Func {} = pipeline.get_func({});", name, k));
    if (st.compute == kInline) {
      f.compute_inline();
      emit(".compute_inline()");
      continue;
    }
    if (!n.is_output) {
      if (st.compute == kRoot) {
        f.compute_root();
        emit(".compute_root()");
      }
      if (st.compute == kAtTile) {
        const int c = st.at < 0 ? p.info.output() : stages[static_cast<size_t>(st.at)];
        const bool pure_reads = reads(p, s, stages, p.functions[c].definition(), f.name());
        const DefinitionLoops& l = pure_reads ? pure_tile_loops.at(c) : tile_loops.at(c);
        const VarOrRVar& loop = st.at_outer ? l.outer_tile : l.inner_tile;
        f.compute_at(LoopLevel(Func(p.functions[c]), loop));
        emit(fmt::format(".compute_at({}, {})", Source::ident(p.functions[c].name()),
                         Source::v(loop)));
        if (st.store_root) {
          f.store_root();
          emit(".store_root()");
        }
      }
    }
    const std::vector<Var> vars = f.args();
    if (!n.is_output && st.storage != 0) {
      const auto m = storage_minor_to_major(st.storage, static_cast<int>(vars.size()));
      std::vector<Var> order;
      std::string list;
      for (int d : m) {
        order.push_back(vars[d]);
        list += (list.empty() ? "" : ", ") + Source::v(vars[d]);
      }
      f.reorder_storage(order);
      emit(".reorder_storage({" + list + "})");
    }
    const int tag = 2 * static_cast<int>(k);
    // A stage computed inside another stage's tiles covers small, varying regions: splits
    // larger than a region would shift it before its start and read its producers and inputs
    // outside what they hold (seen: pyramids, morphology chains). Its tails are guarded. Only
    // stages as the first space had them (at the main output's tile, vectorised along x, with
    // nothing computed inside their own loops) keep Halide's default tails, so that its
    // measured data describes the code generated now; their inputs carry slack (zoo.h).
    const bool first_space =
        st.at == -1 && st.vector_dim == 0 && st.unroll2 == 1 && !at_targets.count(v);
    const bool per_tile = st.compute == kAtTile && !first_space;
    DefinitionLoops loops =
        schedule_definition(Stage(f), n, vars, {}, st, tag, per_tile, src, name);
    pure_tile_loops.emplace(v, loops);
    if (n.update_over_pure) {
      for (int u = 0; u < f.num_update_definitions(); ++u) {
        if (st.rfactor > 0) apply_rfactor(f, u, st, tag + 1000 * (u + 1), src, name);
        // After a split (rfactor), reduction variables carry qualified names ("r$x.ro"):
        // scheduling calls match the unqualified tail.
        std::vector<RVar> rvars;
        for (const RVar& r : f.rvars(u))
          rvars.emplace_back(r.name().substr(r.name().rfind('.') + 1));
        loops = schedule_definition(f.update(u), n, vars, rvars, st, tag + 1000 * (u + 1),
                                    n.is_output || per_tile, src,
                                    fmt::format("{}.update({})", name, u));
      }
    } else if (f.num_update_definitions() > 0) {
      // Scatters and scans keep Halide's default loops (serial, in order).
      for (int u = 0; u < f.num_update_definitions(); ++u) {
        f.update(u).unscheduled();
        emit(fmt::format(".update({}).unscheduled()", u));
      }
      loops = {VarOrRVar(vars.back()), VarOrRVar(vars.back())};
    }
    tile_loops.emplace(v, loops);
  }
}

}  // namespace

void apply_schedule(const Program& program, const Schedule& s) { apply(program, s, nullptr); }

std::string schedule_source(const Program& program, const Schedule& s) {
  Source src;
  apply(program, s, &src);
  return "// tcost schedule " + schedule_key(s) + "\n{\n    using namespace Halide;\n" +
         src.text() + "}\n";
}

namespace {

// Output buffers over the outputs' estimated regions (one per value of a Tuple), laid out as
// output_layout says: Halide's Buffer<> is dense with the first dimension innermost, and each
// buffer's strides are checked against the layout, since lower_ast reads the outputs' strides
// from output_layout, not from these buffers.
std::vector<Buffer<>> output_buffers(const Program::Impl& p) {
  std::vector<Buffer<>> out;
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    const auto layout = p.output_layout(i);
    std::vector<int> sizes;
    for (const auto& [lo, ext, stride] : layout) sizes.push_back(static_cast<int>(ext));
    for (const Type& t : p.outputs[i].function().output_types()) {
      Buffer<> b(t, sizes);
      for (size_t k = 0; k < layout.size(); ++k) {
        b.translate(static_cast<int>(k), static_cast<int>(layout[k][0]));
        if (b.dim(static_cast<int>(k)).stride() != layout[k][2]) {
          throw std::logic_error(fmt::format(
              "{}: output {} dimension {} has stride {}, its layout says {}", p.info.instance, i, k,
              b.dim(static_cast<int>(k)).stride(), layout[k][2]));
        }
      }
      out.push_back(b);
    }
  }
  return out;
}

}  // namespace

namespace {

// Every value of every output buffer, as doubles, in storage order.
Outputs read_outputs(const std::vector<Buffer<>>& outs) {
  Outputs values;
  for (const Buffer<>& b : outs) {
    const Type t = b.type();
    std::vector<double> v;
    v.reserve(b.number_of_elements());
    // Buffers made here are dense: every element lies in [data, data + elements * bytes).
    const auto* base = static_cast<const uint8_t*>(b.data());
    const size_t bytes = static_cast<size_t>(t.bytes());
    for (size_t i = 0; i < b.number_of_elements(); ++i) {
      const void* a = base + i * bytes;
      if (t == Float(32)) {
        v.push_back(*static_cast<const float*>(a));
      } else if (t == Float(64)) {
        v.push_back(*static_cast<const double*>(a));
      } else if (t.is_bool()) {
        v.push_back(*static_cast<const bool*>(a) ? 1 : 0);
      } else if (t.bits() == 8) {
        v.push_back(t.is_int() ? *static_cast<const int8_t*>(a) : *static_cast<const uint8_t*>(a));
      } else if (t.bits() == 16) {
        v.push_back(t.is_int() ? *static_cast<const int16_t*>(a)
                               : *static_cast<const uint16_t*>(a));
      } else if (t.bits() == 32) {
        v.push_back(t.is_int() ? *static_cast<const int32_t*>(a)
                               : *static_cast<const uint32_t*>(a));
      } else {
        v.push_back(t.is_int() ? static_cast<double>(*static_cast<const int64_t*>(a))
                               : static_cast<double>(*static_cast<const uint64_t*>(a)));
      }
    }
    values.push_back(std::move(v));
  }
  return values;
}

// Threads of the spinning pool of this process (a measuring child), made on its first loop.
int spinning_threads = 1;

// The JIT's do_par_for under ThreadPool::spinning.
int spinning_par_for(JITUserContext* ctx, int (*f)(JITUserContext*, int, uint8_t*), int min,
                     int extent, uint8_t* closure) {
  struct Env {
    JITUserContext* ctx;
    int (*f)(JITUserContext*, int, uint8_t*);
    uint8_t* closure;
  } env{ctx, f, closure};
  return measuring_pool(spinning_threads)
      .par_for(
          [](void* e, int i) {
            const auto* v = static_cast<const Env*>(e);
            return v->f(v->ctx, i, v->closure);
          },
          &env, min, extent);
}

// The JIT's malloc handlers under Placement::arena: blocks of the measuring arena; when it is
// full, the heap's, aligned as Halide's own are.
void* arena_malloc(JITUserContext*, size_t bytes) {
  if (void* p = measuring_arena().allocate(bytes)) return p;
  return std::aligned_alloc(128, (bytes + 127) / 128 * 128);
}

void arena_free(JITUserContext*, void* p) {
  Arena& arena = measuring_arena();
  if (p == nullptr || arena.release(p) || arena.contains(p)) return;
  std::free(p);  // from the heap, when the arena was full
}

// Copies the buffers' memory into the measuring arena and points them at the copies, then
// overwrites what they leave (all copies first: two buffers may view one memory). Buffers
// already there stay.
void place_in_arena(const std::vector<Buffer<>*>& buffers) {
  Arena& arena = measuring_arena();
  std::vector<std::pair<halide_buffer_t*, uint8_t*>> moved;  // buffer, its old memory
  for (Buffer<>* b : buffers) {
    halide_buffer_t* raw = b->raw_buffer();
    if (raw->host == nullptr || arena.contains(raw->host)) continue;
    const size_t bytes = raw->size_in_bytes();
    auto* to = static_cast<uint8_t*>(arena.place(bytes));
    std::memcpy(to, raw->begin(), bytes);
    moved.emplace_back(raw, raw->host);
    raw->host = to + (raw->host - raw->begin());
  }
  for (auto& [raw, old] : moved) {
    const size_t bytes = raw->size_in_bytes();
    std::memset(old - (raw->host - raw->begin()), 0xA5, bytes);
  }
}

// The program's inputs and `outs`, its compiled run's outputs, in the measuring arena.
void place_in_arena(Program::Impl& p, std::vector<Buffer<>>& outs) {
  std::vector<Buffer<>*> buffers;
  for (auto& b : p.buffers) buffers.push_back(&b);
  for (auto& b : outs) buffers.push_back(&b);
  place_in_arena(buffers);
}

// JIT-compiles the pipeline as its Funcs are scheduled now; returns a run into `outs`.
std::function<void()> compiled_run(Program::Impl& p, std::shared_ptr<std::vector<Buffer<>>> outs,
                                   ThreadPool pool = ThreadPool::halide, int threads = 1,
                                   Placement placement = Placement::heap,
                                   bool bounds_checked = false) {
  auto pipeline = std::make_shared<Pipeline>(p.outputs);
  if (pool == ThreadPool::spinning) {
    spinning_threads = threads;
    pipeline->jit_handlers().custom_do_par_for = &spinning_par_for;
  }
  if (placement != Placement::heap) {
    Arena& arena = measuring_arena();  // mapped now: a failure is the compile's
    if (placement == Placement::arena_huge && !arena.advise_huge_pages()) {
      const std::string why = huge_pages_unavailable();
      throw std::runtime_error("--huge-pages: the kernel refused huge pages for the arena (" +
                               (why.empty() ? std::string("madvise failed") : why) + ")");
    }
    pipeline->jit_handlers().custom_malloc = &arena_malloc;
    pipeline->jit_handlers().custom_free = &arena_free;
  }
  const Target target = bounds_checked ? p.target.without_feature(Target::NoAsserts) : p.target;
  pipeline->compile_jit(target);
  return [pipeline, outs, target] {
    Realization r(*outs);
    pipeline->realize(r, target);
  };
}

Workload checked(std::function<void()> run, std::shared_ptr<std::vector<Buffer<>>> outs,
                 const Program& program, const Outputs* reference) {
  Workload w;
  w.run = std::move(run);
  w.unshare = [program] {
    // One write per page gives this process its own copy of the page.
    for (auto& b : program.impl().buffers) {
      auto* host = reinterpret_cast<volatile unsigned char*>(b.raw_buffer()->host);
      const size_t bytes = b.raw_buffer()->size_in_bytes();
      for (size_t at = 0; host != nullptr && at < bytes; at += 4096) host[at] = host[at];
    }
  };
  if (reference != nullptr) {
    w.check = [outs, program, reference] {
      return compare_outputs(program, *reference, read_outputs(*outs));
    };
    w.poison = [outs](int seed) {
      const auto byte = static_cast<unsigned char>(0x5A + 61 * seed);
      for (auto& b : *outs)
        std::memset(b.raw_buffer()->host, byte, b.raw_buffer()->size_in_bytes());
    };
  }
  return w;
}

}  // namespace

namespace {

// The program compiled under `s`, with the buffers its runs write.
struct Compiled {
  std::function<void()> run;
  std::shared_ptr<std::vector<Buffer<>>> outs;
};

Compiled compile(const Program& program, const Schedule& s, int threads,
                 ThreadPool pool = ThreadPool::halide, Placement placement = Placement::heap,
                 bool bounds_checked = false) {
  setenv("HL_NUM_THREADS", std::to_string(threads).c_str(), 1);
  Program::Impl& p = program.impl();
  try {
    p.bind_inputs();
    apply_schedule(program, s);
    auto outs = std::make_shared<std::vector<Buffer<>>>(output_buffers(p));
    Compiled c{compiled_run(p, outs, pool, threads, placement, bounds_checked), outs};
    if (placement != Placement::heap) place_in_arena(p, *outs);
    return c;
  } catch (const Halide::Error& e) {
    throw std::runtime_error(std::string("Halide rejected the schedule: ") + e.what());
  }
}

}  // namespace

Outputs run_output(const Program& program, const Schedule& s, int threads) {
  const Compiled c = compile(program, s, threads);
  try {
    c.run();
  } catch (const Halide::Error& e) {
    throw std::runtime_error(std::string("the program failed: ") + e.what());
  }
  return read_outputs(*c.outs);
}

const char* thread_pool_name(ThreadPool pool) {
  return pool == ThreadPool::spinning ? "spinning" : "halide";
}

const char* placement_name(Placement placement) {
  switch (placement) {
    case Placement::arena:
      return "arena";
    case Placement::arena_huge:
      return "arena-huge";
    default:
      return "heap";
  }
}

Workload schedule_workload(const Program& program, const Schedule& s, int threads,
                           const Outputs* reference, ThreadPool pool, Placement placement,
                           bool bounds_checked) {
  if (reference != nullptr) {
    std::string outside;
    for (const std::string& read : reads_outside_inputs(program, s))
      outside += (outside.empty() ? "" : "; ") + read;
    if (!outside.empty())
      throw std::runtime_error(fmt::format("{}: {}", kReadsOutsideInputs, outside));
  }
  const Compiled c = compile(program, s, threads, pool, placement, bounds_checked);
  return checked(c.run, c.outs, program, reference);
}

Workload autoschedule_workload(const Program& program, const std::string& autoscheduler,
                               const std::string& plugin, int threads, int64_t llc_bytes,
                               const Outputs* reference, Placement placement) {
  setenv("HL_NUM_THREADS", std::to_string(threads).c_str(), 1);
  Program::Impl& p = program.impl();
  try {
    p.bind_inputs();
    p.reset_schedules();
    // The autoschedulers log their search on stderr: silenced in this measuring child unless
    // the schedule is to be shown.
    if (const char* show = std::getenv("TCOST_PRINT_SCHEDULES");
        !show || std::string(show) != "1") {
      if (std::FILE* null = std::freopen("/dev/null", "w", stderr)) (void)null;
    }
    load_plugin(plugin);
    Pipeline pipeline(p.outputs);
    const auto t0 = std::chrono::steady_clock::now();
    const AutoSchedulerResults results = pipeline.auto_schedule(
        autoscheduler, p.target, MachineParams(threads, static_cast<uint64_t>(llc_bytes), 40));
    // TCOST_PRINT_SCHEDULES=1: the autoscheduler's schedule as C++, on stderr (docs/tune.md).
    if (const char* show = std::getenv("TCOST_PRINT_SCHEDULES"); show && std::string(show) == "1")
      fmt::print(stderr, "{} schedule of {}:\n{}\n", autoscheduler, p.info.instance,
                 results.schedule_source);
    const double search_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    auto outs = std::make_shared<std::vector<Buffer<>>>(output_buffers(p));
    auto run = compiled_run(p, outs, ThreadPool::halide, threads, placement);
    if (placement != Placement::heap) place_in_arena(p, *outs);
    Workload w = checked(std::move(run), outs, program, reference);
    w.search_ms = search_ms;
    return w;
  } catch (const Halide::Error& e) {
    throw std::runtime_error(autoscheduler + " failed: " + e.what());
  }
}

std::function<void()> build(const Program& program, const Schedule& s, int threads) {
  return schedule_workload(program, s, threads, nullptr).run;
}

std::string outputs_to_bytes(const Outputs& o) {
  std::string out;
  const auto put = [&out](uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(o.size());
  for (const auto& v : o) {
    put(v.size());
    out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
  }
  return out;
}

Outputs outputs_from_bytes(const std::string& bytes) {
  size_t at = 0;
  const auto get = [&](uint64_t& v) {
    if (bytes.size() - at < sizeof v) throw InputError("outputs: truncated");
    std::memcpy(&v, bytes.data() + at, sizeof v);
    at += sizeof v;
  };
  uint64_t n = 0;
  get(n);
  if (n > 1024) throw InputError("outputs: too many buffers");
  Outputs o(n);
  for (auto& v : o) {
    uint64_t len = 0;
    get(len);
    if (len > (bytes.size() - at) / sizeof(double)) throw InputError("outputs: truncated");
    v.resize(len);
    std::memcpy(v.data(), bytes.data() + at, len * sizeof(double));
    at += len * sizeof(double);
  }
  if (at != bytes.size()) throw InputError("outputs: trailing bytes");
  return o;
}

std::string compare_outputs(const Program& program, const Outputs& want, const Outputs& got) {
  if (want.size() != got.size())
    return fmt::format("{} output buffers, expected {}", got.size(), want.size());
  std::vector<Type> types;
  std::vector<double> fractions;  // per buffer: its output's tolerance
  const Program::Impl& p = program.impl();
  for (size_t o = 0; o < p.outputs.size(); ++o) {
    for (const Type& t : p.outputs[o].function().output_types()) {
      types.push_back(t);
      fractions.push_back(p.tolerances[o]);  // one per output (make_program)
    }
  }
  for (size_t b = 0; b < want.size(); ++b) {
    if (want[b].size() != got[b].size())
      return fmt::format("output {} has {} values, expected {}", b, got[b].size(), want[b].size());
    const bool exact = b >= types.size() || !types[b].is_float();
    double scale = 1;
    for (double v : want[b]) {
      if (std::isfinite(v)) scale = std::max(scale, std::fabs(v));
    }
    const double tolerance = exact ? 0.0 : fractions[b] * scale;
    for (size_t i = 0; i < want[b].size(); ++i) {
      const double a = want[b][i], c = got[b][i];
      if (std::isnan(a) && std::isnan(c)) continue;
      if (!(std::fabs(a - c) <= tolerance))
        return fmt::format("output {} value {}: {} instead of {}", b, i, c, a);
    }
  }
  return "";
}

}  // namespace tcost::halide
