// halide_progs.cpp — the programs of `bench/run auto` in Halide 14: the same stages, arithmetic
// and buffers as their tec twins in auto_progs.c (x is tec's last, unit-stride dimension), each
// with its estimates (for the autoschedulers) and, where Halide v14.0.0's apps/ has one, the
// expert schedule: the app's decisions (tiles, compute_at/store_at levels, vector widths for
// AVX-512: 16 floats) written anew here for these programs, the app file cited beside it.
#include "halide_progs.h"
#include <cstdlib>

using namespace Halide;

namespace {

Var x("x"), y("y"), c("c");
const int VEC = 16;  // natural_vector_size<float>() with AVX-512

ImageParam param(HlProg &p, const char *name, int nd) {
  ImageParam in(Float(32), nd, name);
  p.in.push_back(in);
  return in;
}
Func stage(HlProg &p, const char *name) {
  Func f(name);
  p.funcs.push_back(f);
  return f;
}
Expr third(Expr a, Expr b, Expr e) { return (a + b + e) * (1.0f / 3.0f); }

// ---- GEMM: C(j, i) = sum_k A(k, i) B(j, k) ----
void gemm(HlProg &p, const Sizes &s, bool expert) {
  int n = s[2][0];
  ImageParam A = param(p, "A", 2), B = param(p, "B", 2);
  Var i("i"), j("j");
  RDom r(0, n, "k");
  Func C = stage(p, "C"), out = stage(p, "out");
  p.out = out;
  p.has_expert = true;
  if (!expert) {
    C(j, i) = 0.0f;
    C(j, i) += A(r, i) * B(j, r);
    out(j, i) = C(j, i);
    return;
  }
  // apps/linear_algebra/src/blas_l3_generators.cpp (sgemm, no transposes; its i is our j):
  // s = 2 vectors = 32 columns; the output in 2s x 2s blocks, inside them s x 4 tiles
  // (32 columns vectorized, 4 rows unrolled) walked 1 x (s/4) at a time; the accumulator
  // computed at the tile, its k loop outermost and unrolled by 2; the operand read as
  // vectors (the app's A, our B) packed once into panels of s columns at the root.
  const int S = 2 * VEC;
  Var jo("jo"), io("io"), ji("ji"), ii("ii"), jt("jt"), it("it"), t("t"), jj("jj"), k("kk"), jp("jp");
  Func Bp = stage(p, "Bp");
  Bp(jj, k, jp) = B(jp * S + jj, k);
  C(j, i) = 0.0f;
  C(j, i) += A(r, i) * Bp(j % S, r, j / S);
  out(j, i) = C(j, i);
  // GuardWithIf and the bounds (the app's): the tiles start at multiples of s, so j % s and
  // j / s of a tile simplify to dense loads from the panel
  out.bound(j, 0, n)
      .bound(i, 0, n)
      .tile(j, i, jo, io, j, i, 2 * S, 2 * S, TailStrategy::GuardWithIf)
      .tile(j, i, ji, ii, S, 4)
      .tile(j, i, jt, it, j, i, 1, S / 4)
      .fuse(jo, io, t)
      .parallel(t)
      .vectorize(ji, VEC)
      .unroll(ii);
  C.compute_at(out, j)
      .bound_extent(j, S)
      .vectorize(j, VEC)
      .bound_extent(i, 4)
      .unroll(i)
      .update()
      .reorder(j, i, r)
      .vectorize(j, VEC)
      .unroll(i)
      .unroll(r, 2);
  Bp.compute_root().vectorize(jj, VEC).unroll(jj);
}

// ---- 3x3 blur ----
void blur(HlProg &p, const Sizes &, bool expert) {
  ImageParam in = param(p, "input", 2);
  Func bx = stage(p, "blur_x"), by = stage(p, "blur_y");
  bx(x, y) = third(in(x, y), in(x + 1, y), in(x + 2, y));
  by(x, y) = third(bx(x, y), bx(x, y + 1), bx(x, y + 2));
  p.out = by;
  p.has_expert = true;
  if (expert) {
    // apps/blur/halide_blur_generator.cpp, CPU: strips of 32 rows, blur_x stored per strip
    // (a sliding window) and computed per vector of the output, both vectorized by 16.
    Var yi("yi");
    by.split(y, y, yi, 32).parallel(y).vectorize(x, VEC);
    bx.store_at(by, y).compute_at(by, x).vectorize(x, VEC);
  }
}

// ---- ResNet conv 3x3 + bias + ReLU, apps/conv_layer's layouts ----
void conv(HlProg &p, const Sizes &s, bool expert) {
  int ci = s[0][2];
  ImageParam in = param(p, "input", 3), filter = param(p, "filter", 4), bias = param(p, "bias", 1);
  RDom r(0, ci, 0, 3, 0, 3, "r");  // r.x: input channel, r.y: ky, r.z: kx
  Func cv = stage(p, "conv"), relu = stage(p, "relu");
  cv(c, x, y) = 0.0f;
  cv(c, x, y) += filter(c, r.z, r.y, r.x) * in(r.x, x + r.z, y + r.y);
  relu(c, x, y) = max(cv(c, x, y) + bias(c), 0.0f);
  p.out = relu;
  p.has_expert = true;
  if (expert) {
    // apps/conv_layer/conv_layer_generator.cpp, CPU with AVX-512: tile_w 4 vectors of
    // channels x tile_h 5 pixels of x; the accumulator at that tile (unrolled), its update
    // c, x, y innermost then the channel reduction unrolled by 2; the filter's vectors staged
    // per input channel, the input's per pixel.
    const int tile_w = 4, tile_h = 5;
    Var co("co"), ci_("ci"), xo("xo"), xi("xi");
    relu.split(c, co, ci_, VEC * tile_w)
        .split(x, xo, xi, tile_h)
        .reorder(ci_, xi, xo, y, co)
        .vectorize(ci_, VEC)
        .unroll(ci_)
        .unroll(xi)
        .parallel(y)
        .parallel(co);
    cv.compute_at(relu, xo)
        .vectorize(c, VEC)
        .unroll(c)
        .unroll(x)
        .update()
        .reorder(c, x, y, r.x, r.z, r.y)
        .vectorize(c, VEC)
        .unroll(c)
        .unroll(x)
        .unroll(r.x, 2);
    filter.in().compute_at(cv, r.x).vectorize(_0, VEC).unroll(_0).unroll(_3);
    in.in().compute_at(cv, x).unroll(_0);
  }
}

// ---- MobileNet depthwise 3x3 + bias + ReLU, NHWC ----
void dw(HlProg &p, const Sizes &, bool expert) {
  ImageParam in = param(p, "input", 3), filter = param(p, "filter", 3), bias = param(p, "bias", 1);
  RDom r(0, 3, 0, 3, "r");  // r.x: ky, r.y: kx
  Func d = stage(p, "dw"), relu = stage(p, "relu");
  d(c, x, y) = 0.0f;
  d(c, x, y) += in(c, x + r.y, y + r.x) * filter(c, r.y, r.x);
  relu(c, x, y) = max(d(c, x, y) + bias(c), 0.0f);
  p.out = relu;
  p.has_expert = true;
  if (expert) {
    // apps/depthwise_separable_conv/depthwise_separable_conv_generator.cpp, CPU with 32
    // registers of 16 floats: output tiles of 1 vector of channels x 6 x 4 pixels (24
    // accumulators), vectorized on channels, x and y unrolled. The app computes the
    // depthwise result inside the pointwise conv's channel loop; this layer has no pointwise
    // conv, so the depthwise accumulator sits at the output tile instead.
    Var ci_("ci"), xi("xi"), yi("yi");
    relu.tile({c, x, y}, {ci_, xi, yi}, {VEC, 6, 4}).vectorize(ci_).unroll(xi).unroll(yi).parallel(y);
    d.compute_at(relu, c)
        .vectorize(c)
        .unroll(x)
        .unroll(y)
        .update()
        .reorder(c, x, y, r.y, r.x)
        .vectorize(c)
        .unroll(x)
        .unroll(y);
  }
}

Expr kern(int k) {
  static const float v[4] = {0.26596152026762f, 0.21970564473946f, 0.12384140315297f, 0.04332165452180f};
  return Expr(v[k]);
}
Expr gray_of(ImageParam in, Expr xx, Expr yy) {
  return 0.299f * in(xx, yy, 0) + 0.587f * in(xx, yy, 1) + 0.114f * in(xx, yy, 2);
}

// ---- unsharp mask, sigma 1.5 ----
void unsharp(HlProg &p, const Sizes &, bool expert) {
  ImageParam in = param(p, "input", 3);
  Func gray = stage(p, "gray"), by = stage(p, "blur_y"), bx = stage(p, "blur_x"), sharpen = stage(p, "sharpen"),
       ratio = stage(p, "ratio"), out = stage(p, "output");
  gray(x, y) = gray_of(in, x, y);
  Expr e = kern(0) * gray(x, y + 3);
  for (int k = 1; k <= 3; k++) e = e + kern(k) * (gray(x, y + 3 - k) + gray(x, y + 3 + k));
  by(x, y) = e;
  e = kern(0) * by(x + 3, y);
  for (int k = 1; k <= 3; k++) e = e + kern(k) * (by(x + 3 - k, y) + by(x + 3 + k, y));
  bx(x, y) = e;
  sharpen(x, y) = 2.0f * gray(x + 3, y + 3) - bx(x, y);
  ratio(x, y) = sharpen(x, y) / gray(x + 3, y + 3);
  out(x, y, c) = ratio(x, y) * in(x + 3, y + 3, c);
  p.out = out;
  p.has_expert = true;
  if (expert) {
    // apps/unsharp/unsharp_generator.cpp, CPU: strips of 32 rows, x vectorized, the channel
    // loop inside the row; gray, blur_y and ratio stored per strip and computed per row
    // (sliding windows), vectorized; blur_x and sharpen inlined.
    Var yo("yo"), yi("yi");
    out.split(y, yo, yi, 32).vectorize(x, VEC).parallel(yo).reorder(x, c, yi, yo);
    gray.compute_at(out, yi).store_at(out, yo).vectorize(x, VEC);
    by.compute_at(out, yi).store_at(out, yo).vectorize(x, VEC);
    ratio.compute_at(out, yi).store_at(out, yo).vectorize(x, VEC);
  }
}

// ---- Harris corners ----
void harris(HlProg &p, const Sizes &, bool expert) {
  ImageParam in = param(p, "input", 3);
  Func gray = stage(p, "gray"), Iy = stage(p, "Iy"), Ix = stage(p, "Ix"), Ixx = stage(p, "Ixx"),
       Iyy = stage(p, "Iyy"), Ixy = stage(p, "Ixy"), Sxx = stage(p, "Sxx"), Syy = stage(p, "Syy"),
       Sxy = stage(p, "Sxy"), det = stage(p, "det"), trace = stage(p, "trace"), out = stage(p, "output");
  gray(x, y) = gray_of(in, x, y);
  auto G = [&](int dx, int dy) { return gray(x + 1 + dx, y + 1 + dy); };
  Iy(x, y) = G(-1, -1) * (-1.0f / 12) + G(-1, 1) * (1.0f / 12) + G(0, -1) * (-2.0f / 12) + G(0, 1) * (2.0f / 12) +
             G(1, -1) * (-1.0f / 12) + G(1, 1) * (1.0f / 12);
  Ix(x, y) = G(-1, -1) * (-1.0f / 12) + G(1, -1) * (1.0f / 12) + G(-1, 0) * (-2.0f / 12) + G(1, 0) * (2.0f / 12) +
             G(-1, 1) * (-1.0f / 12) + G(1, 1) * (1.0f / 12);
  Ixx(x, y) = Ix(x, y) * Ix(x, y);
  Iyy(x, y) = Iy(x, y) * Iy(x, y);
  Ixy(x, y) = Ix(x, y) * Iy(x, y);
  auto sum3 = [&](Func f) {
    Expr e;
    for (int dy = 0; dy < 3; dy++)
      for (int dx = 0; dx < 3; dx++) e = e.defined() ? e + f(x + dx, y + dy) : f(x + dx, y + dy);
    return e;
  };
  Sxx(x, y) = sum3(Ixx);
  Syy(x, y) = sum3(Iyy);
  Sxy(x, y) = sum3(Ixy);
  det(x, y) = Sxx(x, y) * Syy(x, y) - Sxy(x, y) * Sxy(x, y);
  trace(x, y) = Sxx(x, y) + Syy(x, y);
  out(x, y) = det(x, y) - 0.04f * trace(x, y) * trace(x, y);
  p.out = out;
  p.has_expert = true;
  if (expert) {
    // apps/harris/harris_generator.cpp, CPU: strips of 32 rows, x vectorized; gray, Ix and Iy
    // stored per strip and computed per row, vectorized, Ix computed with Iy; the rest inlined.
    Var yi("yi");
    out.split(y, y, yi, 32).parallel(y).vectorize(x, VEC);
    gray.store_at(out, y).compute_at(out, yi).vectorize(x, VEC);
    Ix.store_at(out, y).compute_at(out, yi).vectorize(x, VEC);
    Iy.store_at(out, y).compute_at(out, yi).vectorize(x, VEC);
    // TEC_BENCH_HARRIS_NO_COMPUTE_WITH=1: without it (a diagnosis variant, not the app's)
    if (!getenv("TEC_BENCH_HARRIS_NO_COMPUTE_WITH")) Ix.compute_with(Iy, x);
  }
}

// ---- max pool 3x3 stride 2 ----
void maxpool(HlProg &p, const Sizes &, bool) {
  ImageParam in = param(p, "input", 3);
  RDom r(0, 3, 0, 3, "r");  // r.x: ry, r.y: rx
  Func pool = stage(p, "pool");
  pool(x, y, c) = maximum(in(2 * x + r.y, 2 * y + r.x, c));
  p.out = pool;
}

// ---- softmax over x (rows), any number of leading dims ----
Func softmax_of(HlProg &p, Func xin, int n, int lead, const std::string &pre) {
  std::vector<Var> v = {x, y, c};
  std::vector<Var> rows(v.begin() + 1, v.begin() + 1 + lead);
  RDom k(0, n, "k"), k2(0, n, "k2");
  std::vector<Expr> rk = {k}, rk2 = {k2}, all = {x};
  for (auto &vv : rows) rk.push_back(vv), rk2.push_back(vv), all.push_back(vv);
  std::vector<Expr> re(rows.begin(), rows.end());
  Func mx = stage(p, (pre + "max").c_str()), e = stage(p, (pre + "exp").c_str()), sm = stage(p, (pre + "sum").c_str()),
       out = stage(p, (pre + "softmax").c_str());
  mx(rows) = maximum(xin(rk));
  std::vector<Var> allv = {x};
  for (auto &vv : rows) allv.push_back(vv);
  e(allv) = exp(xin(all) - mx(re));
  sm(rows) = 0.0f;
  sm(rows) += e(rk2);
  out(allv) = e(all) / sm(re);
  return out;
}
void softmax(HlProg &p, const Sizes &s, bool) {
  ImageParam in = param(p, "x", 2);
  p.out = softmax_of(p, in, s[0][1], 1, "");
}

// ---- layer norm ----
void layernorm(HlProg &p, const Sizes &s, bool) {
  int n = s[0][1];
  ImageParam in = param(p, "x", 2), gb = param(p, "gamma_beta", 1);
  RDom k(0, n, "k"), k2(0, n, "k2");
  Func mean = stage(p, "mean"), var = stage(p, "var"), out = stage(p, "norm");
  mean(y) = 0.0f;
  mean(y) += in(k, y) * (1.0f / n);
  Expr d = in(k2, y) - mean(y);
  var(y) = 0.0f;
  var(y) += d * d * (1.0f / n);
  out(x, y) = (in(x, y) - mean(y)) * (1.0f / sqrt(var(y) + 1e-5f)) * gb(x) + gb(x + n);
  p.out = out;
}

// ---- attention ----
void attention(HlProg &p, const Sizes &s, bool) {
  int t = s[0][1], dd = s[0][2];
  ImageParam q = param(p, "Q", 3), k = param(p, "K", 3), v = param(p, "V", 3);
  RDom rd(0, dd, "d"), rj(0, t, "j");
  Func S = stage(p, "S"), O = stage(p, "O");
  // S(j, i, h) = sum_d Q(d, i, h) K(d, j, h) / 8
  S(x, y, c) = 0.0f;
  S(x, y, c) += q(rd, y, c) * k(rd, x, c) * 0.125f;
  Func P = softmax_of(p, S, t, 2, "P_");
  O(x, y, c) = 0.0f;
  O(x, y, c) += P(rj, y, c) * v(x, rj, c);
  p.out = O;
}

// ---- stencil chain (fp32) ----
void stencil(HlProg &p, const Sizes &s, bool expert) {
  int h = s[1][0], w = s[1][1];
  int stages = (s[0][0] - h) / 4;
  ImageParam in = param(p, "input", 2);
  std::vector<Func> st;
  Func prev = in;
  for (int i = 0; i < stages; i++) {
    Func f = stage(p, ("stage_" + std::to_string(i)).c_str());
    Expr e;
    for (int a = 0; a < 5; a++)
      for (int b = 0; b < 5; b++) {
        Expr t = ((a + 1) * (b + 1) / 225.0f) * prev(x + b, y + a);
        e = e.defined() ? e + t : t;
      }
    f(x, y) = e;
    st.push_back(f);
    prev = f;
  }
  p.out = prev;
  p.has_expert = true;
  if (expert) {
    // apps/stencil_chain/stencil_chain_generator.cpp, CPU: every 11th stage from the output
    // computed at the root in 4 x 4 tiles (w / 4 by h / 4), fused and parallel, vectorized;
    // the 10 stages before each stored per tile and computed per row of it, vectorized.
    const int group = 11;
    Var xo("xo"), yo("yo"), xi("xi"), yi("yi"), t("t");
    for (int j = stages - 1; j >= 0; j -= group) {
      Func o = st[j];
      int e = 4 * (stages - 1 - j);
      o.compute_root().tile(x, y, xo, yo, xi, yi, (w + e) / 4, (h + e) / 4).fuse(xo, yo, t).parallel(t).vectorize(xi, VEC);
      for (int i = std::max(0, j - group + 1); i < j; i++) st[i].store_at(o, t).compute_at(o, yi).vectorize(x, VEC);
    }
  }
}

// ==== held-out programs (session 28); no Halide app has them, so no expert schedule ====

// ---- 3-level pyramid: [1 2 1] / 4 downsampling by 2 (x then y), twice; nearest upsampling ----
Expr w121(Expr a, Expr b, Expr e) { return (a + 2.0f * b + e) * 0.25f; }
void pyramid(HlProg &p, const Sizes &, bool) {
  ImageParam in = param(p, "input", 2);
  Func dx1 = stage(p, "dx1"), d1 = stage(p, "d1"), dx2 = stage(p, "dx2"), d2 = stage(p, "d2"), l1 = stage(p, "l1"),
       out = stage(p, "output");
  dx1(x, y) = w121(in(2 * x, y), in(2 * x + 1, y), in(2 * x + 2, y));
  d1(x, y) = w121(dx1(x, 2 * y), dx1(x, 2 * y + 1), dx1(x, 2 * y + 2));
  dx2(x, y) = w121(d1(2 * x, y), d1(2 * x + 1, y), d1(2 * x + 2, y));
  d2(x, y) = w121(dx2(x, 2 * y), dx2(x, 2 * y + 1), dx2(x, 2 * y + 2));
  l1(x, y) = d1(x, y) - d2(x / 2, y / 2);
  Expr cc = in(x, y);
  out(x, y) = cc + 0.5f * (cc - d1(x / 2, y / 2)) + 0.25f * l1(x / 2, y / 2);
  p.out = out;
}

// ---- local contrast normalization, 5x5 boxes (x then y) of the input and of its square ----
void lcn(HlProg &p, const Sizes &, bool) {
  ImageParam in = param(p, "input", 2);
  Func bx = stage(p, "box_x"), bxs = stage(p, "box_x_sq"), mean = stage(p, "mean"), msq = stage(p, "mean_sq"),
       out = stage(p, "output");
  Expr e, q;
  for (int k = 0; k < 5; k++) {
    Expr t = in(x + k, y);
    e = e.defined() ? e + t : t;
    q = q.defined() ? q + t * t : t * t;
  }
  bx(x, y) = e * 0.2f;
  bxs(x, y) = q * 0.2f;
  Expr m, s2;
  for (int k = 0; k < 5; k++) {
    m = m.defined() ? m + bx(x, y + k) : bx(x, y + k);
    s2 = s2.defined() ? s2 + bxs(x, y + k) : bxs(x, y + k);
  }
  mean(x, y) = m * 0.2f;
  msq(x, y) = s2 * 0.2f;
  out(x, y) = (in(x + 2, y + 2) - mean(x, y)) / sqrt(msq(x, y) - mean(x, y) * mean(x, y) + 1e-3f);
  p.out = out;
}

// ---- conv1d (kernel 3) + bias + GELU (tanh form), channels last: x is the channel ----
void conv1d(HlProg &p, const Sizes &s, bool) {
  int ci = s[0][1];
  ImageParam in = param(p, "input", 2), w = param(p, "weight", 3), bias = param(p, "bias", 1);
  RDom r(0, ci, 0, 3, "r");  // r.x: input channel (innermost, as tec's last reduce axis), r.y: tap
  Func cv = stage(p, "conv1d"), out = stage(p, "gelu");
  cv(x, y) = 0.0f;
  cv(x, y) += in(r.x, y + r.y) * w(x, r.x, r.y);
  Expr v = cv(x, y) + bias(x);
  out(x, y) = 0.5f * v * (1.0f + tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
  p.out = out;
}

// ---- two-layer MLP ----
void mlp(HlProg &p, const Sizes &s, bool) {
  int d = s[0][1], f = s[1][1];
  ImageParam xin = param(p, "x", 2), w1 = param(p, "W1", 2), b1 = param(p, "b1", 1), w2 = param(p, "W2", 2),
             b2 = param(p, "b2", 1);
  RDom k(0, d, "k"), k2(0, f, "k2");
  Func m1 = stage(p, "mm1"), h = stage(p, "hidden"), m2 = stage(p, "mm2"), out = stage(p, "output");
  m1(x, y) = 0.0f;
  m1(x, y) += xin(k, y) * w1(x, k);
  h(x, y) = max(m1(x, y) + b1(x), 0.0f);
  m2(x, y) = 0.0f;
  m2(x, y) += h(k2, y) * w2(x, k2);
  out(x, y) = m2(x, y) + b2(x);
  p.out = out;
}

// ---- column means ----
void colmean(HlProg &p, const Sizes &s, bool) {
  int m = s[0][0];
  ImageParam a = param(p, "A", 2);
  RDom r(0, m, "r");
  Func out = stage(p, "colmean");
  out(x) = 0.0f;
  out(x) += a(x, r) * (1.0f / m);
  p.out = out;
}

// ---- bilinear resize by 2/3, computed indices ----
void resize(HlProg &p, const Sizes &s, bool) {
  int h = s[0][0], w = s[0][1];
  ImageParam in = param(p, "input", 2);
  Func out = stage(p, "resized");
  auto src = [](Expr o, int n, Expr &i0) {
    Expr sv = max((cast<float>(o) + 0.5f) * 1.5f - 0.5f, 0.0f);
    i0 = clamp(cast<int>(sv), 0, n - 2);
    return sv - cast<float>(i0);
  };
  Expr y0, x0;
  Expr fy = src(y, h, y0), fx = src(x, w, x0);
  Expr top = (1.0f - fx) * in(x0, y0) + fx * in(x0 + 1, y0);
  Expr bot = (1.0f - fx) * in(x0, y0 + 1) + fx * in(x0 + 1, y0 + 1);
  out(x, y) = (1.0f - fy) * top + fy * bot;
  p.out = out;
}

}  // namespace

bool hl_declare(const std::string &name, const Sizes &sizes, bool expert, HlProg &p) {
  static const std::pair<const char *, void (*)(HlProg &, const Sizes &, bool)> tab[] = {
      {"gemm", gemm}, {"blur", blur}, {"conv", conv}, {"dw", dw}, {"unsharp", unsharp}, {"harris", harris},
      {"maxpool", maxpool}, {"softmax", softmax}, {"layernorm", layernorm}, {"attention", attention},
      {"stencil", stencil}, {"pyramid", pyramid}, {"lcn", lcn}, {"conv1d", conv1d}, {"mlp", mlp},
      {"colmean", colmean}, {"resize", resize}};
  for (auto &e : tab)
    if (name == e.first) {
      e.second(p, sizes, expert);
      return true;
    }
  return false;
}
