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

void matmul(Builder& b, const std::vector<int>& s) {  // n x n x n
  const int n = s[0];
  Buffer<float> A = b.input("A", {n, n}), B = b.input("B", {n, n});
  Func f("matmul");
  RDom k(0, n);
  f(x, y) = 0.0f;
  f(x, y) += A(k, y) * B(x, k);
  b.output(f, {n, n});
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
  };
  return kFamilies;
}

}  // namespace tcost::halide::zoo
