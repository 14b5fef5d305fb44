// Copyright 2026 The RingKernel Authors.
//
// Experiment 6: what the actor infrastructure costs in memory, for a
// realistic workload: --exp6-actors actors (default 256) with 16 KiB of
// state each, in a program of their own (so the rings are sized for its
// small messages, not for bench.cu's 4 KiB ones), max_actors = the actor
// count, at two mailbox depths (256 slots, the default, and 32).
//
// Every figure is read from the runtime (System::Memory(): what it
// allocated) or from the driver (cuMemGetInfo before Start and after the
// actors exist: everything the system cost the device, the kernel's local
// memory reservation and module included); nothing is computed from layout
// constants. Rows (metric `bytes`, iteration 1): part=useful_state (the
// actors' state, what a program without actors would allocate),
// actor_state, mailboxes, device_tables, arena_reserved, mapped_host
// (pinned host memory: rings and control blocks), device_used (tables +
// mailboxes + state), device_allocated (tables + arena), driver_device_delta,
// and per_actor_{mailbox,tables,infrastructure}. overhead_pct = (total −
// useful) / useful × 100 for basis=used, allocated, driver and
// used_with_mapped.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "bench/exp_common.h"
#include "ringkernel/status_macros.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_status.h"

namespace rk::bench {
namespace {

constexpr char kHolderSource[] = R"(// rkbench exp6: an actor with 16 KiB of state.
struct Touch { unsigned int seed; };
struct TouchSum { int unused; };
struct Touched { unsigned long long sum; };
struct RK_ACTOR Holder {
  unsigned int data[4096];
  RK_HANDLER void on(const Touch& t, rk::Ctx& ctx) {
    for (unsigned i = 0; i < 4096; ++i) data[i] = t.seed + i;
  }
  RK_HANDLER void on(const TouchSum& q, rk::Ctx& ctx) {
    unsigned long long sum = 0;
    for (unsigned i = 0; i < 4096; ++i) sum += data[i];
    ctx.reply(Touched{sum});
  }
};
)";
constexpr uint64_t kStateBytes = 4096 * 4;

struct Touch { unsigned int seed; };
struct TouchSum { int unused; };
struct Touched { unsigned long long sum; };

}  // namespace
}  // namespace rk::bench

RK_HOST_MESSAGE(rk::bench::Touch, "Touch");
RK_HOST_MESSAGE(rk::bench::TouchSum, "TouchSum");
RK_HOST_MESSAGE(rk::bench::Touched, "Touched");

namespace rk::bench {

absl::Status Exp6Memory(const Bench& b) {
  const std::string exp = "exp6_memory";
  const int n = b.o.exp6_actors;
  if (n < 1) return absl::InvalidArgumentError("--exp6-actors must be at least 1");
  RK_ASSIGN_OR_RETURN(Program program, b.runtime.CompileSources({Source{"exp6_holder.cu", kHolderSource}}));
  RK_ASSIGN_OR_RETURN(const cuda::DriverApi* cu, cuda::Driver());
  for (uint32_t depth : {256u, 32u}) {
    size_t free0 = 0, free1 = 0, total = 0;
    RK_CU_RETURN_IF_ERROR(cu->cuMemGetInfo(&free0, &total), "cuMemGetInfo");
    SystemOptions so = BaseSystemOptions(b.o);
    so.max_actors = static_cast<uint32_t>(n);
    so.mailbox_capacity = depth;
    RK_ASSIGN_OR_RETURN(std::unique_ptr<System> sys, b.runtime.Start(program, so));
    std::vector<ActorId> actors;
    for (int i = 0; i < n; ++i) {
      RK_ASSIGN_OR_RETURN(ActorId id, sys->Spawn("Holder", absl::StrCat("holder", i)));
      RK_RETURN_IF_ERROR(sys->Send(id, Touch{static_cast<unsigned int>(i)}, absl::Now() + absl::Seconds(5)));
      actors.push_back(id);
    }
    for (int i = 0; i < n; ++i) {
      RK_ASSIGN_OR_RETURN(Touched t, sys->Ask<Touched>(actors[static_cast<size_t>(i)], TouchSum{0}, absl::Seconds(5)));
      // Σ (i + k) for k < 4096, modulo 2^32 per word.
      unsigned long long expect = 0;
      for (unsigned k = 0; k < 4096; ++k) expect += static_cast<unsigned int>(i) + k;
      if (t.sum != expect) return absl::InternalError(absl::StrCat("holder ", i, "'s state is wrong"));
    }
    RK_CU_RETURN_IF_ERROR(cu->cuMemGetInfo(&free1, &total), "cuMemGetInfo");
    const System::MemoryUsage m = sys->Memory();
    const double useful = static_cast<double>(n) * kStateBytes;
    const double used = static_cast<double>(m.device_tables + m.mailboxes + m.actor_state);
    const double allocated = static_cast<double>(m.device_tables + m.arena_reserved);
    const double driver = free0 > free1 ? static_cast<double>(free0 - free1) : 0.0;
    const std::string d = absl::StrCat(";mailbox=", depth);
    auto bytes = [&](const std::string& part, double v) { b.rec.Add(exp, "part=" + part + d, 1, "bytes", v, "bytes"); };
    bytes("useful_state", useful);
    bytes("actor_state", static_cast<double>(m.actor_state));
    bytes("mailboxes", static_cast<double>(m.mailboxes));
    bytes("device_tables", static_cast<double>(m.device_tables));
    bytes("arena_reserved", static_cast<double>(m.arena_reserved));
    bytes("mapped_host", static_cast<double>(m.mapped));
    bytes("device_used", used);
    bytes("device_allocated", allocated);
    bytes("driver_device_delta", driver);
    bytes("per_actor_mailbox", static_cast<double>(m.mailboxes) / n);
    bytes("per_actor_tables", static_cast<double>(m.device_tables) / n);
    bytes("per_actor_infrastructure", (used - useful) / n);
    auto overhead = [&](const std::string& basis, double total_bytes) {
      b.rec.Add(exp, "basis=" + basis + d, 1, "overhead_pct", (total_bytes - useful) / useful * 100.0, "percent");
    };
    overhead("used", used);
    overhead("allocated", allocated);
    overhead("driver", driver);
    overhead("used_with_mapped", used + static_cast<double>(m.mapped));
    std::printf("exp6 mailbox=%u: %d actors × 16 KiB = %.0f B useful; used %.0f B (+%.1f%%), allocated %.0f B "
                "(+%.1f%%), driver delta %.0f B (+%.1f%%), mapped host %llu B; %u workers\n",
                depth, n, useful, used, (used - useful) / useful * 100, allocated, (allocated - useful) / useful * 100,
                driver, (driver - useful) / useful * 100, static_cast<unsigned long long>(m.mapped), sys->workers());
    RK_RETURN_IF_ERROR(StopCleanly(*sys, exp));
  }
  return absl::OkStatus();
}

}  // namespace rk::bench
