// Copyright 2026 The RingKernel Authors.
#include "bench/exp_common.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "bench/baselines.h"
#include "bench/hopper.h"
#include "jit/codegen.h"
#include "jit/nvrtc_compiler.h"
#include "ringkernel/status_macros.h"
#include "runtime/module.h"
#include "runtime/system_access.h"

namespace rk::bench {

Recorder::Recorder(const std::string& path, int trial) : out_(path, std::ios::app), trial_(trial) {
  out_.seekp(0, std::ios::end);
  if (out_.tellp() == 0) out_ << "experiment,configuration,trial,iteration,metric,value,unit,timestamp\n";
  stamp_ = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
}

void Recorder::Add(const std::string& experiment, const std::string& config, int iteration, const std::string& metric,
                   double value, const std::string& unit) {
  out_ << experiment << "," << config << "," << trial_ << "," << iteration << "," << metric << ","
       << absl::StrFormat("%.6g", value) << "," << unit << "," << stamp_ << "\n";
  summary_[experiment + " " + config + " " + metric + " (" + unit + ")"].push_back(value);
}

void Recorder::PrintSummary() const {
  std::printf("%-64s %8s %10s %10s %10s\n", "measurement", "n", "p50", "p99", "mean");
  for (const auto& [key, values] : summary_) {
    std::vector<double> v = values;
    double mean = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(v.size());
    const double p50 = Quantile(v, 0.5);
    const double p99 = Quantile(v, 0.99);
    std::printf("%-64s %8zu %10.4g %10.4g %10.4g\n", key.c_str(), v.size(), p50, p99, mean);
  }
}

SystemOptions BaseSystemOptions(const Options& o) {
  SystemOptions so;
  so.track_running = o.track_running != 0;
  so.workers = static_cast<uint32_t>(o.workers);
  so.threads_per_block = static_cast<uint32_t>(o.threads_per_block);
  so.idle_backoff = absl::Nanoseconds(o.idle_backoff_ns);
  if (o.channel_arena_mib >= 0) so.channel_arena_bytes = uint64_t{static_cast<uint32_t>(o.channel_arena_mib)} << 20;
  return so;
}

uint64_t PayloadXor(int size, uint64_t n) {
  // Word 0 is the seq; words 1 … size/8-1 are the same pad in every message,
  // so they cancel in pairs and remain once when n is odd.
  uint64_t pad = 0;
  for (int w = 1; w < size / 8; ++w) {
    uint64_t x = 0;
    for (int k = 0; k < 8; ++k) x |= uint64_t{static_cast<unsigned char>(w * 8 + k - 8)} << (8 * k);
    pad ^= x;
  }
  // 0 ^ 1 ^ … ^ m has the closed form m, 1, m + 1, 0 for m mod 4 = 0, 1, 2, 3.
  uint64_t seqs = 0;
  if (n > 0) {
    const uint64_t m = n - 1;
    const uint64_t forms[4] = {m, 1, m + 1, 0};
    seqs = forms[m % 4];
  }
  return seqs ^ ((n % 2) != 0 ? pad : 0);
}

double Quantile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

absl::StatusOr<double> TimeEchoAsk(System& sys, ActorId echo, uint64_t* seq, absl::Duration timeout) {
  const uint64_t want = ++*seq;
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<Pong> p = sys.Ask<Pong>(echo, Ping{want}, timeout);
  const auto t1 = std::chrono::steady_clock::now();
  if (!p.ok()) return p.status();
  if (p->seq != want) return absl::InternalError("the Echo answered another Ping");
  return std::chrono::duration<double, std::micro>(t1 - t0).count();
}

absl::StatusOr<Message> ReceiveType(System& sys, const std::string& type, absl::Duration timeout, int* dropped) {
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) break;
    RK_ASSIGN_OR_RETURN(std::optional<Message> m, sys.Receive(left));
    if (!m.has_value()) break;
    if (m->type == type) return *std::move(m);
    if (dropped != nullptr) ++*dropped;
  }
  std::string extra;
  if (std::vector<DeadLetter> dead = sys.TakeDeadLetters(); !dead.empty()) {
    extra = absl::StrCat("; ", dead.size(), " dead letter(s), the first a '", dead[0].type, "' to '", dead[0].to_name,
                         "': ", DeadLetterReasonName(dead[0].reason));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("no '", type, "' reached the host within ", absl::FormatDuration(timeout), extra));
}

