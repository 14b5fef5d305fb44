// Copyright 2026 The RingKernel Authors.
//
// message.h: host-side message types.
//
// A host struct stands for one of the program's message types when it has
// the same layout and is named through `rk::MessageTraits`. `actorc header`
// generates such structs (and the enums their fields use), each declared
// with its layout signature:
//
//   struct Deposit { int32_t account; int64_t cents; };
//   RK_HOST_MESSAGE_LAYOUT(::Deposit, "Deposit", "account:int32@0;cents:int64@8");
//
// The runtime checks the name against the program, and the signature
// against the layout the front-end extracted, field by field (names, types,
// enums, array extents, offsets): a header generated for another version of
// the program is refused with the first field that differs, instead of
// corrupting messages. An application that shares a header with its
// fragments can name the structs itself:
//
//   struct Deposit { int account; long long cents; };   // also included by bank.cu
//   RK_HOST_MESSAGE(Deposit, "Deposit");
//
//   system->Send(bank, Deposit{1, 500});
//
// RK_HOST_MESSAGE checks only the name, size and alignment: reordered fields
// of the same sizes go unnoticed. Both are checked once per type and system.
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
// and optionally `static constexpr const char* kLayout = "signature";`, the
// layout signature of the program's type (jit::LayoutSignature) — or use
// the macros below, at global scope.
template <class M>
struct MessageTraits;

// Name only: the runtime checks the name, size and alignment.
#define RK_HOST_MESSAGE(Type, Name)                      \
  template <>                                            \
  struct rk::MessageTraits<Type> {                       \
    static constexpr const char* kName = Name;           \
  }

// Name and layout signature, as `actorc header` writes them: the runtime
// also checks every field against the program.
#define RK_HOST_MESSAGE_LAYOUT(Type, Name, Layout)       \
  template <>                                            \
  struct rk::MessageTraits<Type> {                       \
    static constexpr const char* kName = Name;           \
    static constexpr const char* kLayout = Layout;       \
  }

namespace detail {
// A small process-wide number per host type, for per-system lookup caches.
uint32_t NextTypeSlot();
template <class M>
uint32_t TypeSlot() {
  static const uint32_t slot = NextTypeSlot();
  return slot;
}

// The traits' layout signature, or nullptr for traits without one
// (RK_HOST_MESSAGE).
template <class M>
constexpr const char* HostLayout() {
  if constexpr (requires { MessageTraits<M>::kLayout; }) {
    return MessageTraits<M>::kLayout;
  } else {
    return nullptr;
  }
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
