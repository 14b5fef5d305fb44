// Copyright 2026 The RingKernel Authors.
//
// writer_gate.h: admission of the host's writers into the rings to the GPU,
// so that Stop sees every record it must account for (internal to runtime/).
//
// A `Send` that looked at "accepting" and then wrote its record later, after
// Stop had drained the rings, halted the kernel and counted what was never
// taken, returned OK for a message that was neither handled nor reported.
// The gate closes that window: a writer counts itself in (on its ring's
// lane) *before* it looks at whether the gate is open, and counts itself out
// once its record is complete; the closer shuts the gate and then waits for
// the count to fall to zero. Both sides store and then load, sequentially
// consistently, so one of them sees the other (the store-buffering, or
// Dekker, pattern):
//
//   writer                                closer (Stop)
//   lane.writers += 1      (seq_cst)      open = false     (seq_cst)
//   if (!open) { -= 1; refuse }           wait InFlight() == 0 (seq_cst loads)
//   ... write the record ...
//   lane.writers -= 1      (release)
//
// Either the writer sees the gate closed and refuses (it wrote nothing), or
// the closer sees the writer counted and waits for it; the closer's load of
// zero synchronises with every writer's release, so every admitted record is
// whole in the ring before the closer reads the ring's tail.
//
//   WriterGate gate;
//   gate.Init(workers);
//   gate.Open();
//   if (gate.TryEnter(w)) { Write(...); gate.Leave(w); } else { /* refused */ }
//   gate.Close(); while (gate.InFlight() != 0) Wait();   // Stop
//
// Thread-safety: every method but Init may be called from any thread at once.
// Header-only, on the standard library alone: the ThreadSanitizer test
// (tests/writer_gate_tsan_test.cc) drives it as the runtime does.
#ifndef RINGKERNEL_RUNTIME_WRITER_GATE_H_
#define RINGKERNEL_RUNTIME_WRITER_GATE_H_

#include <atomic>
#include <cstdint>
#include <memory>

namespace rk {

class WriterGate {
 public:
  WriterGate() = default;
  WriterGate(const WriterGate&) = delete;
  WriterGate& operator=(const WriterGate&) = delete;

  // One counter per ring (a lane), each on its own line, so that writers to
  // different rings do not share one. Before Open, and before any writer.
  void Init(uint32_t lanes) {
    lanes_ = std::make_unique<Lane[]>(lanes);
    num_lanes_ = lanes;
  }
  void Open() { open_.store(true, std::memory_order_seq_cst); }
  // Admits no writer from here on; those already admitted finish (InFlight).
  void Close() { open_.store(false, std::memory_order_seq_cst); }
  // A hint for a quick refusal; TryEnter decides.
  bool open() const { return open_.load(std::memory_order_acquire); }

  // Counts a writer in on `lane`, then looks at the gate. True: admitted, and
  // the writer must call Leave(lane) once its record is complete (or it
  // wrote nothing). False: the gate is closed and the writer is not counted.
  bool TryEnter(uint32_t lane) {
    std::atomic<uint32_t>& w = lanes_[lane].writers;
    w.fetch_add(1, std::memory_order_seq_cst);
    if (open_.load(std::memory_order_seq_cst)) return true;
    w.fetch_sub(1, std::memory_order_release);
    return false;
  }
  void Leave(uint32_t lane) { lanes_[lane].writers.fetch_sub(1, std::memory_order_release); }

  // Writers admitted and not yet left. After Close it only falls, and once
  // it reads 0 every admitted writer's stores happen before the caller's
  // next reads.
  uint64_t InFlight() const {
    uint64_t n = 0;
    for (uint32_t i = 0; i < num_lanes_; ++i) n += lanes_[i].writers.load(std::memory_order_seq_cst);
    return n;
  }

 private:
  struct alignas(64) Lane {
    std::atomic<uint32_t> writers{0};
  };
  std::atomic<bool> open_{false};
  std::unique_ptr<Lane[]> lanes_;
  uint32_t num_lanes_ = 0;
};

}  // namespace rk

#endif  // RINGKERNEL_RUNTIME_WRITER_GATE_H_
