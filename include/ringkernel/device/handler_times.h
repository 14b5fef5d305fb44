// Copyright 2026 The RingKernel Authors.
//
// handler_times.h: per-actor histograms of how long its handlers take,
// shared by the GPU (which counts, rt_trace.cuh) and the host (which reads
// percentiles from them, runtime/system.cc).
//
// A program built with RK_TRACE (CompileOptions::trace, `actorc build
// --trace`) times every handler invocation that ends (handled or failed; a
// ctx.retry_later is not counted) with %globaltimer, from just before the
// call to just after it, and adds one to a bucket of its actor's row in
// device memory (a fire-and-forget atomic add: nothing waits for it). The
// monitor warp copies the rows to mapped memory at each flush the host asks
// for (Stats with `fresh`), at every 64th periodic flush, and at the end. Built without RK_TRACE, nothing is
// counted.
//
// Buckets are log-linear: bucket 0 holds times under 32 ns; then each power
// of two from 32 ns up is split in four equal buckets, so a bucket's upper
// edge is at most 1.25 × its lower edge; the last bucket holds everything
// from 1.5 × 2^36 ns (103 s) up. The timer itself ticks in 32 ns steps or
// coarser (the GPU decides), which bounds the resolution of short handlers.
#ifndef RINGKERNEL_DEVICE_HANDLER_TIMES_H_
#define RINGKERNEL_DEVICE_HANDLER_TIMES_H_

#include "ringkernel/device/config.h"

namespace rk {

inline constexpr u32 kHandlerTimeBuckets = 128;
inline constexpr u32 kHandlerTimeMinLog2 = 5;  // bucket 0: under 2^5 ns
inline constexpr u32 kHandlerTimeSubBits = 2;  // 2^2 buckets per power of two

RK_HOST_DEVICE RK_FORCEINLINE u32 HandlerTimeFloorLog2(u64 v) {
#if RK_ON_DEVICE
  return 63u - static_cast<u32>(__clzll(static_cast<long long>(v)));
#else
  return 63u - static_cast<u32>(__builtin_clzll(v));
#endif
}

// The bucket of a handler that took `ns` nanoseconds.
RK_HOST_DEVICE RK_FORCEINLINE u32 HandlerTimeBucket(u64 ns) {
  if (ns < (u64{1} << kHandlerTimeMinLog2)) return 0;
  const u32 e = HandlerTimeFloorLog2(ns);
  const u32 sub = static_cast<u32>(ns >> (e - kHandlerTimeSubBits)) & ((1u << kHandlerTimeSubBits) - 1);
  const u32 b = 1 + ((e - kHandlerTimeMinLog2) << kHandlerTimeSubBits) + sub;
  return b < kHandlerTimeBuckets - 1 ? b : kHandlerTimeBuckets - 1;
}

// The smallest time (ns) that falls in bucket `b`.
RK_HOST_DEVICE RK_FORCEINLINE u64 HandlerTimeBucketLow(u32 b) {
  if (b == 0) return 0;
  const u32 e = kHandlerTimeMinLog2 + ((b - 1) >> kHandlerTimeSubBits);
  const u64 sub = (b - 1) & ((1u << kHandlerTimeSubBits) - 1);
  return (u64{1} << e) + (sub << (e - kHandlerTimeSubBits));
}

// One past the largest time (ns) in bucket `b` (the last bucket has none: its
// low edge again).
RK_HOST_DEVICE RK_FORCEINLINE u64 HandlerTimeBucketHigh(u32 b) {
  return b + 1 < kHandlerTimeBuckets ? HandlerTimeBucketLow(b + 1) : HandlerTimeBucketLow(b);
}

// The time (ns) below which `num / den` of the `n` timings in `row` fall:
// the midpoint of the bucket that holds the ceil(n × num / den)-th smallest
// (the low edge in the last bucket); 0 when `n` is 0.
RK_HOST_DEVICE RK_FORCEINLINE u64 HandlerTimeQuantile(const u32* row, u64 n, u64 num, u64 den) {
  if (n == 0) return 0;
  u64 rank = (n * num + den - 1) / den;
  if (rank == 0) rank = 1;
  u64 seen = 0;
  for (u32 b = 0; b < kHandlerTimeBuckets; ++b) {
    seen += row[b];
    if (seen >= rank) {
      if (b + 1 == kHandlerTimeBuckets) return HandlerTimeBucketLow(b);
      return (HandlerTimeBucketLow(b) + HandlerTimeBucketHigh(b)) / 2;
    }
  }
  return HandlerTimeBucketLow(kHandlerTimeBuckets - 1);
}

}  // namespace rk

#endif  // RINGKERNEL_DEVICE_HANDLER_TIMES_H_
