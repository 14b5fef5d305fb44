// Copyright 2026 The RingKernel Authors.
//
// hlc.h: the hybrid logical clock, packed into 64 bits.
//
// A timestamp is a physical time in nanoseconds whose low `kLogicalBits` bits
// are replaced by a logical counter: the physical part has a resolution of
// 2^16 ns (65.5 µs) and the counter orders up to 65,536 events inside one such
// tick. Compared as plain integers, timestamps order events the way an HLC
// must:
//   * each actor's clock never goes backwards (`HlcTick` on every event);
//   * a message's receive is later than its send (`HlcMerge` on receive).
// If the counter overflows it carries into the physical part, which keeps
// both properties.
//
// Example:
//   u64 t_send = rk::HlcTick(actor_clock, now_ns);          // stamp an outgoing message
//   u64 t_recv = rk::HlcMerge(receiver_clock, t_send, now_ns);  // > t_send
#ifndef RINGKERNEL_DEVICE_HLC_H_
#define RINGKERNEL_DEVICE_HLC_H_

#include "ringkernel/device/config.h"

namespace rk {

inline constexpr u32 kHlcLogicalBits = 16;
inline constexpr u64 kHlcLogicalMask = (u64{1} << kHlcLogicalBits) - 1;

RK_HOST_DEVICE constexpr u64 HlcPhysical(u64 hlc) { return hlc & ~kHlcLogicalMask; }
RK_HOST_DEVICE constexpr u64 HlcLogical(u64 hlc) { return hlc & kHlcLogicalMask; }

// The clock after a local event (a handler invocation or a send) at physical
// time `now_ns`.
RK_HOST_DEVICE constexpr u64 HlcTick(u64 local, u64 now_ns) {
  const u64 pt = now_ns & ~kHlcLogicalMask;
  return pt > local ? pt : local + 1;
}

// The clock after receiving a message stamped `remote` at physical time
// `now_ns`: later than both the local clock and the message.
RK_HOST_DEVICE constexpr u64 HlcMerge(u64 local, u64 remote, u64 now_ns) {
  const u64 pt = now_ns & ~kHlcLogicalMask;
  const u64 m = local > remote ? local : remote;
  return pt > m ? pt : m + 1;
}

static_assert(HlcTick(0, 0x30000) == 0x30000, "physical time moves the clock");
static_assert(HlcTick(0x30005, 0x30000) == 0x30006, "a stalled physical clock ticks the counter");
static_assert(HlcMerge(0x10000, 0x50002, 0x30000) == 0x50003, "receive is later than the send");
static_assert(HlcTick(0x1FFFF, 0) == 0x20000, "counter overflow carries into the physical part");

}  // namespace rk

#endif  // RINGKERNEL_DEVICE_HLC_H_
