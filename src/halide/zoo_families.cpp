// The families of the zoo. Conventions: x is the innermost (contiguous) dimension; images are
// (x, y, channel), matrices (column, row), token activations (feature, token). Stages are
// registered producers first; the last is the output. Shapes come from ResNet-50, MobileNetV2,
// BERT-base and camera pipelines, scaled to run in milliseconds on a 2-core machine (the best
// measured schedules take 0.04-9 ms; docs/collect.md). Opcodes map Halide stages onto the XLA
// table (docs/formats.md).
#include "halide/zoo_impl.h"

namespace tcost::halide::zoo {
namespace {

using namespace Halide;

Var x("x"), y("y"), c("c"), t("t");

Expr relu(const Expr& e) { return max(e, 0.0f); }
Expr relu6(const Expr& e) { return clamp(e, 0.0f, 6.0f); }

// Registers a bias + convolution stage over `in` (a Func or buffer access) with a k x k window:
// out(x, y, co) = bias(co) + sum w(rx, ry, ci, co) * in(x + rx, y + ry, ci).
template <typename In>
Func conv(Builder& b, const std::string& name, const In& in, int k, int cin, int cout) {
  Buffer<float> w = b.input(name + "_w", {k, k, cin, cout});
  Buffer<float> bias = b.input(name + "_b", {cout});
  Func f(name);
  RDom r(0, k, 0, k, 0, cin);
  f(x, y, c) = bias(c);
  f(x, y, c) += w(r.x, r.y, r.z, c) * in(x + r.x, y + r.y, r.z);
  return f;
}

// 1 x 1 convolution: out(x, y, co) = bias(co) + sum w(ci, co) * in(x + off, y + off, ci).
template <typename In>
Func conv1x1(Builder& b, const std::string& name, const In& in, int cin, int cout, int off = 0) {
  Buffer<float> w = b.input(name + "_w", {cin, cout});
  Buffer<float> bias = b.input(name + "_b", {cout});
  Func f(name);
  RDom r(0, cin);
  f(x, y, c) = bias(c);
  f(x, y, c) += w(r, c) * in(x + off, y + off, r);
  return f;
}

// Depthwise 3 x 3: out(x, y, c) = bias(c) + sum w(rx, ry, c) * in(x + rx, y + ry, c).
template <typename In>
Func depthwise(Builder& b, const std::string& name, const In& in, int ch) {
  Buffer<float> w = b.input(name + "_w", {3, 3, ch});
  Buffer<float> bias = b.input(name + "_b", {ch});
  Func f(name);
  RDom r(0, 3, 0, 3);
  f(x, y, c) = bias(c);
  f(x, y, c) += w(r.x, r.y, c) * in(x + r.x, y + r.y, c);
  return f;
}

// A stage without reduction: f(x, y[, c]) = e (the rank of dims).
Func pointwise(Builder&, const std::string& name, const Expr& e, const std::vector<int>& dims) {
  Func f(name);
  if (dims.size() == 3) {
    f(x, y, c) = e;
  } else {
    f(x, y) = e;
  }
  return f;
}

// ---- Dense algebra --------------------------------------------------------------------------

// C = A B, or C = A^T B: the same product with A read along its columns instead of its rows.
void product(Builder& b, const std::string& name, int n, bool a_transposed) {
  Buffer<float> A = b.input("A", {n, n}), B = b.input("B", {n, n});
  Func f(name);
  RDom k(0, n);
  f(x, y) = 0.0f;
  f(x, y) += (a_transposed ? A(y, k) : A(k, y)) * B(x, k);
  b.output(f, {n, n});
}

void matmul(Builder& b, const std::vector<int>& s) {  // n x n x n
  product(b, "matmul", s[0], false);
}

void batched_matmul(Builder& b, const std::vector<int>& s) {  // batch, n
  const int nb = s[0], n = s[1];
  Buffer<float> A = b.input("A", {n, n, nb}), B = b.input("B", {n, n, nb});
  Func f("bmm");
  RDom k(0, n);
  f(x, y, c) = 0.0f;
  f(x, y, c) += A(k, y, c) * B(x, k, c);
  b.output(f, {n, n, nb});
}

// Scaled dot-product attention per head: softmax(Q K^T / sqrt(d)) V.
void attention(Builder& b, const std::vector<int>& s) {  // heads, sequence, head dim
  const int h = s[0], n = s[1], d = s[2];
  Buffer<float> Q = b.input("Q", {d, n, h}), K = b.input("K", {d, n, h}),
                V = b.input("V", {d, n, h});
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  RDom rd(0, d), rj(0, n);
  Func scores("scores"), rowmax("rowmax"), expo("expo"), rowsum("rowsum"), prob("prob"),
      out("attn_out");
  scores(x, y, c) = 0.0f;  // x: key j, y: query i, c: head
  scores(x, y, c) += Q(rd, y, c) * K(rd, x, c);
  rowmax(y, c) = Float(32).min();
  rowmax(y, c) = max(rowmax(y, c), scores(rj, y, c));
  expo(x, y, c) = exp((scores(x, y, c) - rowmax(y, c)) * scale);
  rowsum(y, c) = 0.0f;
  rowsum(y, c) += expo(rj, y, c);
  prob(x, y, c) = expo(x, y, c) / rowsum(y, c);
  out(x, y, c) = 0.0f;  // x: feature, y: query
  out(x, y, c) += prob(rj, y, c) * V(x, rj, c);
  b.output(out, {d, n, h});
}

void softmax(Builder& b, const std::vector<int>& s) {  // columns, rows
  const int n = s[0], rows = s[1];
  Buffer<float> in = b.input("logits", {n, rows}, -4.0f, 4.0f);
  RDom r(0, n);
  Func rowmax("rowmax"), expo("expo"), rowsum("rowsum"), out("softmax");
  rowmax(y) = Float(32).min();
  rowmax(y) = max(rowmax(y), in(r, y));
  expo(x, y) = exp(in(x, y) - rowmax(y));
  rowsum(y) = 0.0f;
  rowsum(y) += expo(r, y);
  out(x, y) = expo(x, y) / rowsum(y);
  b.output(out, {n, rows});
}

void layernorm(Builder& b, const std::vector<int>& s) {  // features, tokens
  const int d = s[0], n = s[1];
  Buffer<float> in = b.input("tokens", {d, n});
  Buffer<float> gamma = b.input("gamma", {d}), beta = b.input("beta", {d});
  RDom r(0, d);
  Func mean("mean"), var("var"), out("layernorm");
  mean(y) = 0.0f;
  mean(y) += in(r, y) / d;
  var(y) = 0.0f;
  var(y) += (in(r, y) - mean(y)) * (in(r, y) - mean(y)) / d;
  out(x, y) = (in(x, y) - mean(y)) * (1.0f / sqrt(var(y) + 1e-5f)) * gamma(x) + beta(x);
  b.output(out, {d, n});
}

// BERT's feed-forward block: dense, GELU (tanh form), dense; the hidden layer is 4x wider.
void transformer_mlp(Builder& b, const std::vector<int>& s) {  // tokens, features
  const int n = s[0], d = s[1], ff = 4 * s[1];
  Buffer<float> in = b.input("tokens", {d, n});
  Buffer<float> w1 = b.input("w1", {ff, d}), b1 = b.input("b1", {ff});
  Buffer<float> w2 = b.input("w2", {d, ff}), b2 = b.input("b2", {d});
  RDom rd(0, d), rf(0, ff);
  Func h("dense1"), g("gelu"), out("dense2");
  h(x, y) = b1(x);
  h(x, y) += w1(x, rd) * in(rd, y);
  const Expr v = h(x, y);
  g(x, y) = 0.5f * v * (1.0f + tanh(0.7978846f * (v + 0.044715f * v * v * v)));
  out(x, y) = b2(x);
  out(x, y) += w2(x, rf) * g(rf, y);
  b.output(out, {d, n});
}

// ---- Convolutional networks -----------------------------------------------------------------

void conv3x3(Builder& b, const std::vector<int>& s) {  // size, c_in, c_out
  const int n = s[0], cin = s[1], cout = s[2];
  Buffer<float> in = b.input("image", {n + 2, n + 2, cin});
  Func cv = conv(b, "conv", in, 3, cin, cout);
  b.output(pointwise(b, "relu", relu(cv(x, y, c)), {n, n, cout}), {n, n, cout});
}

void conv1x1_block(Builder& b, const std::vector<int>& s) {  // size, c_in, c_out
  const int n = s[0], cin = s[1], cout = s[2];
  Buffer<float> in = b.input("image", {n, n, cin});
  Func cv = conv1x1(b, "conv", in, cin, cout);
  b.output(pointwise(b, "relu", relu(cv(x, y, c)), {n, n, cout}), {n, n, cout});
}

void depthwise_block(Builder& b, const std::vector<int>& s) {  // size, channels
  const int n = s[0], ch = s[1];
  Buffer<float> in = b.input("image", {n + 2, n + 2, ch});
  Func dw = depthwise(b, "dwconv", in, ch);
  b.output(pointwise(b, "relu6", relu6(dw(x, y, c)), {n, n, ch}), {n, n, ch});
}

void maxpool(Builder& b, const std::vector<int>& s) {  // output size, channels; 3x3 stride 2
  const int n = s[0], ch = s[1];
  Buffer<float> in = b.input("image", {2 * n + 1, 2 * n + 1, ch});
  RDom r(0, 3, 0, 3);
  Func f("maxpool");
  f(x, y, c) = Float(32).min();
  f(x, y, c) = max(f(x, y, c), in(2 * x + r.x, 2 * y + r.y, c));
  b.output(f, {n, n, ch});
}

// ResNet basic block: conv3x3-ReLU-conv3x3, plus the input, ReLU.
void resnet_basic(Builder& b, const std::vector<int>& s) {  // size, channels
  const int n = s[0], ch = s[1];
  Buffer<float> in = b.input("image", {n + 4, n + 4, ch});
  Func c1 = conv(b, "conv1", in, 3, ch, ch);
  Func r1 = pointwise(b, "relu1", relu(c1(x, y, c)), {n + 2, n + 2, ch});
  Func c2 = conv(b, "conv2", r1, 3, ch, ch);
  b.output(pointwise(b, "out", relu(c2(x, y, c) + in(x + 2, y + 2, c)), {n, n, ch}), {n, n, ch});
}

// ResNet bottleneck: 1x1 reduce, 3x3, 1x1 expand, plus the input, ReLU.
void resnet_bottleneck(Builder& b, const std::vector<int>& s) {  // size, channels, width
  const int n = s[0], ch = s[1], mid = s[2];
  Buffer<float> in = b.input("image", {n + 2, n + 2, ch});
  Func c1 = conv1x1(b, "conv1", in, ch, mid);
  Func r1 = pointwise(b, "relu1", relu(c1(x, y, c)), {n + 2, n + 2, mid});
  Func c2 = conv(b, "conv2", r1, 3, mid, mid);
  Func r2 = pointwise(b, "relu2", relu(c2(x, y, c)), {n, n, mid});
  Func c3 = conv1x1(b, "conv3", r2, mid, ch);
  b.output(pointwise(b, "out", relu(c3(x, y, c) + in(x + 1, y + 1, c)), {n, n, ch}), {n, n, ch});
}

// MobileNetV2 inverted residual: 1x1 expand (6x), ReLU6, depthwise 3x3, ReLU6, 1x1 project,
// plus the input.
void mobilenet_v2_block(Builder& b, const std::vector<int>& s) {  // size, channels
  const int n = s[0], ch = s[1], e = 6 * s[1];
  Buffer<float> in = b.input("image", {n + 2, n + 2, ch});
  Func c1 = conv1x1(b, "expand", in, ch, e);
  Func r1 = pointwise(b, "relu6_1", relu6(c1(x, y, c)), {n + 2, n + 2, e});
  Func dw = depthwise(b, "dwconv", r1, e);
  Func r2 = pointwise(b, "relu6_2", relu6(dw(x, y, c)), {n, n, e});
  Func pr = conv1x1(b, "project", r2, e, ch);
  b.output(pointwise(b, "out", pr(x, y, c) + in(x + 1, y + 1, c), {n, n, ch}), {n, n, ch});
}

// ResNet's classifier head: global average pooling, then a dense layer.
void classifier_head(Builder& b, const std::vector<int>& s) {  // size, channels, classes
  const int n = s[0], ch = s[1], classes = s[2];
  Buffer<float> in = b.input("features", {n, n, ch});
  Buffer<float> w = b.input("fc_w", {classes, ch}), bias = b.input("fc_b", {classes});
  RDom r(0, n, 0, n), rc(0, ch);
  Func gap("avgpool"), fc("fc");
  gap(x) = 0.0f;
  gap(x) += in(r.x, r.y, x) / (n * n);
  fc(x) = bias(x);
  fc(x) += w(x, rc) * gap(rc);
  b.output(fc, {classes});
}

// ---- Image pipelines ------------------------------------------------------------------------

void gaussian_blur(Builder& b, const std::vector<int>& s) {  // width, height; 3 channels
  const int w = s[0], h = s[1];
  Buffer<float> in = b.input("image", {w + 4, h + 4, 3}, 0.0f, 1.0f);
  const float k[5] = {1 / 16.0f, 4 / 16.0f, 6 / 16.0f, 4 / 16.0f, 1 / 16.0f};
  Expr ex = 0.0f;
  for (int i = 0; i < 5; ++i) ex += k[i] * in(x + i, y, c);
  Func bx = pointwise(b, "blur_x", ex, {w, h + 4, 3});
  Expr ey = 0.0f;
  for (int i = 0; i < 5; ++i) ey += k[i] * bx(x, y + i, c);
  b.output(pointwise(b, "blur_y", ey, {w, h, 3}), {w, h, 3});
}

Expr luma(const Buffer<float>& rgb, const Expr& px, const Expr& py) {
  return 0.299f * rgb(px, py, 0) + 0.587f * rgb(px, py, 1) + 0.114f * rgb(px, py, 2);
}

// Sobel gradients of g in x and y over the 3x3 window from (x, y) to (x + 2, y + 2).
Expr sobel_x(Func g) {
  return (g(x + 2, y) - g(x, y)) + 2 * (g(x + 2, y + 1) - g(x, y + 1)) +
         (g(x + 2, y + 2) - g(x, y + 2));
}
Expr sobel_y(Func g) {
  return (g(x, y + 2) - g(x, y)) + 2 * (g(x + 1, y + 2) - g(x + 1, y)) +
         (g(x + 2, y + 2) - g(x + 2, y));
}

// Sobel edge magnitude of the luma of an RGB image.
void sobel(Builder& b, const std::vector<int>& s) {  // width, height
  const int w = s[0], h = s[1];
  Buffer<float> in = b.input("image", {w + 2, h + 2, 3}, 0.0f, 1.0f);
  Func g = pointwise(b, "gray", luma(in, x, y), {w + 2, h + 2});
  Func gx = pointwise(b, "grad_x", sobel_x(g), {w, h});
  Func gy = pointwise(b, "grad_y", sobel_y(g), {w, h});
  b.output(pointwise(b, "magnitude", sqrt(gx(x, y) * gx(x, y) + gy(x, y) * gy(x, y)), {w, h}),
           {w, h});
}

// Histogram equalisation of a grey image in [0, 1]: histogram (a scatter), cumulative sum (a
// scan), then a lookup per pixel.
void histogram_equalize(Builder& b, const std::vector<int>& s) {  // width, height
  const int w = s[0], h = s[1];
  Buffer<float> in = b.input("image", {w, h}, 0.0f, 1.0f);
  const auto bin = [&](const Expr& px, const Expr& py) {
    return clamp(cast<int>(in(px, py) * 255.0f), 0, 255);
  };
  RDom r(0, w, 0, h), ri(1, 255);
  Func hist("histogram"), cdf("cdf"), out("equalized");
  hist(x) = 0.0f;
  hist(bin(r.x, r.y)) += 1.0f;
  cdf(x) = hist(x);
  cdf(ri) = cdf(ri - 1) + hist(ri);
  out(x, y) = cdf(bin(x, y)) * (1.0f / (static_cast<float>(w) * h));
  b.output(out, {w, h});
}

// Separable [1 3 3 1] / 8 filter and 2x decimation, in x then y.
template <typename In>
Func downsample(Builder& b, const std::string& name, const In& in, int w, int h) {
  Func dx =
      pointwise(b, name + "_x",
                (in(2 * x, y) + 3 * in(2 * x + 1, y) + 3 * in(2 * x + 2, y) + in(2 * x + 3, y)) / 8,
                {w / 2, h});
  return pointwise(
      b, name, (dx(x, 2 * y) + 3 * dx(x, 2 * y + 1) + 3 * dx(x, 2 * y + 2) + dx(x, 2 * y + 3)) / 8,
      {w / 2, h / 2});
}

// Bilinear 2x upsampling (an XLA upsample is a broadcast).
template <typename In>
Func upsample(Builder& b, const std::string& name, const In& in, int w, int h) {
  return pointwise(b, name,
                   0.25f * (in(x / 2, y / 2) + in((x + 1) / 2, y / 2) + in(x / 2, (y + 1) / 2) +
                            in((x + 1) / 2, (y + 1) / 2)),
                   {w, h});
}

// Two levels of a Gaussian pyramid down, two up, and the detail layer (input minus the
// reconstruction).
void pyramid(Builder& b, const std::vector<int>& s) {  // width, height
  const int w = s[0], h = s[1];
  Buffer<float> in = b.input("image", {w, h}, 0.0f, 1.0f);
  Func d1 = downsample(b, "down1", in, w, h);
  Func d2 = downsample(b, "down2", d1, w / 2, h / 2);
  Func u1 = upsample(b, "up1", d2, w / 2, h / 2);
  Func u0 = upsample(b, "up0", u1, w, h);
  b.output(pointwise(b, "detail", in(x, y) - u0(x, y), {w, h}), {w, h});
}

// Separable 3x3 erosion (min) or dilation (max).
template <typename In>
Func morph(Builder& b, const std::string& name, bool dilate, const In& in, int w, int h) {
  const auto op = [&](const Expr& a, const Expr& c2) { return dilate ? max(a, c2) : min(a, c2); };
  Func fx = pointwise(b, name + "_x", op(op(in(x, y), in(x + 1, y)), in(x + 2, y)), {w, h + 2});
  return pointwise(b, name, op(op(fx(x, y), fx(x, y + 1)), fx(x, y + 2)), {w, h});
}

void morph_chain(Builder& b, const std::vector<int>& s, bool closing) {
  const int w = s[0], h = s[1];
  Buffer<float> in = b.input("image", {w + 4, h + 4}, 0.0f, 1.0f);
  Func first = morph(b, closing ? "dilate" : "erode", closing, in, w + 2, h + 2);
  b.output(morph(b, closing ? "erode" : "dilate", !closing, first, w, h), {w, h});
}
void morph_open(Builder& b, const std::vector<int>& s) { morph_chain(b, s, false); }
void morph_close(Builder& b, const std::vector<int>& s) { morph_chain(b, s, true); }

// RGB to YCbCr, a tone curve (a 256-entry lookup table) on luma, back to RGB.
void colour_tone(Builder& b, const std::vector<int>& s) {  // width, height
  const int w = s[0], h = s[1];
  Buffer<float> in = b.input("image", {w, h, 3}, 0.0f, 1.0f);
  Func curve("tone_curve");
  curve(x) = pow(cast<float>(x) / 255.0f, 0.75f);
  const Expr r = in(x, y, 0), g = in(x, y, 1), bl = in(x, y, 2);
  Func ycc = pointwise(
      b, "ycbcr",
      select(c == 0, 0.299f * r + 0.587f * g + 0.114f * bl, c == 1,
             -0.1687f * r - 0.3313f * g + 0.5f * bl, 0.5f * r - 0.4187f * g - 0.0813f * bl),
      {w, h, 3});
  Func toned = pointwise(
      b, "toned",
      select(c == 0, curve(clamp(cast<int>(ycc(x, y, 0) * 255.0f), 0, 255)), ycc(x, y, c)),
      {w, h, 3});
  const Expr yy = toned(x, y, 0), cb = toned(x, y, 1), cr = toned(x, y, 2);
  b.output(pointwise(b, "rgb",
                     select(c == 0, yy + 1.402f * cr, c == 1, yy - 0.3441f * cb - 0.7141f * cr,
                            yy + 1.772f * cb),
                     {w, h, 3}),
           {w, h, 3});
}

// Harris corner response: gradients, their products, 3x3 box sums, det - k trace^2.
void harris(Builder& b, const std::vector<int>& s) {  // width, height
  const int w = s[0], h = s[1];
  Buffer<float> in = b.input("image", {w + 4, h + 4, 3}, 0.0f, 1.0f);
  Func g = pointwise(b, "gray", luma(in, x, y), {w + 4, h + 4});
  Func ix = pointwise(b, "grad_x", sobel_x(g), {w + 2, h + 2});
  Func iy = pointwise(b, "grad_y", sobel_y(g), {w + 2, h + 2});
  Func ixx = pointwise(b, "ixx", ix(x, y) * ix(x, y), {w + 2, h + 2});
  Func iyy = pointwise(b, "iyy", iy(x, y) * iy(x, y), {w + 2, h + 2});
  Func ixy = pointwise(b, "ixy", ix(x, y) * iy(x, y), {w + 2, h + 2});
  const auto box = [&](const std::string& name, Func f) {
    Expr e = 0.0f;
    for (int j = 0; j < 3; ++j) {
      for (int i = 0; i < 3; ++i) e += f(x + i, y + j);
    }
    return pointwise(b, name, e, {w, h});
  };
  Func sxx = box("sxx", ixx), syy = box("syy", iyy), sxy = box("sxy", ixy);
  const Expr det = sxx(x, y) * syy(x, y) - sxy(x, y) * sxy(x, y);
  const Expr trace = sxx(x, y) + syy(x, y);
  b.output(pointwise(b, "response", det - 0.04f * trace * trace, {w, h}), {w, h});
}

// ---- Grown zoo (2026-11-30): integer images, scans, linear algebra, multi-output ---------

// 3x3 box blur of a 12-bit image in uint16 (sums of three fit), separable.
void box_blur_u16(Builder& b, const std::vector<int>& s) {  // width, height
  const int w = s[0], h = s[1];
  Buffer<float> in = b.input("image", {w + 2, h + 2}, 0.0f, 1.0f);
  Func q = pointwise(b, "quantize", cast<uint16_t>(in(x, y) * 4095.0f), {w + 2, h + 2});
  Func bx = pointwise(b, "blur_x", q(x, y) + q(x + 1, y) + q(x + 2, y), {w, h + 2});
  b.output(pointwise(b, "blur_y", (bx(x, y) + bx(x, y + 1) + bx(x, y + 2)) / 9, {w, h}), {w, h});
}

// Unsharp mask of an 8-bit image: 2 * image - blur, saturated back to uint8.
void unsharp_u8(Builder& b, const std::vector<int>& s) {  // width, height
  const int w = s[0], h = s[1];
  Buffer<float> in = b.input("image", {w + 4, h + 4}, 0.0f, 1.0f);
  Func g = pointwise(b, "to_u8", cast<uint8_t>(in(x, y) * 255.0f), {w + 4, h + 4});
  const auto wide = [&](Func f, const Expr& px, const Expr& py) {
    return cast<uint16_t>(f(px, py));
  };
  Func bx = pointwise(b, "blur_x",
                      wide(g, x, y) + 4 * wide(g, x + 1, y) + 6 * wide(g, x + 2, y) +
                          4 * wide(g, x + 3, y) + wide(g, x + 4, y),
                      {w, h + 4});
  Func by = pointwise(
      b, "blur_y",
      (bx(x, y) + 4 * bx(x, y + 1) + 6 * bx(x, y + 2) + 4 * bx(x, y + 3) + bx(x, y + 4)) / 256,
      {w, h});
  const Expr sharp = 2 * cast<int16_t>(g(x + 2, y + 2)) - cast<int16_t>(by(x, y));
  b.output(pointwise(b, "sharpen", cast<uint8_t>(clamp(sharp, 0, 255)), {w, h}), {w, h});
}

// A first-order recursive (IIR) smoothing filter along rows, then back along them: two scans.
void iir_rows(Builder& b, const std::vector<int>& s) {  // width, height
  const int w = s[0], h = s[1];
  Buffer<float> in = b.input("image", {w, h}, 0.0f, 1.0f);
  const float a = 0.3f;
  RDom r(1, w - 1);
  Func fwd("forward"), bwd("backward");
  fwd(x, y) = in(x, y);
  fwd(r, y) = a * in(r, y) + (1 - a) * fwd(r - 1, y);
  bwd(x, y) = fwd(x, y);
  bwd(w - 1 - r, y) = a * fwd(w - 1 - r, y) + (1 - a) * bwd(w - r, y);
  b.output(pointwise(b, "smoothed", 0.5f * (bwd(x, y) + fwd(x, y)), {w, h}), {w, h});
}

// Box filter through an integral image (summed-area table: a scan along x, then along y).
void integral_box(Builder& b, const std::vector<int>& s) {  // width, height, radius
  const int w = s[0], h = s[1], k = s[2];
  const int iw = w + 2 * k + 1, ih = h + 2 * k + 1;
  Buffer<float> in = b.input("image", {iw, ih}, 0.0f, 1.0f);
  RDom rx(1, iw - 1), ry(1, ih - 1);
  Func sx("sum_x"), sxy("sum_xy");
  sx(x, y) = in(x, y);
  sx(rx, y) = sx(rx - 1, y) + in(rx, y);
  sxy(x, y) = sx(x, y);
  sxy(x, ry) = sxy(x, ry - 1) + sx(x, ry);
  const int d = 2 * k + 1;
  b.output(pointwise(b, "box",
                     (sxy(x + d, y + d) - sxy(x, y + d) - sxy(x + d, y) + sxy(x, y)) /
                         static_cast<float>(d * d),
                     {w, h}),
           {w, h});
}

// Matrix-vector products: y = tanh(A x + b), a batch of vectors (a GEMV per column of X).
void gemv(Builder& b, const std::vector<int>& s) {  // rows, columns, vectors
  const int m = s[0], n = s[1], nv = s[2];
  Buffer<float> A = b.input("matrix", {n, m}), X = b.input("vectors", {n, nv}),
                bias = b.input("bias", {m});
  RDom k(0, n);
  Func f("gemv");
  f(x, y) = bias(x);
  f(x, y) += A(k, x) * X(k, y);
  b.output(pointwise(b, "activation", tanh(f(x, y)), {m, nv}), {m, nv});
}

// Per-row statistics, two outputs: the mean and the standard deviation of each row.
void row_stats(Builder& b, const std::vector<int>& s) {  // columns, rows
  const int n = s[0], rows = s[1];
  Buffer<float> in = b.input("values", {n, rows}, 0.0f, 4.0f);
  RDom r(0, n);
  Func sum("row_sum"), sq("row_sumsq"), mean("mean"), sd("stddev");
  sum(y) = 0.0f;
  sum(y) += in(r, y);
  sq(y) = 0.0f;
  sq(y) += in(r, y) * in(r, y);
  mean(y) = sum(y) / n;
  sd(y) = sqrt(max(sq(y) / n - mean(y) * mean(y), 0.0f));
  b.output(mean, {rows});
  b.output(sd, {rows});
}

// Arg-max of each row (a Tuple-valued reduction: the value and its index), then a one-hot mask.
void argmax_rows(Builder& b, const std::vector<int>& s) {  // columns, rows
  const int n = s[0], rows = s[1];
  Buffer<float> in = b.input("logits", {n, rows}, -4.0f, 4.0f);
  RDom r(0, n);
  Func am("argmax");
  am(y) = Tuple(Float(32).min(), 0);
  am(y) = Tuple(select(in(r, y) > am(y)[0], in(r, y), am(y)[0]),
                select(in(r, y) > am(y)[0], r, am(y)[1]));
  b.output(pointwise(b, "one_hot", select(am(y)[1] == x, 1.0f, 0.0f), {n, rows}), {n, rows});
}

// ResNet's downsampling convolution: 3x3, stride 2, then ReLU.
void conv_stride2(Builder& b, const std::vector<int>& s) {  // output size, c_in, c_out
  const int n = s[0], cin = s[1], cout = s[2];
  Buffer<float> in = b.input("image", {2 * n + 1, 2 * n + 1, cin});
  Buffer<float> wt = b.input("conv_w", {3, 3, cin, cout}), bias = b.input("conv_b", {cout});
  RDom r(0, 3, 0, 3, 0, cin);
  Func cv("conv");
  cv(x, y, c) = bias(c);
  cv(x, y, c) += wt(r.x, r.y, r.z, c) * in(2 * x + r.x, 2 * y + r.y, r.z);
  b.output(pointwise(b, "relu", relu(cv(x, y, c)), {n, n, cout}), {n, n, cout});
}

// One LSTM step for a batch: gates from the input and the hidden state (two products), then
// the cell and hidden updates; the new hidden state is the output.
void lstm_cell(Builder& b, const std::vector<int>& s) {  // hidden, inputs, batch
  const int hd = s[0], in_d = s[1], nb = s[2];
  Buffer<float> X = b.input("x", {in_d, nb}), H = b.input("h", {hd, nb}),
                C = b.input("cell", {hd, nb});
  Buffer<float> W = b.input("W", {4 * hd, in_d}), U = b.input("U", {4 * hd, hd}),
                bias = b.input("bias", {4 * hd});
  RDom ri(0, in_d), rh(0, hd);
  Func gx("gates_x"), gates("gates");
  gx(x, y) = bias(x);
  gx(x, y) += W(x, ri) * X(ri, y);
  gates(x, y) = gx(x, y);
  gates(x, y) += U(x, rh) * H(rh, y);
  const auto sigmoid = [](const Expr& e) { return 1.0f / (1.0f + exp(-e)); };
  Func cell = pointwise(
      b, "new_cell",
      sigmoid(gates(x + hd, y)) * C(x, y) + sigmoid(gates(x, y)) * tanh(gates(x + 2 * hd, y)),
      {hd, nb});
  b.output(pointwise(b, "new_hidden", sigmoid(gates(x + 3 * hd, y)) * tanh(cell(x, y)), {hd, nb}),
           {hd, nb});
}

// ---- Grown zoo, second round (2026-11-30): stencil chains, scatters, gathers, recurrences ----

// A 3x3 [1 2 1] x [1 2 1] / 16 blur over `in` (a Func or buffer access), computed over (w, h).
template <typename In>
Func blur3x3(Builder& b, const std::string& name, const In& in, int w, int h) {
  const float k[3] = {1.0f, 2.0f, 1.0f};
  Expr e = 0.0f;
  for (int j = 0; j < 3; ++j) {
    for (int i = 0; i < 3; ++i) e += (k[i] * k[j] / 16.0f) * in(x + i, y + j);
  }
  return pointwise(b, name, e, {w, h});
}

// A chain of four 3x3 blurs, each reading the last (Halide's stencil_chain app, shortened).
void stencil_chain(Builder& b, const std::vector<int>& s) {  // width, height
  const int w = s[0], h = s[1];
  Buffer<float> in = b.input("image", {w + 8, h + 8}, 0.0f, 1.0f);
  Func f = blur3x3(b, "stencil_1", in, w + 6, h + 6);
  f = blur3x3(b, "stencil_2", f, w + 4, h + 4);
  f = blur3x3(b, "stencil_3", f, w + 2, h + 2);
  b.output(blur3x3(b, "stencil_4", f, w, h), {w, h});
}

// The bilateral grid (Chen et al. 2007): a scatter of 8x8 pixel blocks into a grid of
// intensity bins (value and weight interleaved along z), a [1 2 1] blur of the grid along z, x
// and y, and a slice, interpolated along z, back at every pixel.
void bilateral_grid(Builder& b, const std::vector<int>& s) {  // width, height
  const int w = s[0], h = s[1], sp = 8, bins = 16;
  const int gw = w / sp, gh = h / sp;
  Buffer<float> in = b.input("image", {(gw + 2) * sp, (gh + 2) * sp}, 0.0f, 1.0f);
  RDom r(0, sp, 0, sp, 0, 2);
  const Expr v = in(x * sp + r.x, y * sp + r.y);
  const Expr zi = clamp(cast<int>(v * (bins - 1) + 0.5f), 0, bins - 1);
  Func grid("grid"), bz("grid_blur_z"), bx("grid_blur_x"), by("grid_blur_y"), out("sliced");
  grid(x, y, c) = 0.0f;
  grid(x, y, 2 * zi + 2 + r.z) += select(r.z == 0, v, 1.0f);
  bz(x, y, c) = grid(x, y, c) + 2.0f * grid(x, y, c + 2) + grid(x, y, c + 4);
  bx(x, y, c) = bz(x, y, c) + 2.0f * bz(x + 1, y, c) + bz(x + 2, y, c);
  by(x, y, c) = bx(x, y, c) + 2.0f * bx(x, y + 1, c) + bx(x, y + 2, c);
  const Expr zv = in(x + sp, y + sp) * (bins - 1);
  const Expr z0 = clamp(cast<int>(zv), 0, bins - 2);
  const Expr zf = zv - z0;
  const Expr xi = x / sp, yi = y / sp;
  const Expr num = lerp(by(xi, yi, 2 * z0), by(xi, yi, 2 * z0 + 2), zf);
  const Expr den = lerp(by(xi, yi, 2 * z0 + 1), by(xi, yi, 2 * z0 + 3), zf);
  out(x, y) = num / max(den, 1e-6f);
  b.output(out, {w, h});
}

// Segment sums (a scatter-add, as in an embedding's gradient): rows of values added into the
// row of their segment id, then scaled.
void segment_sum(Builder& b, const std::vector<int>& s) {  // features, rows, segments
  const int d = s[0], n = s[1], segs = s[2];
  Buffer<float> vals = b.input("values", {d, n}), ids = b.input("segment_ids", {n}, 0.0f, 1.0f);
  RDom r(0, n);
  Func sum("segment_sum");
  sum(x, y) = 0.0f;
  sum(x, clamp(cast<int>(ids(r) * segs), 0, segs - 1)) += vals(x, r);
  b.output(pointwise(b, "scaled", sum(x, y) * (static_cast<float>(segs) / n), {d, segs}),
           {d, segs});
}

// An embedding bag (DLRM's sparse features): a gather of table rows by index, summed per bag,
// then a dense projection with ReLU.
void embedding_bag(Builder& b, const std::vector<int>& s) {  // dim, vocabulary, bag, bags
  const int d = s[0], vocab = s[1], len = s[2], bags = s[3];
  Buffer<float> table = b.input("table", {d, vocab}),
                idx = b.input("indices", {len, bags}, 0.0f, 1.0f), W = b.input("proj_w", {d, d}),
                bias = b.input("proj_b", {d});
  RDom r(0, len), k(0, d);
  Func bag("bag"), proj("projection");
  bag(x, y) = 0.0f;
  bag(x, y) += table(x, clamp(cast<int>(idx(r, y) * vocab), 0, vocab - 1));
  proj(x, y) = bias(x);
  proj(x, y) += W(x, k) * bag(k, y) * (1.0f / len);
  b.output(pointwise(b, "relu", relu(proj(x, y)), {d, bags}), {d, bags});
}

// A 3x3 median of an 8-bit image by a min/max network: each column sorted, then the median of
// the columns' minima, middles and maxima.
void median3x3_u8(Builder& b, const std::vector<int>& s) {  // width, height
  const int w = s[0], h = s[1];
  Buffer<float> in = b.input("image", {w + 2, h + 2}, 0.0f, 1.0f);
  Func g = pointwise(b, "to_u8", cast<uint8_t>(in(x, y) * 255.0f), {w + 2, h + 2});
  const Expr a = g(x, y), m = g(x, y + 1), z = g(x, y + 2);
  const auto mid3 = [](const Expr& p, const Expr& q, const Expr& r) {
    return max(min(p, q), min(max(p, q), r));
  };
  Func lo = pointwise(b, "column_min", min(min(a, m), z), {w + 2, h});
  Func mi = pointwise(b, "column_mid", mid3(a, m, z), {w + 2, h});
  Func hi = pointwise(b, "column_max", max(max(a, m), z), {w + 2, h});
  const Expr max_lo = max(max(lo(x, y), lo(x + 1, y)), lo(x + 2, y));
  const Expr mid_mi = mid3(mi(x, y), mi(x + 1, y), mi(x + 2, y));
  const Expr min_hi = min(min(hi(x, y), hi(x + 1, y)), hi(x + 2, y));
  b.output(pointwise(b, "median", mid3(max_lo, mid_mi, min_hi), {w, h}), {w, h});
}

// A running mean down each column (a scan along y, independent across x), subtracted from the
// input: a detrending recurrence.
void cumsum_cols(Builder& b, const std::vector<int>& s) {  // width, height
  const int w = s[0], h = s[1];
  Buffer<float> in = b.input("image", {w, h}, 0.0f, 1.0f);
  RDom r(1, h - 1);
  Func cum("cumsum");
  cum(x, y) = in(x, y);
  cum(x, r) = cum(x, r - 1) + in(x, r);
  b.output(pointwise(b, "detrended", in(x, y) - cum(x, y) / cast<float>(y + 1), {w, h}), {w, h});
}

// A correlation matrix: the Gram matrix of the features (a symmetric rank-k product), scaled by
// its diagonal.
void gram(Builder& b, const std::vector<int>& s) {  // features, samples
  const int n = s[0], m = s[1];
  Buffer<float> X = b.input("samples", {n, m});
  RDom k(0, m);
  Func g("gram");
  g(x, y) = 0.0f;
  g(x, y) += X(x, k) * X(y, k);
  b.output(pointwise(b, "correlation", g(x, y) / sqrt(g(x, x) * g(y, y) + 1e-6f), {n, n}), {n, n});
}

// A decoder block: nearest-neighbour 2x upsampling, a 3x3 convolution and ReLU.
void upsample_conv(Builder& b, const std::vector<int>& s) {  // input size, c_in, c_out
  const int n = s[0], cin = s[1], cout = s[2];
  Buffer<float> in = b.input("image", {n + 1, n + 1, cin});
  Func up = pointwise(b, "upsample", in(x / 2, y / 2, c), {2 * n + 2, 2 * n + 2, cin});
  Func cv = conv(b, "conv", up, 3, cin, cout);
  b.output(pointwise(b, "relu", relu(cv(x, y, c)), {2 * n, 2 * n, cout}), {2 * n, 2 * n, cout});
}

// Image gradients in polar form, two outputs: the magnitude and the orientation of central
// differences of a blurred image.
void grad_polar(Builder& b, const std::vector<int>& s) {  // width, height
  const int w = s[0], h = s[1];
  Buffer<float> in = b.input("image", {w + 4, h + 4}, 0.0f, 1.0f);
  Func bl = blur3x3(b, "blurred", in, w + 2, h + 2);
  Func gx = pointwise(b, "grad_x", bl(x + 2, y + 1) - bl(x, y + 1), {w, h});
  Func gy = pointwise(b, "grad_y", bl(x + 1, y + 2) - bl(x + 1, y), {w, h});
  Func mag = pointwise(b, "magnitude", sqrt(gx(x, y) * gx(x, y) + gy(x, y) * gy(x, y)), {w, h});
  Func ang = pointwise(b, "orientation", atan2(gy(x, y), gx(x, y)), {w, h});
  b.output(mag, {w, h});
  // atan2 of small gradients is ill-conditioned: gradients that differ in their last bits (the
  // blur summed in another order, or contracted into FMAs, by a schedule) turn an angle by
  // 1e-3 rad (seen: 14 of 378 schedules checked on 2026-12-04), past the default tolerance
  // (1e-4 of pi). 1e-2 of pi still refuses any real error.
  b.output(ang, {w, h}, 1e-2);
}

// ---- Grown zoo, third round (2026-12-06): one shape a family --------------------------------
// The learning curves (docs/model-studies.md) showed the models gain from more families, not from
// more sizes of the same ones, so these families have one shape each.

// Quantised GEMM: uint8 operands, int32 accumulation, requantised to uint8.
void qgemm_u8(Builder& b, const std::vector<int>& s) {  // n x n x n
  const int n = s[0];
  Buffer<float> A = b.input("A", {n, n}, 0.0f, 1.0f), B = b.input("B", {n, n}, 0.0f, 1.0f);
  Func a8 = pointwise(b, "a_u8", cast<uint8_t>(A(x, y) * 255.0f), {n, n});
  Func b8 = pointwise(b, "b_u8", cast<uint8_t>(B(x, y) * 255.0f), {n, n});
  Func acc("qgemm");
  RDom k(0, n);
  acc(x, y) = 0;
  acc(x, y) += cast<int32_t>(a8(k, y)) * cast<int32_t>(b8(x, k));
  const Expr q = (acc(x, y) + (1 << 14)) >> 15;
  b.output(pointwise(b, "requantize", cast<uint8_t>(clamp(q, 0, 255)), {n, n}), {n, n});
}

// Squared Euclidean distances between two point sets: |p|^2 + |q|^2 - 2 p.q.
void pairwise_dist(Builder& b, const std::vector<int>& s) {  // dim, points, queries
  const int d = s[0], n = s[1], m = s[2];
  Buffer<float> P = b.input("points", {d, n}), Q = b.input("queries", {d, m});
  RDom r(0, d);
  Func pn("point_norm"), qn("query_norm"), dot("dot"), out("sq_dist");
  pn(x) = 0.0f;
  pn(x) += P(r, x) * P(r, x);
  qn(y) = 0.0f;
  qn(y) += Q(r, y) * Q(r, y);
  dot(x, y) = 0.0f;  // x: point, y: query
  dot(x, y) += P(r, x) * Q(r, y);
  out(x, y) = max(pn(x) + qn(y) - 2.0f * dot(x, y), 0.0f);
  b.output(out, {n, m}, 1e-3);
}

// A transposed operand added to another (a layout change: cache blocking decides its speed).
void transpose_add(Builder& b, const std::vector<int>& s) {  // width, height
  const int w = s[0], h = s[1];
  Buffer<float> A = b.input("A", {h, w}), B = b.input("B", {w, h});
  b.output(pointwise(b, "transpose_add", max(A(y, x) + 0.5f * B(x, y), 0.0f), {w, h}), {w, h});
}

// A temporal (1-D) convolution over a sequence, then GELU (tanh form).
void conv1d_seq(Builder& b, const std::vector<int>& s) {  // time, c_in, c_out, taps
  const int t = s[0], cin = s[1], cout = s[2], k = s[3];
  Buffer<float> in = b.input("sequence", {t + k - 1, cin});
  Buffer<float> w = b.input("conv_w", {k, cin, cout}), bias = b.input("conv_b", {cout});
  RDom r(0, k, 0, cin);
  Func f("conv1d");
  f(x, y) = bias(y);  // x: time, y: output channel
  f(x, y) += w(r.x, r.y, y) * in(x + r.x, r.y);
  const Expr v = f(x, y);
  const Expr gelu = 0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
  b.output(pointwise(b, "gelu", gelu, {t, cout}), {t, cout});
}

// Batch normalisation (inference) with ReLU, then 2x2 average pooling.
void avgpool_bn(Builder& b, const std::vector<int>& s) {  // output size, channels
  const int n = s[0], ch = s[1];
  Buffer<float> in = b.input("activations", {2 * n, 2 * n, ch});
  Buffer<float> mean = b.input("bn_mean", {ch}), var = b.input("bn_var", {ch}, 0.5f, 1.5f),
                gamma = b.input("bn_gamma", {ch}), beta = b.input("bn_beta", {ch});
  Func bn = pointwise(b, "batchnorm",
                      relu((in(x, y, c) - mean(c)) * (gamma(c) / sqrt(var(c) + 1e-5f)) + beta(c)),
                      {2 * n, 2 * n, ch});
  const Expr avg = 0.25f * (bn(2 * x, 2 * y, c) + bn(2 * x + 1, 2 * y, c) +
                            bn(2 * x, 2 * y + 1, c) + bn(2 * x + 1, 2 * y + 1, c));
  b.output(pointwise(b, "avgpool", avg, {n, n, ch}), {n, n, ch});
}

// Squeeze-and-excitation: global average pool, two small dense layers, a sigmoid gate per
// channel that scales the input.
void se_block(Builder& b, const std::vector<int>& s) {  // size, channels, reduction
  const int n = s[0], ch = s[1], red = s[1] / s[2];
  Buffer<float> in = b.input("activations", {n, n, ch});
  Buffer<float> w1 = b.input("se_w1", {ch, red}), b1 = b.input("se_b1", {red}),
                w2 = b.input("se_w2", {red, ch}), b2 = b.input("se_b2", {ch});
  RDom rs(0, n, 0, n), rc(0, ch), rr(0, red);
  Func pool("squeeze"), fc1("excite_1"), fc2("excite_2");
  pool(c) = 0.0f;
  pool(c) += in(rs.x, rs.y, c);
  fc1(c) = b1(c);
  fc1(c) += w1(rc, c) * pool(rc) * (1.0f / static_cast<float>(n * n));
  fc2(c) = b2(c);
  fc2(c) += w2(rr, c) * relu(fc1(rr));
  b.output(pointwise(b, "scaled", in(x, y, c) / (1.0f + exp(-fc2(c))), {n, n, ch}), {n, n, ch});
}

// Group normalisation: mean and variance over each group of channels and all positions.
void group_norm(Builder& b, const std::vector<int>& s) {  // size, channels, groups
  const int n = s[0], ch = s[1], cg = s[1] / s[2];
  Buffer<float> in = b.input("activations", {n, n, ch});
  Buffer<float> gamma = b.input("gn_gamma", {ch}), beta = b.input("gn_beta", {ch});
  RDom r(0, n, 0, n, 0, cg);
  const float inv = 1.0f / static_cast<float>(n * n * cg);
  Func mean("group_mean"), var("group_var");
  mean(c) = 0.0f;
  // The channel is clamped: a schedule that rounds the groups up reads no channel past the last.
  const Expr member = in(r.x, r.y, clamp(c * cg + r.z, 0, ch - 1));
  mean(c) += member * inv;
  const Expr dev = member - mean(c);
  var(c) = 0.0f;
  var(c) += dev * dev * inv;
  const Expr g = c / cg;
  const Expr out = (in(x, y, c) - mean(g)) / sqrt(var(g) + 1e-5f) * gamma(c) + beta(c);
  b.output(pointwise(b, "group_norm", out, {n, n, ch}), {n, n, ch}, 1e-3);
}

// Sub-pixel convolution (ESPCN): a 1x1 convolution to four times the channels, then a pixel
// shuffle (depth to space) with ReLU.
void subpixel_conv(Builder& b, const std::vector<int>& s) {  // input size, c_in, c_out
  const int n = s[0], cin = s[1], cout = s[2];
  Buffer<float> in = b.input("activations", {n, n, cin});
  Func f = conv1x1(b, "expand", in, cin, 4 * cout);
  const Expr shuffled = f(x / 2, y / 2, c * 4 + (y % 2) * 2 + x % 2);
  b.output(pointwise(b, "pixel_shuffle", relu(shuffled), {2 * n, 2 * n, cout}),
           {2 * n, 2 * n, cout});
}

// Where a bilinear sample at coordinate `at` (clamped to [0, extent - 1]) reads: the index of its
// left (or upper) neighbour, kept inside [0, extent - 1], and the weight of the right one.
std::pair<Expr, Expr> sample_point(const Expr& at, int extent) {
  const Expr clamped = clamp(at, 0.0f, static_cast<float>(extent - 1));
  const Expr i = clamp(cast<int>(clamped), 0, extent - 1);
  return {i, clamped - cast<float>(i)};
}

// Bilinear resize of an RGB image to 3/4 of its size, separable (x, then y).
void resize_bilinear(Builder& b, const std::vector<int>& s) {  // output width, height
  const int w = s[0], h = s[1], iw = w * 4 / 3, ih = h * 4 / 3;
  Buffer<float> in = b.input("image", {iw + 1, ih + 1, 3}, 0.0f, 1.0f);
  const auto source = [](const Expr& v, int extent) {
    return sample_point((cast<float>(v) + 0.5f) * (4.0f / 3.0f) - 0.5f, extent);
  };
  const auto [ix, fx] = source(x, iw);
  const auto [iy, fy] = source(y, ih);
  Func rx = pointwise(b, "resize_x", lerp(in(ix, y, c), in(ix + 1, y, c), fx), {w, ih + 1, 3});
  b.output(pointwise(b, "resize_y", lerp(rx(x, iy, c), rx(x, iy + 1, c), fy), {w, h, 3}),
           {w, h, 3});
}

// An affine warp (rotation by 5 degrees, zoom 1.1) with bilinear sampling of a pre-blurred image:
// the warp reads its producer at computed, not affine, coordinates.
void warp_affine(Builder& b, const std::vector<int>& s) {  // width, height
  const int w = s[0], h = s[1];
  Buffer<float> in = b.input("image", {w + 3, h + 3}, 0.0f, 1.0f);
  Func smooth = blur3x3(b, "smooth", in, w + 1, h + 1);
  const float ca = std::cos(0.0873f) / 1.1f, sa = std::sin(0.0873f) / 1.1f;
  const Expr dx = cast<float>(x) - w / 2.0f, dy = cast<float>(y) - h / 2.0f;
  const auto [i, fu] = sample_point(ca * dx - sa * dy + w / 2.0f, w);
  const auto [j, fv] = sample_point(sa * dx + ca * dy + h / 2.0f, h);
  const Expr top = lerp(smooth(i, j), smooth(i + 1, j), fu);
  const Expr bottom = lerp(smooth(i, j + 1), smooth(i + 1, j + 1), fu);
  b.output(pointwise(b, "warped", lerp(top, bottom, fv), {w, h}), {w, h});
}

// Bilinear demosaic of a 12-bit RGGB Bayer mosaic in integers, then a colour matrix.
void demosaic_u16(Builder& b, const std::vector<int>& s) {  // width, height
  const int w = s[0], h = s[1];
  Buffer<float> in = b.input("raw", {w + 2, h + 2}, 0.0f, 1.0f);
  Func raw = pointwise(b, "raw_u16", cast<uint16_t>(in(x, y) * 4095.0f), {w + 2, h + 2});
  const auto at = [&](int dx, int dy) { return cast<int32_t>(raw(x + 1 + dx, y + 1 + dy)); };
  const Expr cross = (at(-1, 0) + at(1, 0) + at(0, -1) + at(0, 1)) / 4;
  const Expr diag = (at(-1, -1) + at(1, -1) + at(-1, 1) + at(1, 1)) / 4;
  const Expr horiz = (at(-1, 0) + at(1, 0)) / 2, vert = (at(0, -1) + at(0, 1)) / 2;
  const Expr ex = x % 2 == 0, ey = y % 2 == 0;  // red at (even, even), blue at (odd, odd)
  const Expr red = select(ex && ey, at(0, 0), ey, horiz, ex, vert, diag);
  const Expr green = select(ex == ey, cross, at(0, 0));
  const Expr blue = select(!ex && !ey, at(0, 0), ex && ey, diag, ey, vert, horiz);
  Func rgb = pointwise(b, "demosaic", select(c == 0, red, c == 1, green, blue), {w, h, 3});
  const Expr mixed =
      (select(c == 0, 300, -30) * rgb(x, y, 0) + select(c == 1, 280, -20) * rgb(x, y, 1) +
       select(c == 2, 310, -40) * rgb(x, y, 2)) >>
      8;
  b.output(pointwise(b, "colour_matrix", cast<uint16_t>(clamp(mixed, 0, 4095)), {w, h, 3}),
           {w, h, 3});
}

// Stereo matching by census transform: 8-bit 3x3 census codes of both images, Hamming costs
// (popcount of the XOR) over a range of disparities, and the winner takes all (an arg-min).
void stereo_census(Builder& b, const std::vector<int>& s) {  // width, height, disparities
  const int w = s[0], h = s[1], nd = s[2], cw = w + nd;
  Buffer<float> left = b.input("left", {cw + 2, h + 2}, 0.0f, 1.0f),
                right = b.input("right", {cw + 2, h + 2}, 0.0f, 1.0f);
  const auto census = [&](const std::string& name, const Buffer<float>& im) {
    Func g = pointwise(b, name + "_u8", cast<uint8_t>(im(x, y) * 255.0f), {cw + 2, h + 2});
    Expr bits = cast<uint8_t>(0);
    int bit = 0;
    for (int j = 0; j < 3; ++j) {
      for (int i = 0; i < 3; ++i) {
        if (i == 1 && j == 1) continue;
        bits = bits |
               select(g(x + i, y + j) < g(x + 1, y + 1), cast<uint8_t>(1 << bit), cast<uint8_t>(0));
        ++bit;
      }
    }
    return pointwise(b, name, bits, {cw, h});
  };
  Func cl = census("census_left", left), cr = census("census_right", right);
  Func cost("match_cost");
  cost(x, y, c) = popcount(cl(x + nd, y) ^ cr(x + nd - c, y));  // c: the disparity
  RDom rd(0, nd);
  Func best("winner");
  best(x, y) = Tuple(cast<uint8_t>(255), cast<uint8_t>(0));
  const Expr better = cost(x, y, rd) < best(x, y)[0];
  best(x, y) = Tuple(select(better, cost(x, y, rd), best(x, y)[0]),
                     select(better, cast<uint8_t>(rd), best(x, y)[1]));
  b.output(pointwise(b, "disparity", best(x, y)[1], {w, h}), {w, h});
}

// Local contrast normalisation: local mean and variance from 5x5 box sums of the image and of
// its square, then (image - mean) / deviation.
void local_contrast(Builder& b, const std::vector<int>& s) {  // width, height
  const int w = s[0], h = s[1];
  Buffer<float> in = b.input("image", {w + 4, h + 4}, 0.0f, 1.0f);
  Func sq = pointwise(b, "squared", in(x, y) * in(x, y), {w + 4, h + 4});
  const auto box5 = [&](const std::string& name, const auto& f) {
    Expr ex = 0.0f;
    for (int i = 0; i < 5; ++i) ex += f(x + i, y);
    Func bx = pointwise(b, name + "_x", ex, {w, h + 4});
    Expr ey = 0.0f;
    for (int j = 0; j < 5; ++j) ey += bx(x, y + j);
    return pointwise(b, name + "_y", ey * (1.0f / 25.0f), {w, h});
  };
  Func mean = box5("mean", in), meansq = box5("mean_sq", sq);
  const Expr var = max(meansq(x, y) - mean(x, y) * mean(x, y), 0.0f);
  b.output(pointwise(b, "normalized", (in(x + 2, y + 2) - mean(x, y)) / sqrt(var + 1e-3f), {w, h}),
           {w, h}, 1e-3);
}

// Keypoints: a blur, the squared gradient magnitude, and 3x3 non-maximum suppression.
void nms3x3(Builder& b, const std::vector<int>& s) {  // width, height
  const int w = s[0], h = s[1];
  Buffer<float> in = b.input("image", {w + 6, h + 6}, 0.0f, 1.0f);
  Func sm = blur3x3(b, "smooth", in, w + 4, h + 4);
  const Expr gx = sm(x + 2, y + 1) - sm(x, y + 1), gy = sm(x + 1, y + 2) - sm(x + 1, y);
  Func resp = pointwise(b, "response", gx * gx + gy * gy, {w + 2, h + 2});
  Expr nb = Float(32).min();
  for (int j = 0; j < 3; ++j) {
    for (int i = 0; i < 3; ++i) {
      if (i != 1 || j != 1) nb = max(nb, resp(x + i, y + j));
    }
  }
  const Expr centre = resp(x + 1, y + 1);
  b.output(pointwise(b, "suppressed", select(centre > nb, centre, 0.0f), {w, h}), {w, h});
}

// Mutual-information terms of two images: a joint histogram (a two-dimensional scatter), its
// marginals (reductions along each axis), and p log(p / (pa pb)) per bin.
void joint_histogram(Builder& b, const std::vector<int>& s) {  // width, height, bins
  const int w = s[0], h = s[1], nb = s[2];
  Buffer<float> ia = b.input("image_a", {w, h}, 0.0f, 1.0f),
                ib = b.input("image_b", {w, h}, 0.0f, 1.0f);
  RDom r(0, w, 0, h), rb(0, nb);
  const auto bin = [&](const Buffer<float>& im) {
    return clamp(cast<int>(im(r.x, r.y) * nb), 0, nb - 1);
  };
  Func hist("joint_hist"), pa("marginal_a"), pb("marginal_b");
  hist(x, y) = 0.0f;
  hist(bin(ia), bin(ib)) += 1.0f;
  pa(x) = 0.0f;
  pa(x) += hist(x, rb);
  pb(y) = 0.0f;
  pb(y) += hist(rb, y);
  const float total = static_cast<float>(w) * static_cast<float>(h);
  const Expr p = hist(x, y) / total;
  const Expr term = select(hist(x, y) > 0.0f, p * log(hist(x, y) * total / (pa(x) * pb(y))), 0.0f);
  b.output(pointwise(b, "mi_terms", term, {nb, nb}), {nb, nb}, 1e-3);
}

// Columns scaled to unit L2 norm (a reduction along the outer dimension).
void col_l2norm(Builder& b, const std::vector<int>& s) {  // columns, rows
  const int n = s[0], m = s[1];
  Buffer<float> A = b.input("matrix", {n, m});
  RDom r(0, m);
  Func ss("col_sumsq");
  ss(x) = 0.0f;
  ss(x) += A(x, r) * A(x, r);
  b.output(pointwise(b, "col_normalized", A(x, y) / sqrt(ss(x) + 1e-6f), {n, m}), {n, m});
}

// Two stages of FIR filtering with 2x decimation (a polyphase resampler), per channel.
void fir_decimate(Builder& b, const std::vector<int>& s) {  // output samples, channels
  const int n = s[0], ch = s[1];
  Buffer<float> in = b.input("signal", {4 * n + 28, ch});
  Buffer<float> t1 = b.input("taps_16", {16}), t2 = b.input("taps_8", {8});
  RDom r1(0, 16), r2(0, 8);
  Func s1("decimate_1"), s2("decimate_2");
  s1(x, y) = 0.0f;
  s1(x, y) += t1(r1) * in(2 * x + r1, y);
  s2(x, y) = 0.0f;
  s2(x, y) += t2(r2) * s1(2 * x + r2, y);
  b.output(s2, {n, ch});
}

// RGB to HSV, a hue shift and more saturation, and back to RGB (branchy arithmetic per pixel).
void hsv_adjust(Builder& b, const std::vector<int>& s) {  // width, height
  const int w = s[0], h = s[1];
  Buffer<float> in = b.input("image", {w, h, 3}, 0.0f, 1.0f);
  const Expr r = in(x, y, 0), g = in(x, y, 1), bl = in(x, y, 2);
  const Expr mx = max(r, g, bl), mn = min(r, g, bl), d = mx - mn + 1e-6f;
  const Expr hue =
      select(mx == r, (g - bl) / d + 6.0f, mx == g, (bl - r) / d + 2.0f, (r - g) / d + 4.0f) / 6.0f;
  const Expr sat = d / (mx + 1e-6f);
  Func hsv = pointwise(b, "to_hsv", select(c == 0, hue - floor(hue), c == 1, sat, mx), {w, h, 3});
  const Expr hh = hsv(x, y, 0) + 0.1f, h6 = (hh - floor(hh)) * 6.0f;
  const Expr ss = min(hsv(x, y, 1) * 1.3f, 1.0f), v = hsv(x, y, 2);
  const Expr sector = clamp(cast<int>(h6), 0, 5), f = h6 - cast<float>(sector);
  const Expr p = v * (1.0f - ss), q = v * (1.0f - ss * f), t = v * (1.0f - ss * (1.0f - f));
  // Which of v, t, p, q each channel takes in each sector.
  const Expr k = (sector + select(c == 0, 0, c == 1, 4, 2)) % 6;
  const Expr out = select(k == 0 || k == 5, v, k == 1, q, k == 4, t, p);
  b.output(pointwise(b, "to_rgb", out, {w, h, 3}), {w, h, 3}, 1e-3);
}

// C = A^T B: both operands read along their rows (the other layout than matmul's).
void matmul_tn(Builder& b, const std::vector<int>& s) {  // n x n x n
  product(b, "matmul_tn", s[0], true);
}

}  // namespace

const std::vector<Family>& families() {
  static const std::vector<Family> kFamilies = {
      {"matmul", true, Split::kTrain, {{192}, {256}, {384}}, matmul},
      {"batched_matmul", true, Split::kTrain, {{8, 96}, {12, 128}, {16, 64}}, batched_matmul},
      {"attention", false, Split::kTest, {{4, 64, 64}, {8, 64, 64}, {4, 128, 64}}, attention},
      {"softmax", false, Split::kValid, {{1024, 256}, {512, 512}, {2048, 128}}, softmax},
      {"layernorm", false, Split::kTrain, {{768, 128}, {768, 256}, {384, 512}}, layernorm},
      {"transformer_mlp", false, Split::kTrain, {{64, 128}, {32, 192}, {128, 96}}, transformer_mlp},
      {"conv3x3", true, Split::kTrain, {{56, 16, 16}, {28, 32, 32}, {14, 64, 64}}, conv3x3},
      {"conv1x1", true, Split::kTest, {{56, 32, 64}, {28, 64, 128}, {14, 128, 256}}, conv1x1_block},
      {"depthwise3x3", true, Split::kValid, {{112, 32}, {56, 96}, {28, 192}}, depthwise_block},
      {"maxpool", true, Split::kTrain, {{56, 64}, {56, 128}, {28, 256}}, maxpool},
      {"resnet_basic", false, Split::kTrain, {{28, 32}, {14, 64}, {7, 128}}, resnet_basic},
      {"resnet_bottleneck",
       false,
       Split::kTest,
       {{56, 64, 16}, {28, 128, 32}, {14, 256, 64}},
       resnet_bottleneck},
      {"mobilenet_v2", false, Split::kTrain, {{28, 24}, {14, 32}, {14, 64}}, mobilenet_v2_block},
      {"classifier_head",
       false,
       Split::kTrain,
       {{14, 512, 1000}, {7, 1024, 512}, {7, 2048, 1000}},
       classifier_head},
      {"gaussian_blur", false, Split::kTrain, {{512, 384}, {768, 512}, {1024, 768}}, gaussian_blur},
      {"sobel", false, Split::kTest, {{1024, 768}, {1536, 1024}, {2048, 1536}}, sobel},
      {"histogram_eq",
       false,
       Split::kTrain,
       {{640, 480}, {1024, 768}, {1536, 1024}},
       histogram_equalize},
      {"pyramid", false, Split::kTrain, {{1024, 768}, {1536, 1024}, {2048, 1536}}, pyramid},
      {"morph_open", false, Split::kTrain, {{1024, 768}, {1536, 1024}, {2048, 1536}}, morph_open},
      {"morph_close", false, Split::kTest, {{1024, 768}, {1536, 1024}, {2048, 1536}}, morph_close},
      {"colour_tone", false, Split::kTrain, {{1024, 768}, {1536, 1024}, {2048, 1536}}, colour_tone},
      {"harris", false, Split::kValid, {{512, 384}, {1024, 768}, {1536, 1024}}, harris},
      {"box_blur_u16",
       false,
       Split::kTrain,
       {{1024, 768}, {1536, 1024}, {2048, 1536}},
       box_blur_u16},
      {"unsharp_u8", false, Split::kValid, {{1024, 768}, {1536, 1024}, {2048, 1536}}, unsharp_u8},
      {"iir_rows", false, Split::kTrain, {{512, 384}, {1024, 768}, {1536, 1024}}, iir_rows},
      {"integral_box",
       false,
       Split::kTrain,
       {{512, 384, 2}, {1024, 768, 3}, {1536, 1024, 4}},
       integral_box},
      {"gemv", true, Split::kTrain, {{2048, 512, 4}, {1024, 512, 16}, {1024, 1024, 4}}, gemv},
      {"row_stats", false, Split::kValid, {{1024, 256}, {4096, 64}, {512, 1024}}, row_stats},
      {"argmax_rows", false, Split::kTrain, {{1000, 64}, {512, 256}, {2048, 32}}, argmax_rows},
      {"conv_stride2",
       true,
       Split::kTrain,
       {{28, 64, 128}, {14, 128, 256}, {7, 256, 512}},
       conv_stride2},
      {"lstm_cell",
       false,
       Split::kTrain,
       {{256, 256, 16}, {512, 256, 8}, {128, 128, 64}},
       lstm_cell},
      {"stencil_chain",
       false,
       Split::kTrain,
       {{1024, 768}, {1536, 1024}, {2048, 1536}},
       stencil_chain},
      {"bilateral_grid",
       false,
       Split::kTrain,
       {{1024, 768}, {1536, 1024}, {2048, 1536}},
       bilateral_grid},
      {"segment_sum",
       false,
       Split::kTrain,
       {{64, 8192, 256}, {128, 4096, 512}, {32, 16384, 128}},
       segment_sum},
      {"embedding_bag",
       false,
       Split::kTrain,
       {{64, 10000, 32, 256}, {128, 5000, 16, 128}, {32, 20000, 64, 512}},
       embedding_bag},
      {"median3x3_u8",
       false,
       Split::kValid,
       {{1024, 768}, {1536, 1024}, {2048, 1536}},
       median3x3_u8},
      {"cumsum_cols", false, Split::kTrain, {{1024, 768}, {2048, 512}, {512, 2048}}, cumsum_cols},
      {"gram", false, Split::kValid, {{256, 512}, {384, 256}, {192, 1024}}, gram},
      {"upsample_conv",
       false,
       Split::kTrain,
       {{14, 64, 32}, {28, 32, 16}, {7, 128, 64}},
       upsample_conv},
      {"grad_polar", false, Split::kTrain, {{1024, 768}, {1536, 1024}, {2048, 1536}}, grad_polar},
      {"qgemm_u8", false, Split::kTrain, {{256}}, qgemm_u8},
      {"pairwise_dist", false, Split::kTrain, {{64, 1024, 256}}, pairwise_dist},
      {"transpose_add", true, Split::kTrain, {{2048, 1024}}, transpose_add},
      {"conv1d_seq", true, Split::kTrain, {{1024, 64, 64, 5}}, conv1d_seq},
      {"avgpool_bn", false, Split::kTrain, {{56, 128}}, avgpool_bn},
      {"se_block", false, Split::kTrain, {{14, 128, 8}}, se_block},
      {"group_norm", false, Split::kTrain, {{56, 64, 8}}, group_norm},
      {"subpixel_conv", false, Split::kTrain, {{28, 64, 32}}, subpixel_conv},
      {"resize_bilinear", false, Split::kTrain, {{768, 576}}, resize_bilinear},
      {"warp_affine", false, Split::kTrain, {{1024, 768}}, warp_affine},
      {"demosaic_u16", false, Split::kTrain, {{1024, 768}}, demosaic_u16},
      {"stereo_census", false, Split::kTrain, {{512, 384, 16}}, stereo_census},
      {"local_contrast", false, Split::kTrain, {{1024, 768}}, local_contrast},
      {"nms3x3", false, Split::kTrain, {{1024, 768}}, nms3x3},
      {"joint_histogram", false, Split::kTrain, {{768, 512, 32}}, joint_histogram},
      {"col_l2norm", false, Split::kTrain, {{1024, 1024}}, col_l2norm},
      {"fir_decimate", false, Split::kTrain, {{4096, 32}}, fir_decimate},
      {"hsv_adjust", false, Split::kTrain, {{1024, 768}}, hsv_adjust},
      {"matmul_tn", true, Split::kTrain, {{256}}, matmul_tn},
  };
  return kFamilies;
}

}  // namespace tcost::halide::zoo
