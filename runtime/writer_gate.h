// Copyright 2026 The RingKernel Authors.
//
// writer_gate.h: admission of the host's writers into the rings to the GPU,
// so that Stop sees every record it must account for (internal to runtime/).
//
// A `Send` that looked at "accepting" and then wrote its record later, after
// Stop had drained the rings, halted the kernel and counted what was never
// taken, returned OK for a message that was neither handled nor reported.
// The gate closes that window: a writer marks itself busy *before* it looks
// at whether the gate is open, and clears the mark once its record is
// complete; the closer shuts the gate and then waits until no writer is
// busy. Both sides store and then load, sequentially consistently, so one of
// them sees the other (the store-buffering, or Dekker, pattern):
//
//   writer                                closer (Stop)
//   my_slot.busy = 1       (seq_cst)      open = false     (seq_cst)
//   if (!open) { busy = 0; refuse }       wait InFlight() == 0 (seq_cst loads)
//   ... write the record ...
//   my_slot.busy = 0       (release)
//
// Either the writer sees the gate closed and refuses (it wrote nothing), or
// the closer sees the writer busy and waits for it; the closer's load of
// zero synchronises with the writer's release, so every admitted record is
// whole in the ring before the closer reads the ring's tail.
//
// Each writing thread has a slot of its own (claimed on its first write
// through the gate, kept for the gate's life), so clearing the mark is a
// plain store: a shared counter needs a read-modify-write after the record's
// stores, which waits for all of them to leave the CPU's store buffer (the
// shared counters cost 35 ns more per Send than no gate). Threads beyond
// kSlots share a counter per lane, with read-modify-writes, and are as
// correct.
//
// The fence goes to the closer where the kernel allows it (Linux's
// membarrier, private expedited: the kernel makes every running thread of
// the process execute a full barrier before the call returns). The writer
// then marks itself and looks at the gate with plain accesses — no locked
// instruction, which on x86 would wait for the previous record's stores to
// leave the store buffer — and the closer pays a system call once per Stop:
//
//   writer                                closer
//   my_slot.busy = 1       (relaxed)      open = false     (seq_cst)
//   compiler barrier                      membarrier()
//   if (!open) ...         (relaxed)      wait InFlight() == 0
//
// Either the writer's barrier (forced by the closer's call) came after its
// mark, and the closer sees the mark; or it came before the mark, and the
// writer's look comes after the barrier, which follows the closer's store:
// it sees the gate closed. Where membarrier is missing (an old kernel, a
// sandbox that filters it) the writer stores sequentially consistently, as
// above.
//
//   WriterGate gate;
//   gate.Init(workers);
//   gate.Open();
//   if (gate.TryEnter(w)) { Write(...); gate.Leave(w); } else { /* refused */ }
#ifndef RINGKERNEL_RUNTIME_WRITER_GATE_H_
#define RINGKERNEL_RUNTIME_WRITER_GATE_H_

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace rk {

class WriterGate {
 public:
  WriterGate() : id_(NextId()), slots_(std::make_unique<Slot[]>(kSlots)) {}
  WriterGate(const WriterGate&) = delete;
  WriterGate& operator=(const WriterGate&) = delete;

  // Threads that get a slot of their own; later ones share the lanes.
  static constexpr uint32_t kSlots = 256;

  // One shared counter per ring (a lane), each on its own line, for writers
  // without a slot. Before Open, and before any writer.
  // `asymmetric`: use the closer-side barrier where the kernel offers it
  // (false: always the writer-side fence; the tests drive both).
  void Init(uint32_t lanes, bool asymmetric = true) {
    lanes_ = std::make_unique<Lane[]>(lanes);
    num_lanes_ = lanes;
    asymmetric_ = asymmetric && ProcessBarrierAvailable();
  }
  void Open() { open_.store(true, std::memory_order_seq_cst); }
  // Admits no writer from here on; those already admitted finish (InFlight).
  void Close() {
    open_.store(false, std::memory_order_seq_cst);
    if (asymmetric_) ProcessBarrier();
  }
  // Whether writers enter without a fence (the closer's system call fences
  // for them).
  bool asymmetric() const { return asymmetric_; }
  // A hint for a quick refusal; TryEnter decides.
  bool open() const { return open_.load(std::memory_order_acquire); }

  // A writing thread's own slot (nullptr: a thread beyond kSlots, which
  // writes through the lanes).
  struct alignas(64) Slot {
    std::atomic<uint32_t> busy{0};     // written by its owner thread only
    std::atomic<uint32_t> claimed{0};  // 1 once a thread owns it
  };
  // The calling thread's slot, claimed on its first call: a writer that
  // enters and leaves on every record looks it up once (CallerSlot), then
  // passes it to TryEnter and Leave.
  Slot* CallerSlot() { return MySlot(); }
  // Asks for the lines a writer's TryEnter and Leave touch (its slot, the
  // gate's state) ahead of them. The slot is found as CallerSlot finds it
  // (a thread's first look claims one); beyond that, only prefetches.
  void PrefetchCaller() {
    Slot* s = MySlot();
    if (s != nullptr) __builtin_prefetch(s, 1);
    __builtin_prefetch(&open_);
  }
  // `slot`'s tag: its index + 1, or 0 for none.
  uint32_t TagOf(const Slot* slot) const {
    return slot == nullptr ? 0u : static_cast<uint32_t>(slot - slots_.get()) + 1;
  }

  // Marks the calling thread busy (on its slot, or on `lane`), then looks at
  // the gate. True: admitted, and the writer must call Leave(lane) from the
  // same thread once its record is complete (or it wrote nothing). False:
  // the gate is closed and nothing stays marked.
  bool TryEnter(uint32_t lane) { return TryEnter(MySlot(), lane); }
  void Leave(uint32_t lane) { Leave(MySlot(), lane); }
  // The same for the caller's own slot `s` (CallerSlot; nullptr: the lane).
  bool TryEnter(Slot* s, uint32_t lane) {
    if (s != nullptr) {
      const uint32_t busy = s->busy.load(std::memory_order_relaxed);
      if (asymmetric_) {
        // The closer's barrier orders these two for us; the compiler must
        // not.
        s->busy.store(busy + 1, std::memory_order_relaxed);
        std::atomic_signal_fence(std::memory_order_seq_cst);
        if (open_.load(std::memory_order_relaxed)) return true;
      } else {
        s->busy.store(busy + 1, std::memory_order_seq_cst);
        if (open_.load(std::memory_order_seq_cst)) return true;
      }
      s->busy.store(busy, std::memory_order_release);
      return false;
    }
    std::atomic<uint32_t>& w = lanes_[lane].writers;
    w.fetch_add(1, std::memory_order_seq_cst);
    if (open_.load(std::memory_order_seq_cst)) return true;
    w.fetch_sub(1, std::memory_order_release);
    return false;
  }
  void Leave(Slot* s, uint32_t lane) {
    if (s != nullptr) {
      // Only this thread writes its slot: a plain (release) store.
      s->busy.store(s->busy.load(std::memory_order_relaxed) - 1, std::memory_order_release);
      return;
    }
    lanes_[lane].writers.fetch_sub(1, std::memory_order_release);
  }

  // The calling thread's tag in this gate: its slot's index + 1, or 0 for a
  // thread beyond kSlots (which writes through the lanes).
  uint32_t SlotTag() { return TagOf(MySlot()); }
  // The process-wide barrier of asymmetric mode (nothing otherwise): every
  // running thread of the process executes a full barrier before it returns.
  void Barrier() {
    if (asymmetric_) ProcessBarrier();
  }

  // Writers admitted and not yet left. After Close it only falls, and once
  // it reads 0 every admitted writer's stores happen before the caller's
  // next reads.
  uint64_t InFlight() const {
    uint64_t n = 0;
    for (uint32_t i = 0; i < kSlots; ++i) n += slots_[i].busy.load(std::memory_order_seq_cst);
    for (uint32_t i = 0; i < num_lanes_; ++i) n += lanes_[i].writers.load(std::memory_order_seq_cst);
    return n;
  }

 private:
  struct alignas(64) Lane {
    std::atomic<uint32_t> writers{0};
  };

  // Registers the process for expedited private barriers (once; later
  // calls only ask) and says whether they work.
  static bool ProcessBarrierAvailable() {
#if defined(__linux__) && defined(__NR_membarrier)
    static const bool available = [] {
      const long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
      if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
      return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    }();
    return available;
#else
    return false;
#endif
  }
  // A full barrier on every running thread of this process.
  static void ProcessBarrier() {
#if defined(__linux__) && defined(__NR_membarrier)
    // Registered in Init; a failure here cannot be left unordered, so it is
    // fatal rather than silent.
    if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) std::abort();
#endif
  }

  static uint64_t NextId() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
  }

  // The calling thread's slot in this gate, claimed on first use; nullptr
  // once every slot is taken. Each thread remembers its slots in a few
  // gates, by gate id (ids are never reused, so a remembered slot of a gate
  // that is gone never matches).
  Slot* MySlot() {
    struct Entry {
      uint64_t gate = 0;
      Slot* slot = nullptr;
    };
    constexpr uint32_t kRemembered = 8;
    thread_local Entry remembered[kRemembered];
    thread_local uint32_t next = 0;
    for (const Entry& e : remembered) {
      if (e.gate == id_) return e.slot;
    }
    Slot* mine = nullptr;
    for (uint32_t i = 0; i < kSlots && mine == nullptr; ++i) {
      uint32_t free = 0;
      if (slots_[i].claimed.compare_exchange_strong(free, 1, std::memory_order_relaxed)) mine = &slots_[i];
    }
    // Remembered either way: a thread without a slot keeps to the lanes.
    remembered[next++ % kRemembered] = Entry{id_, mine};
    return mine;
  }

  const uint64_t id_;
  bool asymmetric_ = false;
  std::atomic<bool> open_{false};
  std::unique_ptr<Slot[]> slots_;
  std::unique_ptr<Lane[]> lanes_;
  uint32_t num_lanes_ = 0;
};

}  // namespace rk

#endif  // RINGKERNEL_RUNTIME_WRITER_GATE_H_
