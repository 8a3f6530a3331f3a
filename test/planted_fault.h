// Planting a fault in an evaluation, for the divergence tests and the
// bisect fuzz target: random input values for any shape, and a copy of a
// value with one element moved far from where it was (beyond any
// tolerance compare.h has), to be handed in through EvalOptions::substitutes.
#ifndef DECOMPOSED_TEST_PLANTED_FAULT_H_
#define DECOMPOSED_TEST_PLANTED_FAULT_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "decomposed/eval/value.h"
#include "decomposed/proto/hlo.pb.h"
#include "decomposed/xla/element_value.h"
#include "decomposed/xla/primitive_type.h"

namespace decomposed::planted {

// A value of `shape` with random bytes (PRED and sub-byte integers
// normalised), or nullopt for a shape that has no array data to make.
inline std::optional<eval::Value> RandomValue(const xla::ShapeProto& shape, std::mt19937& g,
                                              bool finite_floats = true) {
  const PrimitiveType t = static_cast<PrimitiveType>(shape.element_type());
  if (t == PrimitiveType::kTuple) {
    std::vector<eval::Value> e;
    for (const xla::ShapeProto& s : shape.tuple_shapes()) {
      std::optional<eval::Value> v = RandomValue(s, g, finite_floats);
      if (!v) return std::nullopt;
      e.push_back(*v);
    }
    return eval::Value::Tuple(std::move(e));
  }
  if (t == PrimitiveType::kToken) return eval::Value::Tuple({});
  if (KindOf(t) == ElementKind::kNone) return std::nullopt;
  std::vector<int64_t> dims(shape.dimensions().begin(), shape.dimensions().end());
  absl::StatusOr<eval::Array> a = eval::Array::Allocate(t, dims, uint64_t{1} << 24);
  if (!a.ok()) return std::nullopt;
  char* p = a->mutable_data();
  const uint64_t n = static_cast<uint64_t>(a->element_count());
  std::uniform_real_distribution<double> d(-2, 2);
  for (uint64_t i = 0; i < a->byte_size(); ++i) p[i] = static_cast<char>(g());
  if (finite_floats && (t == PrimitiveType::kF32 || t == PrimitiveType::kC64)) {
    for (uint64_t i = 0; i < a->byte_size() / 4; ++i) {
      const float f = static_cast<float>(d(g));
      std::memcpy(p + 4 * i, &f, 4);
    }
  } else if (finite_floats && (t == PrimitiveType::kF64 || t == PrimitiveType::kC128)) {
    for (uint64_t i = 0; i < a->byte_size() / 8; ++i) {
      const double f = d(g);
      std::memcpy(p + 8 * i, &f, 8);
    }
  } else if (finite_floats && t == PrimitiveType::kBF16) {
    for (uint64_t i = 0; i < n; ++i) {
      const float f = static_cast<float>(d(g));
      uint32_t b;
      std::memcpy(&b, &f, 4);
      const uint16_t h = static_cast<uint16_t>(b >> 16);
      std::memcpy(p + 2 * i, &h, 2);
    }
  }
  absl::StatusOr<eval::Array> c = eval::Array::Copy(t, dims, a->bytes());
  if (!c.ok()) return std::nullopt;
  return eval::Value(*c);
}

// Element `p` of type `t` moved far away: PRED flipped, integers + 1 (with
// wraparound), real floats to v + max(1, |v|) (0 for NaN or inf; for the
// narrow types, the representable finite value farthest from v), complex
// floats in their real part, by max(1, |z|) (to 0 + 0i when a part is NaN
// or infinite).
inline void PerturbElement(PrimitiveType t, char* p) {
  const size_t w = Info(t).element_bytes;
  switch (KindOf(t)) {
    case ElementKind::kBool:
      p[0] = p[0] ? 0 : 1;
      return;
    case ElementKind::kSigned:
    case ElementKind::kUnsigned: {
      uint64_t v = 0;
      std::memcpy(&v, p, w);
      ++v;
      std::memcpy(p, &v, w);
      return;
    }
    case ElementKind::kComplex: {
      // A NaN in either part makes the element NaN (compare.h), and an
      // infinite part does not move: then both parts become 0; else the
      // real part moves.
      const Complex z = ComplexValue(t, p);
      if (!std::isfinite(z.re) || !std::isfinite(z.im)) {
        std::memset(p, 0, w);
        return;
      }
      // By the element's modulus, so that the move is large against it.
      const double re = z.re + std::max(1.0, std::hypot(z.re, z.im));
      if (t == PrimitiveType::kC64) {
        const float f = static_cast<float>(re);
        std::memcpy(p, &f, 4);
      } else {
        std::memcpy(p, &re, 8);
      }
      return;
    }
    case ElementKind::kReal:
      break;
    default:
      return;
  }
  auto moved = [](double v) { return std::isfinite(v) ? v + std::max(1.0, std::fabs(v)) : 0.0; };
  if (t == PrimitiveType::kF32) {
    float f;
    std::memcpy(&f, p, 4);
    f = static_cast<float>(moved(f));
    std::memcpy(p, &f, 4);
    return;
  }
  if (t == PrimitiveType::kF64) {
    double f;
    std::memcpy(&f, p, 8);
    f = moved(f);
    std::memcpy(p, &f, 8);
    return;
  }
  // Narrow floats (1 or 2 bytes): the farthest finite encoding.
  const double v = RealValue(t, p);
  const double from = std::isfinite(v) ? v : 0.0;
  uint32_t best = 0;
  double best_d = -1;
  const uint32_t patterns = w == 1 ? 256u : 65536u;
  for (uint32_t b = 0; b < patterns; ++b) {
    char e[2] = {static_cast<char>(b & 0xff), static_cast<char>(b >> 8)};
    const double x = RealValue(t, e);
    if (!std::isfinite(x)) continue;
    const double d = std::fabs(x - from);
    if (d > best_d) {
      best_d = d;
      best = b;
    }
  }
  p[0] = static_cast<char>(best & 0xff);
  if (w == 2) p[1] = static_cast<char>(best >> 8);
}

// A copy of `v` with element `index` (of its first array with elements)
// perturbed; nullopt when it has no element.
inline std::optional<eval::Value> Perturbed(const eval::Value& v, uint64_t index) {
  if (v.is_tuple()) {
    std::vector<eval::Value> e = v.elements();
    for (eval::Value& x : e) {
      std::optional<eval::Value> p = Perturbed(x, index);
      if (p) {
        x = *p;
        return eval::Value::Tuple(std::move(e));
      }
    }
    return std::nullopt;
  }
  const eval::Array& a = v.array();
  if (a.element_count() == 0) return std::nullopt;
  absl::StatusOr<eval::Array> c = a.Contiguous();
  if (!c.ok()) return std::nullopt;
  std::string bytes(c->bytes());
  const uint64_t i = index % static_cast<uint64_t>(a.element_count());
  PerturbElement(a.type(), bytes.data() + i * a.element_bytes());
  absl::StatusOr<eval::Array> out = eval::Array::Copy(a.type(), a.dims(), bytes);
  if (!out.ok()) return std::nullopt;
  return eval::Value(*out);
}

}  // namespace decomposed::planted

#endif  // DECOMPOSED_TEST_PLANTED_FAULT_H_
