// Copyright 2026 The RingKernel Authors.
//
// routing.h: named routes, rebindable while the system runs.
//
// The front-end collects every `rk::route("name")` of a program and numbers
// the names 0..R-1 (sorted). Codegen emits `rk_route_index(hash)`, a switch
// from the name's hash to its number that folds to a constant where the name
// is a literal. The table itself is R actor indices in device memory; the
// service warp writes an entry when the host binds or unbinds a route, and a
// send reads it once: every send goes to the binding in force when it read
// the entry — the old actor or the new one, never a mix.
//
// Example:
//   rk::u32 target = rk::RouteTarget(routes, num_routes, index);   // kNoActorValue if unbound
#ifndef RINGKERNEL_DEVICE_ROUTING_H_
#define RINGKERNEL_DEVICE_ROUTING_H_

#include "ringkernel/device/atomics.h"
#include "ringkernel/device/config.h"
#include "ringkernel/device/types.h"

namespace rk {

// A route name's identity on the device: FNV-1a, 64-bit. The host computes
// the same value when it generates `rk_route_index`.
RK_HOST_DEVICE constexpr u64 RouteHash(const char* name) {
  u64 h = 0xcbf29ce484222325ull;
  for (; *name != 0; ++name) {
    h ^= static_cast<u8>(*name);
    h *= 0x100000001b3ull;
  }
  return h;
}
static_assert(RouteHash("") == 0xcbf29ce484222325ull, "FNV-1a offset basis");
static_assert(RouteHash("a") == 0xaf63dc4c8601ec8cull, "FNV-1a of \"a\"");

// The actor a route is bound to, kNoActorValue when unbound or unknown
// (`index` < 0: a name the program never used).
RK_HOST_DEVICE RK_FORCEINLINE u32 RouteTarget(const u32* routes, u32 num_routes, i32 index) {
  if (index < 0 || static_cast<u32>(index) >= num_routes) return kNoActorValue;
  return LoadAcquireGpu32(&routes[index]);
}

// Binds route `index` to `actor` (kNoActorValue unbinds). The release pairs
// with RouteTarget's acquire: whoever sees the new binding also sees the
// actor's spawn that happened before it.
RK_HOST_DEVICE RK_FORCEINLINE void RouteBind(u32* routes, u32 index, u32 actor) {
  StoreReleaseGpu32(&routes[index], actor);
}

}  // namespace rk

#endif  // RINGKERNEL_DEVICE_ROUTING_H_
