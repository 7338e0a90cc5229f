// Halide generators the autoscheduler plugin is tested on (tests/plugin/plugin_test.sh). Each
// is compiled twice: under its default schedule and scheduled by TCost; their outputs must be
// equal. Between them they cover boundary conditions, RDom reductions (with updates over
// computed indices: histograms; and scans), several outputs, Tuple-valued Funcs, lookup tables
// indexed by computed values, up- and down-sampling, uint8 / uint16 / float types and scalar
// params. Every input, output and scalar param has an estimate.
#include <Halide.h>

namespace {

using namespace Halide;

Var x("x"), y("y"), c("c");

// 3x3 box blur of an 8-bit image behind a repeat-edge boundary condition.
class BoxBlurU8 : public Generator<BoxBlurU8> {
 public:
  Input<Buffer<uint8_t>> input{"input", 2};
  Output<Buffer<uint8_t>> output{"output", 2};
  void generate() {
    Func in = BoundaryConditions::repeat_edge(input);
    Func bx("bx");
    bx(x, y) = cast<uint16_t>(in(x - 1, y)) + in(x, y) + in(x + 1, y);
    output(x, y) = cast<uint8_t>((bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 9);
    input.set_estimates({{0, 320}, {0, 240}});
    output.set_estimates({{0, 320}, {0, 240}});
  }
};

// A 256-bin histogram of an 8-bit image: an update over computed indices.
class HistogramU8 : public Generator<HistogramU8> {
 public:
  Input<Buffer<uint8_t>> input{"input", 2};
  Output<Buffer<uint32_t>> output{"output", 1};
  void generate() {
    RDom r(0, input.width(), 0, input.height());
    Func h("hist");
    h(x) = cast<uint32_t>(0);
    h(cast<int>(input(r.x, r.y))) += cast<uint32_t>(1);
    output(x) = h(x);
    input.set_estimates({{0, 256}, {0, 192}});
    output.set_estimates({{0, 256}});
  }
};

// Running sums along rows of a float image: a scan.
class PrefixSum : public Generator<PrefixSum> {
 public:
  Input<Buffer<float>> input{"input", 2};
  Output<Buffer<float>> output{"output", 2};
  void generate() {
    Func s("scan");
    RDom r(1, 127);
    s(x, y) = input(x, y);
    s(r, y) = s(r - 1, y) + input(r, y);
    output(x, y) = s(x, y) * 0.5f;
    input.set_estimates({{0, 128}, {0, 96}});
    output.set_estimates({{0, 128}, {0, 96}});
  }
};

// Local minimum and maximum (a Tuple-valued Func) of a 16-bit image, written as two outputs.
class MinMaxU16 : public Generator<MinMaxU16> {
 public:
  Input<Buffer<uint16_t>> input{"input", 2};
  Output<Buffer<uint16_t>> lo{"lo", 2};
  Output<Buffer<uint16_t>> range{"range", 2};
  void generate() {
    Func in = BoundaryConditions::constant_exterior(input, cast<uint16_t>(0));
    Func mm("minmax");
    mm(x, y) = Tuple(min(in(x, y), min(in(x + 1, y), in(x, y + 1))),
                     max(in(x, y), max(in(x + 1, y), in(x, y + 1))));
    lo(x, y) = mm(x, y)[0];
    range(x, y) = mm(x, y)[1] - mm(x, y)[0];
    input.set_estimates({{0, 200}, {0, 150}});
    lo.set_estimates({{0, 200}, {0, 150}});
    range.set_estimates({{0, 200}, {0, 150}});
  }
};

// A tone curve (a lookup table computed from a scalar gamma) applied to each pixel's value.
class LookupTone : public Generator<LookupTone> {
 public:
  Input<Buffer<uint8_t>> input{"input", 3};
  Input<float> gamma{"gamma", 0.8f};
  Output<Buffer<uint8_t>> output{"output", 3};
  void generate() {
    Func lut("lut");
    Var i("i");
    lut(i) = cast<uint8_t>(clamp(pow(cast<float>(i) / 255.0f, gamma) * 255.0f + 0.5f, 0.f, 255.f));
    output(x, y, c) = lut(cast<int>(input(x, y, c)));
    input.set_estimates({{0, 256}, {0, 160}, {0, 3}});
    gamma.set_estimate(0.8f);
    output.set_estimates({{0, 256}, {0, 160}, {0, 3}});
  }
};

// Two levels down and back up (a Laplacian detail layer) of a 16-bit image.
class PyramidU16 : public Generator<PyramidU16> {
 public:
  Input<Buffer<uint16_t>> input{"input", 2};
  Output<Buffer<int32_t>> output{"output", 2};
  void generate() {
    Func in = BoundaryConditions::repeat_edge(input);
    Func f0("f0");
    f0(x, y) = cast<int32_t>(in(x, y));
    Func d1("d1"), d2("d2"), u1("u1"), u0("u0");
    d1(x, y) = (f0(2 * x, 2 * y) + f0(2 * x + 1, 2 * y) + f0(2 * x, 2 * y + 1) +
                f0(2 * x + 1, 2 * y + 1)) /
               4;
    d2(x, y) = (d1(2 * x, 2 * y) + d1(2 * x + 1, 2 * y) + d1(2 * x, 2 * y + 1) +
                d1(2 * x + 1, 2 * y + 1)) /
               4;
    u1(x, y) = (d2(x / 2, y / 2) + d2((x + 1) / 2, (y + 1) / 2)) / 2;
    u0(x, y) = (u1(x / 2, y / 2) + u1((x + 1) / 2, (y + 1) / 2)) / 2;
    output(x, y) = f0(x, y) - u0(x, y);
    input.set_estimates({{0, 256}, {0, 192}});
    output.set_estimates({{0, 256}, {0, 192}});
  }
};

// A 3x3 convolution with bias and ReLU, float weights as an input.
class ConvReluF32 : public Generator<ConvReluF32> {
 public:
  Input<Buffer<float>> input{"input", 3};
  Input<Buffer<float>> weights{"weights", 4};
  Input<Buffer<float>> bias{"bias", 1};
  Output<Buffer<float>> output{"output", 3};
  void generate() {
    RDom r(0, 3, 0, 3, 0, 16);
    Func conv("conv");
    conv(x, y, c) = bias(c);
    conv(x, y, c) += weights(r.x, r.y, r.z, c) * input(x + r.x, y + r.y, r.z);
    output(x, y, c) = max(conv(x, y, c), 0.0f);
    input.set_estimates({{0, 34}, {0, 34}, {0, 16}});
    weights.set_estimates({{0, 3}, {0, 3}, {0, 16}, {0, 16}});
    bias.set_estimates({{0, 16}});
    output.set_estimates({{0, 32}, {0, 32}, {0, 16}});
  }
};

// Matrix product of two float matrices.
class MatmulF32 : public Generator<MatmulF32> {
 public:
  Input<Buffer<float>> a{"a", 2};
  Input<Buffer<float>> b{"b", 2};
  Output<Buffer<float>> output{"output", 2};
  void generate() {
    RDom k(0, 96);
    Func mm("mm");
    mm(x, y) = 0.0f;
    mm(x, y) += a(k, y) * b(x, k);
    output(x, y) = mm(x, y);
    a.set_estimates({{0, 96}, {0, 96}});
    b.set_estimates({{0, 96}, {0, 96}});
    output.set_estimates({{0, 96}, {0, 96}});
  }
};

// Brightness and contrast with scalar params, saturating to 8 bits.
class BrightenParams : public Generator<BrightenParams> {
 public:
  Input<Buffer<uint8_t>> input{"input", 2};
  Input<float> gain{"gain", 1.2f};
  Input<int32_t> offset{"offset", 10};
  Output<Buffer<uint8_t>> output{"output", 2};
  void generate() {
    Func f("scaled");
    f(x, y) = cast<float>(input(x, y)) * gain + cast<float>(offset);
    output(x, y) = saturating_cast<uint8_t>(f(x, y));
    input.set_estimates({{0, 320}, {0, 200}});
    gain.set_estimate(1.2f);
    offset.set_estimate(10);
    output.set_estimates({{0, 320}, {0, 200}});
  }
};

// Softmax over the rows of a float matrix: two reductions and a normalisation.
class SoftmaxRows : public Generator<SoftmaxRows> {
 public:
  Input<Buffer<float>> input{"input", 2};
  Output<Buffer<float>> output{"output", 2};
  void generate() {
    RDom r(0, 128);
    Func mx("rowmax"), e("expo"), sum("rowsum");
    mx(y) = -1e30f;
    mx(y) = max(mx(y), input(r, y));
    e(x, y) = exp(input(x, y) - mx(y));
    sum(y) = 0.0f;
    sum(y) += e(r, y);
    output(x, y) = e(x, y) / sum(y);
    input.set_estimates({{0, 128}, {0, 64}});
    output.set_estimates({{0, 128}, {0, 64}});
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(BoxBlurU8, box_blur_u8)
HALIDE_REGISTER_GENERATOR(HistogramU8, histogram_u8)
HALIDE_REGISTER_GENERATOR(PrefixSum, prefix_sum)
HALIDE_REGISTER_GENERATOR(MinMaxU16, minmax_u16)
HALIDE_REGISTER_GENERATOR(LookupTone, lookup_tone)
HALIDE_REGISTER_GENERATOR(PyramidU16, pyramid_u16)
HALIDE_REGISTER_GENERATOR(ConvReluF32, conv_relu_f32)
HALIDE_REGISTER_GENERATOR(MatmulF32, matmul_f32)
HALIDE_REGISTER_GENERATOR(BrightenParams, brighten_params)
HALIDE_REGISTER_GENERATOR(SoftmaxRows, softmax_rows)

namespace {

// No estimate on its output: the plugin must say which one is missing.
class NoEstimates : public Halide::Generator<NoEstimates> {
 public:
  Input<Halide::Buffer<float>> input{"input", 2};
  Output<Halide::Buffer<float>> output{"output", 2};
  void generate() {
    output(x, y) = input(x, y) * 2.0f;
    input.set_estimates({{0, 64}, {0, 64}});
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(NoEstimates, no_estimates)
