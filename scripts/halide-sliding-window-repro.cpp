// The stereo_census schedule that `tcost collect --check` refused (docs/data-history.md, "The
// zoo's third growth"), written in plain Halide 14 without tcost: variant 1 is that schedule;
// 2 drops census_right's store_root, 3 its vectorize and unroll, 4 computes it at root. On an
// AMD EPYC (2026-12-06) variants 1 and 3 differed from the default schedule in 2,008-2,044 of
// 196,608 values (the count varies between runs, as if values never computed were read) and 2
// and 4 in none. So the fault is Halide's sliding window over a stage stored at root and computed
// inside the disparity loop, whose footprint (x + nd - c) moves to lower x as c grows.
// g++ -std=c++17 -I/usr/include/halide14 scripts/halide-sliding-window-repro.cpp -lHalide14 \
//   -lpthread -ldl -o /tmp/repro && /tmp/repro
#include <Halide.h>
#include <cstdio>
#include <random>
using namespace Halide;
int main(int argc, char** argv) {
  const int w = 512, h = 384, nd = 16, cw = w + nd;
  Buffer<float> left(cw + 2, h + 2), right(cw + 2, h + 2);
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> u(0, 1);
  left.for_each_value([&](float& v) { v = u(rng); });
  right.for_each_value([&](float& v) { v = u(rng); });
  Target t = get_host_target().without_feature(Target::AVX512_SapphireRapids);
  Buffer<uint8_t> ref;
  for (int variant = 0; variant < 5; ++variant) {
    Var x("x"), y("y"), c("c");
    Func gl("gl"), gr("gr"), cl("cl"), cr("cr"), cost("cost"), best("best"), out("out");
    gl(x, y) = cast<uint8_t>(left(x, y) * 255.0f);
    gr(x, y) = cast<uint8_t>(right(x, y) * 255.0f);
    auto census = [&](Func g) {
      Expr bits = cast<uint8_t>(0);
      int bit = 0;
      for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 3; ++i) {
          if (i == 1 && j == 1) continue;
          bits = bits | select(g(x + i, y + j) < g(x + 1, y + 1), cast<uint8_t>(1 << bit),
                               cast<uint8_t>(0));
          ++bit;
        }
      return bits;
    };
    cl(x, y) = census(gl);
    cr(x, y) = census(gr);
    cost(x, y, c) = popcount(cl(x + nd, y) ^ cr(x + nd - c, y));
    RDom rd(0, nd);
    best(x, y) = Tuple(cast<uint8_t>(255), cast<uint8_t>(0));
    Expr better = cost(x, y, rd) < best(x, y)[0];
    best(x, y) = Tuple(select(better, cost(x, y, rd), best(x, y)[0]),
                       select(better, cast<uint8_t>(rd), best(x, y)[1]));
    out(x, y) = best(x, y)[1];
    if (variant == 0) {
      gl.compute_root();
      gr.compute_root();
      cl.compute_root();
      cr.compute_root();
      cost.compute_root();
      best.compute_root();
    } else {
      out.reorder(y, x).vectorize(y, 4).unroll(x, 2);
      best.compute_at(out, x)
          .reorder(y, x)
          .vectorize(y, 4, TailStrategy::GuardWithIf)
          .unroll(x, 2, TailStrategy::GuardWithIf);
      best.update(0)
          .reorder(y, rd.x, x)
          .vectorize(y, 4, TailStrategy::GuardWithIf)
          .unroll(x, 2, TailStrategy::GuardWithIf);
      cost.compute_at(out, x).reorder_storage(c, x, y).reorder(x, y, c);
      cr.compute_at(cost, c);
      if (variant != 2) cr.store_root();
      cr.reorder(x, y);
      if (variant != 3)
        cr.vectorize(x, 8, TailStrategy::GuardWithIf).unroll(y, 4, TailStrategy::GuardWithIf);
      gr.compute_at(cr, y)
          .reorder(x, y)
          .vectorize(x, 16, TailStrategy::GuardWithIf)
          .unroll(y, 4, TailStrategy::GuardWithIf);
      cl.compute_root().reorder_storage(y, x).reorder(y, x).parallel(x).vectorize(y, 4).unroll(x,
                                                                                               4);
      gl.compute_at(cl, x)
          .reorder(y, x)
          .vectorize(y, 4, TailStrategy::GuardWithIf)
          .unroll(x, 2, TailStrategy::GuardWithIf);
      if (variant == 4) {
        cr.compute_root();
      }
    }
    Buffer<uint8_t> o = out.realize({w, h}, t);
    if (variant == 0) {
      ref = o;
      continue;
    }
    int bad = 0;
    for (int yy = 0; yy < h; ++yy)
      for (int xx = 0; xx < w; ++xx) bad += o(xx, yy) != ref(xx, yy);
    std::printf("variant %d: %d of %d values differ\n", variant, bad, w * h);
  }
}
