// The float64 references of prefill and decode attention (ctile/kernels/attention.hpp,
// attention_decode.hpp) and the error measure their tests use: shared by the CPU correctness suite
// and the GPU suite.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <ctile/core/error.hpp>

namespace attention_test {

// The message of the UserError f throws ("no error" when it throws none): the host entries' tests.
template <class F>
std::string user_error_of(F&& f) {
  try {
    f();
  } catch (const ctile::UserError& e) {
    return e.what();
  }
  return "no error";
}

template <class T>
double to_d(T v) {
  return static_cast<double>(static_cast<float>(v));
}

struct Shape4 {
  std::int64_t b, hq, hkv, sq, sk, d;
};

// O = softmax(Q K^T * scale + mask) V in float64, from the inputs as stored (in T).
template <class T>
std::vector<double> reference(const Shape4& s, const std::vector<T>& q, const std::vector<T>& k, const std::vector<T>& v,
                              bool causal, double scale) {
  std::vector<double> o(static_cast<std::size_t>(s.b * s.hq * s.sq * s.d), 0.0);
  std::vector<double> p(static_cast<std::size_t>(s.sk));
  const std::int64_t group = s.hq / s.hkv;
  for (std::int64_t b = 0; b < s.b; ++b)
    for (std::int64_t h = 0; h < s.hq; ++h) {
      const std::int64_t hk = h / group;
      const auto qo = static_cast<std::size_t>(((b * s.hq + h) * s.sq) * s.d);
      const auto ko = static_cast<std::size_t>(((b * s.hkv + hk) * s.sk) * s.d);
      for (std::int64_t i = 0; i < s.sq; ++i) {
        double mx = -INFINITY;
        for (std::int64_t j = 0; j < s.sk; ++j) {
          if (causal && j > i) {
            p[std::size_t(j)] = -INFINITY;
            continue;
          }
          double dot = 0;
          for (std::int64_t c = 0; c < s.d; ++c)
            dot += to_d(q[qo + std::size_t(i * s.d + c)]) * to_d(k[ko + std::size_t(j * s.d + c)]);
          p[std::size_t(j)] = dot * scale;
          mx = std::max(mx, p[std::size_t(j)]);
        }
        double den = 0;
        for (std::int64_t j = 0; j < s.sk; ++j) den += p[std::size_t(j)] = std::exp(p[std::size_t(j)] - mx);
        for (std::int64_t j = 0; j < s.sk; ++j) {
          const double w = p[std::size_t(j)] / den;
          if (w == 0) continue;
          for (std::int64_t c = 0; c < s.d; ++c) o[qo + std::size_t(i * s.d + c)] += w * to_d(v[ko + std::size_t(j * s.d + c)]);
        }
      }
    }
  return o;
}

// log(sum_j exp(s_ij)) of every query row (the scores scaled, masked as `reference` masks them), in
// float64: [B, Hq, Sq] row-major.
template <class T>
std::vector<double> reference_lse(const Shape4& s, const std::vector<T>& q, const std::vector<T>& k, bool causal,
                                  double scale) {
  std::vector<double> r(static_cast<std::size_t>(s.b * s.hq * s.sq));
  const std::int64_t group = s.hq / s.hkv;
  for (std::int64_t b = 0; b < s.b; ++b)
    for (std::int64_t h = 0; h < s.hq; ++h)
      for (std::int64_t i = 0; i < s.sq; ++i) {
        const auto qo = static_cast<std::size_t>(((b * s.hq + h) * s.sq + i) * s.d);
        const auto ko = static_cast<std::size_t>(((b * s.hkv + h / group) * s.sk) * s.d);
        std::vector<double> p;
        double mx = -INFINITY;
        for (std::int64_t j = 0; j < s.sk && !(causal && j > i); ++j) {
          double dot = 0;
          for (std::int64_t c = 0; c < s.d; ++c) dot += to_d(q[qo + std::size_t(c)]) * to_d(k[ko + std::size_t(j * s.d + c)]);
          p.push_back(dot * scale);
          mx = std::max(mx, p.back());
        }
        double den = 0;
        for (double x : p) den += std::exp(x - mx);
        r[static_cast<std::size_t>((b * s.hq + h) * s.sq + i)] = mx + std::log(den);
      }
  return r;
}

// The largest error relative to the row's largest |output|, over every row: P rounded to T (8 bits
// for bf16) bounds it near 2^-8; the output's rounding adds half an ulp.
template <class T>
double worst_row_error(const Shape4& s, const std::vector<T>& got, const std::vector<double>& ref) {
  double worst = 0;
  for (std::int64_t r = 0; r < s.b * s.hq * s.sq; ++r) {
    double mag = 1e-30, err = 0;
    for (std::int64_t c = 0; c < s.d; ++c) {
      const auto at = static_cast<std::size_t>(r * s.d + c);
      const double g = to_d(got[at]);
      if (!std::isfinite(g)) return INFINITY;
      mag = std::max(mag, std::fabs(ref[at]));
      err = std::max(err, std::fabs(g - ref[at]));
    }
    worst = std::max(worst, err / mag);
  }
  return worst;
}

// Decode: o[b, h] = softmax(q[b, h] K[b, h / G, :len]^T * scale) V[b, h / G, :len] in float64
// (q and o [B, Hq, D], k and v [B, Hkv, Smax, D]; a length of 0 gives zeros, one above Smax reads
// Smax keys).
template <class T>
std::vector<double> decode_reference(std::int64_t b_, std::int64_t hq, std::int64_t hkv, std::int64_t smax, std::int64_t d,
                                     const std::vector<T>& q, const std::vector<T>& k, const std::vector<T>& v,
                                     const std::vector<std::int64_t>& lens, double scale) {
  std::vector<double> o(static_cast<std::size_t>(b_ * hq * d), 0.0);
  const std::int64_t group = hq / hkv;
  for (std::int64_t b = 0; b < b_; ++b)
    for (std::int64_t h = 0; h < hq; ++h) {
      const std::int64_t n = std::min(lens[std::size_t(b)], smax), hk = h / group;
      if (n <= 0) continue;
      const auto qo = static_cast<std::size_t>((b * hq + h) * d);
      const auto ko = static_cast<std::size_t>(((b * hkv + hk) * smax) * d);
      std::vector<double> p(static_cast<std::size_t>(n));
      double mx = -INFINITY;
      for (std::int64_t j = 0; j < n; ++j) {
        double dot = 0;
        for (std::int64_t c = 0; c < d; ++c) dot += to_d(q[qo + std::size_t(c)]) * to_d(k[ko + std::size_t(j * d + c)]);
        p[std::size_t(j)] = dot * scale;
        mx = std::max(mx, p[std::size_t(j)]);
      }
      double den = 0;
      for (auto& x : p) den += x = std::exp(x - mx);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t c = 0; c < d; ++c)
          o[qo + std::size_t(c)] += p[std::size_t(j)] / den * to_d(v[ko + std::size_t(j * d + c)]);
    }
  return o;
}

}  // namespace attention_test
