// Copyright 2026 The RingKernel Authors.
//
// status_macros.h: early returns for absl::Status and absl::StatusOr.
//
// Debian's Abseil (20220623) ships no status macros, so RingKernel defines
// its own, usable by applications too:
//
//   absl::StatusOr<int> Parse(std::string_view s);
//   absl::Status Use(std::string_view s) {
//     RK_ASSIGN_OR_RETURN(int v, Parse(s));
//     RK_RETURN_IF_ERROR(Check(v));
//     return absl::OkStatus();
//   }
#ifndef RINGKERNEL_STATUS_MACROS_H_
#define RINGKERNEL_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define RK_STATUS_CONCAT_INNER_(a, b) a##b
#define RK_STATUS_CONCAT_(a, b) RK_STATUS_CONCAT_INNER_(a, b)

// Returns the status of `expr` from the enclosing function unless it is OK.
#define RK_RETURN_IF_ERROR(expr)                  \
  do {                                            \
    ::absl::Status rk_status_ = (expr);           \
    if (!rk_status_.ok()) return rk_status_;      \
  } while (false)

// Evaluates `rexpr` (an absl::StatusOr); on error returns its status, else
// moves its value into `lhs` (a declaration or an lvalue).
#define RK_ASSIGN_OR_RETURN(lhs, rexpr) \
  RK_ASSIGN_OR_RETURN_IMPL_(RK_STATUS_CONCAT_(rk_statusor_, __LINE__), lhs, rexpr)

#define RK_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                              \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // RINGKERNEL_STATUS_MACROS_H_