// A measurement build of the program (-D RK_OWNER_CYCLES, rt_base.cuh)
// counts where each owner thread's cycles go; after Stop, each actor that
// took messages gets a line. Other builds have no such global: nothing.
void PrintOwnerCycles(System& sys, const std::string& what) {
  constexpr size_t kActors = 1024, kPer = 40;  // rt_base.cuh's kOwnerCyclesPerActor
  std::vector<uint64_t> c(kActors * kPer);
  if (!rk::internal::SystemAccess::ReadDeviceGlobal(sys, "rk_owner_cycles", c.data(), c.size() * sizeof(uint64_t))
           .ok()) {
    return;
  }
  for (size_t a = 0; a < kActors; ++a) {
    const uint64_t* v = &c[a * kPer];
    const uint64_t taken = v[0], direct = v[7], runs = v[18], rounds = v[19], conv_runs = v[32];
    if (taken == 0 && direct == 0 && runs == 0 && conv_runs == 0) continue;
    const std::string name = sys.NameOf(ActorId{static_cast<uint32_t>(a)}).value_or("?");
    auto per = [](uint64_t cycles, uint64_t n) { return n == 0 ? 0.0 : static_cast<double>(cycles) / n; };
    if (runs != 0) {
      std::printf(
          "owner_cycles %s actor=%zu %s: block runs %llu, %llu messages (%.1f a run); per message: take and prelude "
          "%.0f, barrier %.0f, handler %.0f, barrier %.0f, leader after %.0f, barrier %.0f; between runs %.0f a run\n",
          what.c_str(), a, name.c_str(), static_cast<unsigned long long>(runs), static_cast<unsigned long long>(rounds),
          static_cast<double>(rounds) / runs, per(v[20], rounds), per(v[21], rounds), per(v[22], rounds),
          per(v[23], rounds), per(v[24], rounds), per(v[25], rounds), per(v[26], runs));
    }
    if (conv_runs != 0) {
      // Conversation runs (kOcRuns... in rt_base.cuh).
      const uint64_t records = v[33], empty_looks = v[38];
      std::printf(
          "owner_cycles %s actor=%zu %s: conversation runs %llu, %llu records after their first (%llu found at the "
          "wait's first look); per record: dispatch and handler %.0f, from the handler's return to the next dispatch "
          "%.0f (the look that took it %.0f); empty looks %llu (%.0f cycles each)\n",
          what.c_str(), a, name.c_str(), static_cast<unsigned long long>(conv_runs),
          static_cast<unsigned long long>(records), static_cast<unsigned long long>(v[34]), per(v[35], records),
          per(v[36], records), per(v[37], records), static_cast<unsigned long long>(empty_looks),
          per(v[39], empty_looks));
    }
    if (taken == 0 && direct == 0) continue;
    const uint64_t calls = taken + direct;
    std::printf(
        "owner_cycles %s actor=%zu %s: taken %llu (take %.0f, handle %.0f, after %.0f cycles each); empty polls %llu "
        "(%.0f each); hand-overs %llu (copy %.0f, handle %.0f each; ServeDirect %.0f per message); per handled "
        "message: HandleOne before the call %.0f, the call %.0f = entry %.0f + dispatch and handler %.0f + exit %.0f; "
        "serve calls %llu; after one that took messages, the loop until the next %.0f (%llu times)\n",
        what.c_str(), a, name.c_str(), static_cast<unsigned long long>(taken), per(v[1], taken), per(v[2], taken),
        per(v[4], taken), static_cast<unsigned long long>(v[5]), per(v[6], v[5]), static_cast<unsigned long long>(direct),
        per(v[8], direct), per(v[9], direct), per(v[16], direct), per(v[15], calls), per(v[3], calls),
        per(v[12], calls), per(v[13], calls), per(v[14], calls), static_cast<unsigned long long>(v[10]),
        per(v[11], v[17]), static_cast<unsigned long long>(v[17]));
    if (direct != 0) {
      std::printf(
          "owner_cycles %s actor=%zu %s: hand-overs that ended a mailbox spin %llu: the spin's end to ServeMailbox's "
          "return %.0f, to the ServeDirect call %.0f, to its first entry's read %.0f cycles each; after a hand-over's "
          "HandleOne to the next entry or the return %.0f each\n",
          what.c_str(), a, name.c_str(), static_cast<unsigned long long>(v[27]), per(v[28], v[27]), per(v[29], v[27]),
          per(v[30], v[27]), per(v[31], direct));
    }
  }
}

absl::Status StopCleanly(System& sys, const std::string& what) {
  RK_ASSIGN_OR_RETURN(StopReport r, sys.Stop(absl::Seconds(10)));
  PrintOwnerCycles(sys, what);
  if (!r.drained || r.unhandled != 0 || !r.dead_letters.empty() || !r.failures.empty() ||
      r.dead_letters_dropped != 0 || r.failures_dropped != 0 || r.reports_lost != 0) {
    return absl::InternalError(absl::StrCat(what, ": the system did not stop cleanly: ", r.ToString()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> CompileKernels(const std::string& name, const std::string& source,
                                           const std::string& arch) {
  jit::GeneratedUnit unit;
  unit.name = name;
  unit.source = source;
  std::vector<jit::Diagnostic> diags;
  RK_ASSIGN_OR_RETURN(jit::NvrtcOutput out, jit::CompileForArch(unit, arch, false, &diags));
  for (const jit::Diagnostic& d : diags) {
    std::fprintf(stderr, "rkbench: %s (%s): %s\n", name.c_str(), arch.c_str(), d.ToString().c_str());
  }
  return std::move(out.cubin.bytes);
}

absl::StatusOr<std::unique_ptr<cuda::Module>> LoadKernels(const std::string& name, const std::string& source,
                                                          int capability) {
  RK_ASSIGN_OR_RETURN(std::string cubin, CompileKernels(name, source, absl::StrCat("sm_", capability)));
  RK_ASSIGN_OR_RETURN(cuda::Module module, cuda::Module::Create(cubin, name));
  return std::make_unique<cuda::Module>(std::move(module));
}

absl::Status CheckKernels() {
  for (const char* arch : {"sm_89", "sm_90"}) {
    RK_RETURN_IF_ERROR(CompileKernels("rk_bench_baselines.cu", BaselineKernelSource(), arch).status());
    std::printf("kernels: the baselines (exp1, hop, paths) compile for %s\n", arch);
  }
  for (const char* arch : {"sm_89", "sm_90"}) {
    RK_RETURN_IF_ERROR(CompileKernels("rk_bench_mixed.cu", MixedKernelSource(), arch).status());
    std::printf("kernels: exp5 traditional model compiles for %s\n", arch);
  }
  RK_RETURN_IF_ERROR(CompileKernels("rk_bench_hopper.cu", HopperKernelSource(), "sm_90").status());
  std::printf("kernels: exp8 compiles for sm_90\n");
  return absl::OkStatus();
}

}  // namespace rk::bench
