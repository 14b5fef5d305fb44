// Copyright 2026 The RingKernel Authors.
//
// layout_builders.h: FieldLayout values for tests of the handler model, its
// layout signatures and the host header, with the derived sizes filled in.
#ifndef RINGKERNEL_TESTS_LAYOUT_BUILDERS_H_
#define RINGKERNEL_TESTS_LAYOUT_BUILDERS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "jit/handler_model.h"

namespace rk::testing {

// A field of `dims` elements (outermost first) of `element_size` bytes each.
inline jit::FieldLayout Field(std::string name, std::string type, jit::FieldKind kind, uint64_t offset,
                              uint64_t element_size, std::vector<uint64_t> dims = {}, std::string record = "") {
  jit::FieldLayout f;
  f.name = std::move(name);
  f.type = std::move(type);
  f.kind = kind;
  f.record = std::move(record);
  f.dims = std::move(dims);
  f.offset = offset;
  f.element_size = element_size;
  f.size = element_size;
  for (uint64_t d : f.dims) f.size *= d;
  return f;
}

// The same without the spelling clang gives the type (layouts do not use it).
inline jit::FieldLayout Field(std::string name, jit::FieldKind kind, uint64_t offset, uint64_t element_size,
                              std::vector<uint64_t> dims = {}) {
  return Field(std::move(name), "", kind, offset, element_size, std::move(dims));
}

// A field of enum `enum_name` with underlying `kind`.
inline jit::FieldLayout EnumField(std::string name, std::string enum_name, jit::FieldKind kind, uint64_t offset,
                                  std::vector<uint64_t> dims = {}) {
  jit::FieldLayout f = Field(std::move(name), enum_name, kind, offset, jit::FieldKindSize(kind), std::move(dims));
  f.enum_name = std::move(enum_name);
  return f;
}

}  // namespace rk::testing

#endif  // RINGKERNEL_TESTS_LAYOUT_BUILDERS_H_
