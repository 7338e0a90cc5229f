#include "halide/pipelines.h"

#include <Halide.h>

#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>

namespace tcost::halide {

std::function<void()> build_matmul(int n, const MatmulSchedule& s, int threads) {
  using namespace Halide;
  // Halide's thread pool reads HL_NUM_THREADS when it starts: a fixed thread count for every
  // measurement (set in the measuring child process before the first run).
  setenv("HL_NUM_THREADS", std::to_string(threads).c_str(), 1);
  try {
    auto a = std::make_shared<Buffer<float>>(n, n);
    auto b = std::make_shared<Buffer<float>>(n, n);
    auto out = std::make_shared<Buffer<float>>(n, n);
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> u(-1, 1);
    a->for_each_value([&](float& v) { v = u(rng); });
    b->for_each_value([&](float& v) { v = u(rng); });
    Var x("x"), y("y"), xi("xi"), yi("yi");
    RDom k(0, n);
    Func c("c");
    c(x, y) = 0.0f;
    c(x, y) += (*a)(k, y) * (*b)(x, k);
    // The innermost x loop: the tile's inner loop when tiled, x itself otherwise.
    Var inner_x = x;
    if (s.tile > 0) {
      c.tile(x, y, xi, yi, s.tile, s.tile);
      c.update().tile(x, y, xi, yi, s.tile, s.tile).reorder(xi, k, yi, x, y);
      inner_x = xi;
    }
    for (Stage stage : {Stage(c), c.update()}) {
      if (s.vector_width > 1) stage.vectorize(inner_x, s.vector_width);
      if (s.parallel) stage.parallel(y);
    }
    // Halide's own autotuning loop disables LLVM's loop passes: compiling is faster and the
    // code as fast (measured on this project's machine, see REFERENCE.md).
    Target t = get_jit_target_from_environment()
                   .with_feature(Target::DisableLLVMLoopOpt)
                   .with_feature(Target::NoAsserts);
    auto pipeline = std::make_shared<Pipeline>(c);
    pipeline->compile_jit(t);
    return [pipeline, a, b, out] { pipeline->realize(*out); };
  } catch (const Halide::Error& e) {
    throw std::runtime_error(std::string("Halide rejected the schedule: ") + e.what());
  }
}

std::function<void()> build_conv3x3(int size, int c_in, int c_out, const MatmulSchedule& s,
                                    int threads) {
  using namespace Halide;
  setenv("HL_NUM_THREADS", std::to_string(threads).c_str(), 1);
  try {
    auto in = std::make_shared<Buffer<float>>(size + 2, size + 2, c_in);  // padded input
    auto w = std::make_shared<Buffer<float>>(3, 3, c_in, c_out);
    auto bias = std::make_shared<Buffer<float>>(c_out);
    auto out = std::make_shared<Buffer<float>>(size, size, c_out);
    std::mt19937 rng(4321);
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto* b : {in.get(), w.get(), bias.get()})
      b->for_each_value([&](float& v) { v = u(rng); });
    Var x("x"), y("y"), c("c"), xi("xi"), yi("yi");
    RDom r(0, 3, 0, 3, 0, c_in);
    Func conv("conv"), relu("relu");
    conv(x, y, c) = (*bias)(c);
    conv(x, y, c) += (*w)(r.x, r.y, r.z, c) * (*in)(x + r.x, y + r.y, r.z);
    relu(x, y, c) = max(conv(x, y, c), 0.0f);
    Var inner_x = x;
    if (s.tile > 0) {
      relu.tile(x, y, xi, yi, s.tile, s.tile);
      conv.compute_at(relu, x);
      inner_x = xi;
    } else {
      conv.compute_root();
    }
    if (s.vector_width > 1) {
      relu.vectorize(inner_x, s.vector_width);
      conv.vectorize(x, s.vector_width);
      conv.update().vectorize(x, s.vector_width);
    }
    if (s.parallel) {
      relu.parallel(c);
      if (s.tile == 0) {
        conv.parallel(c);
        conv.update().parallel(c);
      }
    }
    Target t = get_jit_target_from_environment()
                   .with_feature(Target::DisableLLVMLoopOpt)
                   .with_feature(Target::NoAsserts);
    auto pipeline = std::make_shared<Pipeline>(relu);
    pipeline->compile_jit(t);
    return [pipeline, in, w, bias, out] { pipeline->realize(*out); };
  } catch (const Halide::Error& e) {
    throw std::runtime_error(std::string("Halide rejected the schedule: ") + e.what());
  }
}

}  // namespace tcost::halide
