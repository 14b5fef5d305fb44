// Copyright 2026 The RingKernel Authors.
//
// The device queue headers as the ThreadSanitizer tests include them, on
// the host (mailbox.h, channel.h).
//
// The plain-area path fences (FenceGpu, FenceAcquireGpu), which GCC warns
// ThreadSanitizer does not model. On the host the LL pair stores and loads
// around those fences release and acquire (mailbox.h), so the tool sees the
// ordering without them.
#ifndef RINGKERNEL_TESTS_TSAN_DEVICE_HEADERS_H_
#define RINGKERNEL_TESTS_TSAN_DEVICE_HEADERS_H_

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtsan"
#endif
#include "ringkernel/device/channel.h"
#include "ringkernel/device/mailbox.h"
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic pop
#endif

#endif  // RINGKERNEL_TESTS_TSAN_DEVICE_HEADERS_H_
