// Copyright 2026 The RingKernel Authors.
//
// message.h: host-side message types.
//
// A host struct stands for one of the program's message types when it has
// the same layout and is named through `rk::MessageTraits`. `actorc header`
// generates such structs; an application that shares a header with its
// fragments names them itself:
//
//   struct Deposit { int account; long long cents; };   // also included by bank.cu
//   RK_HOST_MESSAGE(Deposit, "Deposit");
//
//   system->Send(bank, Deposit{1, 500});
//
// The runtime checks the name against the program and the size and alignment
// against the layout the front-end extracted, once per type and system.
#ifndef RINGKERNEL_MESSAGE_H_
#define RINGKERNEL_MESSAGE_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ringkernel/device/types.h"

namespace rk {

// Specialise with `static constexpr const char* kName = "Qualified::Name";`
// (RK_HOST_MESSAGE does it).
template <class M>
struct MessageTraits;

#define RK_HOST_MESSAGE(Type, Name)                      \
  template <>                                            \
  struct rk::MessageTraits<Type> {                       \
    static constexpr const char* kName = Name;           \
  }

namespace detail {
// A small process-wide number per host type, for per-system lookup caches.
uint32_t NextTypeSlot();
template <class M>
uint32_t TypeSlot() {
  static const uint32_t slot = NextTypeSlot();
  return slot;
}
}  // namespace detail

// A message the host received: sent to rk::host() or replied to an Ask.
struct Message {
  ActorId from;
  uint32_t type_id = 0;
  std::string type;         // the message type's qualified name
  std::string bytes;        // exactly the type's size
  uint64_t correlation = 0;  // the Ask it answers, 0 if none
  uint64_t hlc = 0;          // the sender's clock when it sent

  // The bytes as `M`; InvalidArgument if `M` is another type or size.
  template <class M>
  absl::StatusOr<M> As() const {
    static_assert(std::is_trivially_copyable_v<M>, "messages are trivially copyable");
    if (type != MessageTraits<M>::kName) {
      return absl::InvalidArgumentError(
          absl::StrCat("the message is a '", type, "', not a '", MessageTraits<M>::kName, "'"));
    }
    if (bytes.size() != sizeof(M)) {
      return absl::InvalidArgumentError(absl::StrCat("the message '", type, "' is ", bytes.size(),
                                                     " bytes; the host type is ", sizeof(M)));
    }
    M m;
    std::memcpy(&m, bytes.data(), sizeof(M));
    return m;
  }
};

}  // namespace rk

#endif  // RINGKERNEL_MESSAGE_H_
