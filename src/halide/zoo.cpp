#include "halide/zoo.h"

#include <fnmatch.h>

#include <random>

#include <fmt/format.h>

#include "core/error.h"
#include "halide/zoo_impl.h"

namespace tcost::halide {
namespace {

using zoo::Family;

std::string instance_name(const Family& f, const std::vector<int>& shape) {
  std::string s = f.name + "_";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

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

std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> out;
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find(',', start), text.size());
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::vector<InstanceName> select_instances(const std::string& glob) {
  // Comma-separated globs: the union, in the zoo's order.
  const std::vector<std::string> globs = comma_list(glob);
  std::vector<InstanceName> out;
  for (const auto& in : zoo_instances()) {
    for (const auto& g : globs) {
      if (fnmatch(g.c_str(), in.name.c_str(), 0) == 0 ||
          fnmatch(g.c_str(), in.family.c_str(), 0) == 0) {
        out.push_back(in);
        break;
      }
    }
  }
  if (out.empty()) throw UsageError(fmt::format("'{}' matches no program of the zoo", glob));
  return out;
}

Program zoo_program(const std::string& instance) {
  for (const Family& f : zoo::families()) {
    for (const auto& shape : f.shapes) {
      if (instance_name(f, shape) != instance) continue;
      PipelineSource src;
      src.name = instance;
      src.family = f.name;
      src.single_kernel = f.single_kernel;
      // Output bounds are known: loop extents become constants (and features of the AST).
      src.bound_outputs = true;
      src.seed = std::hash<std::string>{}(instance);
      zoo::Builder b(src);
      f.define(b, shape);
      return make_program(src);
    }
  }
  throw InputError(
      fmt::format("'{}' is not a program of the zoo (see tcost collect --list)", instance));
}

namespace zoo {

Halide::Buffer<float> Builder::input(const std::string& name, const std::vector<int>& dims,
                                     float lo, float hi) {
  // Slack: 64 columns after x, 16 rows before and after y (a tail shifted inwards over a region
  // smaller than its split factor starts before row 0).
  std::vector<int> alloc = dims;
  alloc[0] += 64;
  if (alloc.size() > 1) alloc[1] += 32;
  Halide::Buffer<float> b(alloc, name);
  if (alloc.size() > 1) b.translate(1, -16);
  const uint64_t seed = s_.seed + s_.buffers.size() * 7919;
  s_.buffers.push_back(b);
  auto previous = s_.fill;
  s_.fill = [previous, b, seed, lo, hi]() mutable {
    if (previous) previous();
    std::mt19937 rng(static_cast<uint32_t>(seed));
    std::uniform_real_distribution<float> u(lo, hi);
    b.for_each_value([&](float& v) { v = u(rng); });
  };
  return b;
}

void Builder::output(Halide::Func f, const std::vector<int>& dims, double tolerance) {
  const std::vector<Halide::Var> args = f.args();
  for (size_t k = 0; k < args.size() && k < dims.size(); ++k) f.set_estimate(args[k], 0, dims[k]);
  s_.outputs.push_back(f);
  s_.tolerances.push_back(tolerance);
}

}  // namespace zoo
}  // namespace tcost::halide
