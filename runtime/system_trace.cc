// Copyright 2026 The RingKernel Authors.
//
// system_trace.cc: the host side of the device timeline (trace.h): the
// rings' allocation, the switch, the clocks, the drain and the file.
//
// Clocks: the GPU stamps events with %globaltimer. Each switch (a kTrace
// control record) has the service warp store the timer as it applies it;
// the host reads its own clock before writing the record and after the
// acknowledgement, and takes the midpoint as the same instant (the error is
// at most half that round trip, a few µs; of three tries the shortest round
// trip is kept). The switches at the start and the end give two pairs, and
// GPU times map to the host's clock linearly between them.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "ringkernel/status_macros.h"
#include "runtime/system_impl.h"
#include "runtime/trace_events.h"

namespace rk {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

absl::Status SystemImpl::InitTrace() {
  if (!module_->GetGlobal("rk_trace_build").ok()) return absl::OkStatus();
  const uint32_t cap = options_.trace_capacity;
  if (cap < (1u << 8) || cap > (1u << 22) || !IsPowerOfTwo(cap)) {
    return absl::InvalidArgumentError(
        absl::StrCat("trace_capacity is ", cap, "; it must be a power of two in [2^8, 2^22]"));
  }
  trace_rings_ = params_.num_workers + 1;  // and the monitor's
  const uint32_t log2 = Log2(cap);
  RK_ASSIGN_OR_RETURN(cuda::MappedBuffer buf, cuda::MappedBuffer::Create(TraceRingBytes(log2) * trace_rings_));
  trace_buf_ = std::move(buf);
  trace_host_ = static_cast<u8*>(trace_buf_->host());
  std::memset(trace_host_, 0, TraceRingBytes(log2) * trace_rings_);
  params_.trace = reinterpret_cast<u8*>(trace_buf_->device());
  params_.trace_log2 = log2;
  // The handler-time histograms: counted on the GPU, copied out by the
  // monitor (handler_times.h).
  const uint64_t hist_bytes = uint64_t{options_.max_actors} * kHandlerTimeBuckets * sizeof(uint32_t);
  RK_ASSIGN_OR_RETURN(cuda::DeviceBuffer hist, cuda::DeviceBuffer::Create(hist_bytes));
  RK_RETURN_IF_ERROR(hist.ZeroAsync(*copy_stream_));
  RK_RETURN_IF_ERROR(copy_stream_->Synchronize());
  handler_times_dev_ = std::move(hist);
  RK_ASSIGN_OR_RETURN(cuda::MappedBuffer hist_out, cuda::MappedBuffer::Create(hist_bytes));
  handler_times_buf_ = std::move(hist_out);
  handler_times_ = static_cast<const uint32_t*>(handler_times_buf_->host());
  std::memset(handler_times_buf_->host(), 0, hist_bytes);
  params_.handler_times = reinterpret_cast<u32*>(handler_times_dev_->get());
  params_.handler_times_out = reinterpret_cast<u32*>(handler_times_buf_->device());
  absl::MutexLock lock(&trace_mu_);
  trace_next_.assign(trace_rings_, 0);
  return absl::OkStatus();
}

absl::StatusOr<SystemImpl::ClockPair> SystemImpl::SwitchTrace(bool on) {
  ClockPair best{0, 0};
  int64_t best_rtt = -1;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const int64_t t0 = HostNowNs();
    RK_ASSIGN_OR_RETURN(uint64_t seq, SendControl(ControlOp::kTrace, 0, on ? 1 : 0, nullptr, 0));
    RK_RETURN_IF_ERROR(WaitFor(&control_->ack.value, seq, absl::Seconds(5), "the GPU to switch tracing"));
    const int64_t t1 = HostNowNs();
    const uint64_t gpu = LoadMapped(&control_->trace_clock.value);
    if (best_rtt < 0 || t1 - t0 < best_rtt) {
      best_rtt = t1 - t0;
      best = ClockPair{gpu, t0 + (t1 - t0) / 2};
    }
  }
  return best;
}

bool SystemImpl::WaitTraceSeen(uint64_t on, absl::Duration timeout) {
  const auto deadline = Clock::now() + absl::ToChronoNanoseconds(timeout);
  for (;;) {
    bool all = true;
    for (uint32_t r = 0; r < trace_rings_ && all; ++r) all = LoadMapped(&TraceRing(r)->on_seen) == on;
    if (all) return true;
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

absl::Status SystemImpl::StartTrace(std::string_view path) {
  absl::MutexLock session(&trace_session_mu_);
  if (trace_host_ == nullptr) {
    return absl::FailedPreconditionError(
        "StartTrace: the program records no timeline: build it with tracing (CompileOptions::trace, or "
        "`actorc build --trace`)");
  }
  if (tracing_.load()) return absl::FailedPreconditionError("StartTrace: a trace is already running");
  if (phase_.load() != KernelPhase::kRunning) {
    return absl::FailedPreconditionError("StartTrace: the system is not running");
  }
  // The file is opened now, so that a path that cannot be written fails
  // here rather than after the run.
  {
    std::ofstream probe{std::string(path), std::ios::trunc};
    if (!probe) return absl::InvalidArgumentError(absl::StrCat("StartTrace: cannot write '", std::string(path), "'"));
  }
  {
    absl::MutexLock lock(&trace_mu_);
    trace_path_ = std::string(path);
    trace_raw_.clear();
    trace_host_events_.clear();
    trace_clocks_.clear();
    // Earlier drops belong to an earlier trace.
    trace_dropped_base_.resize(trace_rings_);
    for (uint32_t r = 0; r < trace_rings_; ++r) trace_dropped_base_[r] = LoadMapped(&TraceRing(r)->dropped);
  }
  RK_ASSIGN_OR_RETURN(ClockPair start, SwitchTrace(true));
  // The workers pick the switch up within a few of their iterations; host
  // calls are recorded from when they have (a worker busy in a long handler
  // joins when it returns).
  WaitTraceSeen(1, absl::Milliseconds(200));
  {
    absl::MutexLock lock(&trace_mu_);
    trace_clocks_.push_back(start);
  }
  tracing_.store(true);
  return absl::OkStatus();
}

absl::Status SystemImpl::StopTrace() {
  absl::MutexLock session(&trace_session_mu_);
  if (!tracing_.load()) return absl::FailedPreconditionError("StopTrace: no trace is running");
  return FinishTrace(/*kernel_exited=*/false);
}

void SystemImpl::RecordHostCall(const char* call, int64_t begin_ns, uint32_t actor, uint32_t type_id, uint64_t flow,
                                bool ok) {
  internal::HostTraceEvent e;
  e.begin_ns = static_cast<uint64_t>(begin_ns);
  e.end_ns = static_cast<uint64_t>(HostNowNs());
  e.call = call;
  e.actor = actor;
  e.msg_type = type_id;
  e.flow = flow;
  e.ok = ok;
  absl::MutexLock lock(&trace_mu_);
  if (tracing_.load(std::memory_order_relaxed)) trace_host_events_.push_back(std::move(e));
}

void SystemImpl::DrainTraceLocked() {
  const uint64_t cap = uint64_t{1} << params_.trace_log2;
  for (uint32_t r = 0; r < trace_rings_; ++r) {
    TraceRingHeader* h = TraceRing(r);
    const TraceRecord* records = TraceRecords(h);
    uint64_t next = trace_next_[r];
    const uint64_t first = next;
    for (;;) {
      const TraceRecord* rec = &records[next & (cap - 1)];
      const uint32_t tag = static_cast<uint32_t>(next + 1);
      // Both halves: each is one 16-byte store from the GPU.
      if (LoadMapped(&rec->tag1) != tag || LoadMapped(&rec->tag0) != tag) break;
      RawTraceRecord raw;
      std::memcpy(&raw.r, rec, sizeof(TraceRecord));
      raw.ring = r;
      trace_raw_.push_back(raw);
      ++next;
    }
    if (next != first) {
      trace_next_[r] = next;
      __atomic_store_n(&h->consumed, next, __ATOMIC_RELEASE);
    }
  }
}

absl::Status SystemImpl::FinishTrace(bool kernel_exited) {
  std::optional<ClockPair> end;
  if (!kernel_exited) {
    absl::StatusOr<ClockPair> e = SwitchTrace(false);
    if (e.ok()) end = *e;
    WaitTraceSeen(0, absl::Milliseconds(200));
  }
  tracing_.store(false);
  // Records reserved before a worker saw the switch may still be landing.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  internal::TraceContents contents;
  std::string path;
  {
    absl::MutexLock lock(&trace_mu_);
    DrainTraceLocked();
    if (end.has_value()) trace_clocks_.push_back(*end);
    path = std::move(trace_path_);
    // GPU time to host time: linear between the first and last pairs.
    const ClockPair a = trace_clocks_.front();
    const ClockPair b = trace_clocks_.back();
    const double rate = b.gpu_ns > a.gpu_ns + 1000000
                            ? static_cast<double>(b.host_ns - a.host_ns) / static_cast<double>(b.gpu_ns - a.gpu_ns)
                            : 1.0;
    auto to_host = [&](uint64_t gpu) {
      const double d = static_cast<double>(static_cast<int64_t>(gpu - a.gpu_ns)) * rate;
      return static_cast<uint64_t>(a.host_ns + static_cast<int64_t>(d));
    };
    contents.workers = params_.num_workers;
    contents.device.reserve(trace_raw_.size());
    for (const RawTraceRecord& raw : trace_raw_) {
      const TraceRecord& t = raw.r;
      internal::DeviceTraceEvent e;
      e.time_ns = to_host(t.time_ns);
      e.kind = static_cast<internal::TraceEventKind>(t.kind_type & 0xFF);
      e.worker = raw.ring;
      e.actor = t.actor;
      e.msg_type = t.kind_type >> kTraceTypeShift;
      e.peer = t.peer;
      if (e.kind == internal::TraceEventKind::kSend && (t.kind_type & kTraceFlowAsk) == 0) {
        e.flow = internal::MailboxFlow(t.peer, t.aux);
      } else if (e.kind == internal::TraceEventKind::kHandlerBegin) {
        if (t.kind_type & kTraceFlowMailbox) e.flow = internal::MailboxFlow(t.actor, t.aux);
        if (t.kind_type & kTraceFlowAsk) e.flow = internal::AskFlow(t.aux);
      }
      contents.device.push_back(e);
    }
    contents.host = std::move(trace_host_events_);
    contents.dropped.resize(trace_rings_);
    for (uint32_t r = 0; r < trace_rings_; ++r) {
      contents.dropped[r] = LoadMapped(&TraceRing(r)->dropped) - trace_dropped_base_[r];
    }
    trace_raw_.clear();
    trace_host_events_.clear();
    trace_clocks_.clear();
  }
  internal::TraceNames names;
  names.actor = [this](uint32_t id) { return ActorName(id); };
  names.message = [this](uint32_t id) { return MessageName(id); };
  std::ofstream out(path, std::ios::trunc);
  if (!out) return absl::InternalError(absl::StrCat("StopTrace: cannot write '", path, "'"));
  RK_RETURN_IF_ERROR(internal::WriteChromeTrace(contents, names, out));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("StopTrace: writing '", path, "' failed"));
  return absl::OkStatus();
}

}  // namespace rk
