// Copyright 2026 The RingKernel Authors.
//
// Test goals (the driver-API layer on a real GPU):
//   * the device's properties are sane and agree with each other;
//   * a PTX module loads; a kernel launched through the Driver API writes
//     mapped (zero-copy) host memory and device memory that the host then
//     sees; globals and functions are found, and a missing one is NotFound;
//   * PTX the JIT rejects yields FailedPrecondition carrying the JIT's log;
//   * cooperative launch sizing: the largest grid is occupancy × SMs, the
//     dynamic shared memory limit is raised past 48 KiB, every block of the
//     largest grid is co-resident (a grid-wide barrier completes), and one
//     block more is ResourceExhausted with the explanation;
//   * events measure a positive time;
//   * PrimaryContext::Reset destroys the context's objects, whose wrappers
//     then refuse to be used, and the context works again afterwards;
//   * last, because it poisons the context for the rest of the process: a
//     kernel that executes `trap` makes the stream report Aborted, naming
//     the CUDA error, and later calls fail the same way.
// Every test skips, saying why, where there is no driver or no device. The
// tests run in the order written (do not shuffle them).
//
// The kernels are PTX written by hand (ISA 7.0, sm_75 and newer), so that
// this test needs neither NVRTC nor nvcc; the driver compiles them for the
// GPU at load time.
#include <cuda.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cooperative_launch.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_status.h"
#include "runtime/device.h"
#include "runtime/device_buffer.h"
#include "runtime/event.h"
#include "runtime/mapped_buffer.h"
#include "runtime/module.h"
#include "runtime/primary_context.h"
#include "runtime/stream.h"
#include "tests/test_support.h"

namespace rk::cuda {
namespace {

using ::rk::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using Code = absl::StatusCode;

// rk_test_write(out, n, seed): out[i] = (i * 0x9E3779B1) ^ seed for i < n.
// rk_test_barrier(counter, out, blocks, limit): thread 0 of each block
//   stores its block index in the last word of the dynamic shared memory,
//   arrives at a grid-wide counter and waits (at most `limit` polls) until
//   all `blocks` have arrived; out[block] = 1 if they did, 2 if it gave up,
//   3 if the shared memory did not read back.
// rk_test_trap(): executes `trap`.
constexpr char kTestPtx[] = R"(
.version 7.0
.target sm_75
.address_size 64

.visible .global .align 4 .u32 rk_test_global = 1234;
.extern .shared .align 16 .b8 rk_test_dsmem[];

.visible .entry rk_test_write(.param .u64 out, .param .u32 n, .param .u32 seed)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  ld.param.u32 %r2, [seed];
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %tid.x;
  mad.lo.u32 %r6, %r3, %r4, %r5;
  setp.ge.u32 %p1, %r6, %r1;
  @%p1 bra WRITE_DONE;
  mul.lo.u32 %r7, %r6, -1640531535;
  xor.b32 %r7, %r7, %r2;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r6, 4;
  add.u64 %rd2, %rd2, %rd3;
  st.global.u32 [%rd2], %r7;
WRITE_DONE:
  ret;
}

.visible .entry rk_test_barrier(.param .u64 counter, .param .u64 out, .param .u32 blocks, .param .u32 limit)
{
  .reg .pred %p<5>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<6>;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra BARRIER_DONE;
  ld.param.u64 %rd1, [counter];
  ld.param.u64 %rd2, [out];
  ld.param.u32 %r2, [blocks];
  ld.param.u32 %r3, [limit];
  mov.u32 %r4, %ctaid.x;
  mov.u32 %r5, %dynamic_smem_size;
  mov.u32 %r6, rk_test_dsmem;
  add.u32 %r6, %r6, %r5;
  sub.u32 %r6, %r6, 4;
  st.volatile.shared.u32 [%r6], %r4;
  ld.volatile.shared.u32 %r7, [%r6];
  cvta.to.global.u64 %rd3, %rd1;
  atom.release.gpu.global.add.u32 %r8, [%rd3], 1;
  mov.u32 %r9, 0;
SPIN:
  ld.acquire.gpu.global.u32 %r10, [%rd3];
  setp.ge.u32 %p2, %r10, %r2;
  @%p2 bra ARRIVED;
  add.u32 %r9, %r9, 1;
  setp.lt.u32 %p3, %r9, %r3;
  @%p3 bra SPIN;
  mov.u32 %r11, 2;
  bra.uni REPORT;
ARRIVED:
  mov.u32 %r11, 1;
  setp.ne.u32 %p4, %r7, %r4;
  @%p4 mov.u32 %r11, 3;
REPORT:
  cvta.to.global.u64 %rd4, %rd2;
  mul.wide.u32 %rd5, %r4, 4;
  add.u64 %rd4, %rd4, %rd5;
  st.volatile.global.u32 [%rd4], %r11;
BARRIER_DONE:
  ret;
}

.visible .entry rk_test_trap()
{
  trap;
  ret;
}
)";

// Rejected by the JIT: an instruction that does not exist.
constexpr char kBadPtx[] = R"(
.version 7.0
.target sm_75
.address_size 64

.visible .entry rk_test_bad()
{
  bogus_op.u32 %r1, 7;
  ret;
}
)";

uint32_t Pattern(uint32_t i, uint32_t seed) { return (i * 0x9E3779B1u) ^ seed; }

#define RK_ASSERT_OK_AND_ASSIGN(lhs, expr)                                                           \
  auto RK_TEST_CONCAT_(rk_or_, __LINE__) = (expr);                                                   \
  ASSERT_TRUE(RK_TEST_CONCAT_(rk_or_, __LINE__).ok()) << RK_TEST_CONCAT_(rk_or_, __LINE__).status(); \
  lhs = std::move(RK_TEST_CONCAT_(rk_or_, __LINE__)).value()
#define RK_TEST_CONCAT_INNER_(a, b) a##b
#define RK_TEST_CONCAT_(a, b) RK_TEST_CONCAT_INNER_(a, b)

class DriverGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<const DriverApi*> api = Driver();
    if (!api.ok()) GTEST_SKIP() << "needs a CUDA driver and device: " << api.status().message();
    cu_ = *api;
    absl::StatusOr<Device> device = Device::Create(0);
    ASSERT_TRUE(device.ok()) << device.status();
    device_.emplace(*std::move(device));
    absl::StatusOr<PrimaryContext> context = PrimaryContext::Create(*device_);
    ASSERT_TRUE(context.ok()) << context.status();
    context_.emplace(*std::move(context));
    ASSERT_TRUE(context_->MakeCurrent().ok());
  }

  const DriverApi* cu_ = nullptr;
  std::optional<Device> device_;
  std::optional<PrimaryContext> context_;  // destroyed before device_
};

TEST_F(DriverGpuTest, DevicePropertiesAreSane) {
  const DeviceProperties& p = device_->properties();
  EXPECT_EQ(p.ordinal, 0);
  EXPECT_FALSE(p.name.empty());
  EXPECT_GE(p.compute_capability(), 75);
  EXPECT_EQ(p.Arch(), absl::StrCat("sm_", p.compute_major, p.compute_minor));
  EXPECT_GT(p.sm_count, 0);
  EXPECT_GT(p.total_memory_bytes, uint64_t{1} << 30);
  EXPECT_GT(p.clock_khz, 0);
  EXPECT_GT(p.memory_clock_khz, 0);
  EXPECT_GT(p.memory_bus_width_bits, 0);
  EXPECT_GT(p.l2_cache_bytes, 0);
  EXPECT_EQ(p.warp_size, 32);
  EXPECT_GE(p.max_threads_per_block, 1024);
  EXPECT_GE(p.max_threads_per_sm, p.max_threads_per_block);
  EXPECT_GT(p.max_blocks_per_sm, 0);
  EXPECT_GE(p.max_shared_per_block_optin, p.max_shared_per_block);
  EXPECT_GE(p.max_shared_per_sm, p.max_shared_per_block_optin);
  EXPECT_TRUE(p.cooperative_launch);
  EXPECT_TRUE(p.can_map_host_memory);
  EXPECT_TRUE(p.unified_addressing);
  EXPECT_TRUE(std::regex_match(p.uuid, std::regex("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")))
      << p.uuid;
  EXPECT_TRUE(std::regex_match(p.PciBusId(), std::regex("[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.0"))) << p.PciBusId();

  absl::StatusOr<int> count = Device::Count();
  ASSERT_TRUE(count.ok());
  EXPECT_THAT(Device::Create(*count).status(),
              StatusIs(Code::kInvalidArgument, HasSubstr(absl::StrCat("no CUDA device ", *count, ": "))));
  absl::StatusOr<int> sms = device_->Attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  ASSERT_TRUE(sms.ok());
  EXPECT_EQ(*sms, p.sm_count);

  absl::StatusOr<PrimaryContext::MemoryInfo> memory = context_->GetMemoryInfo();
  ASSERT_TRUE(memory.ok()) << memory.status();
  EXPECT_GT(memory->free_bytes, 0u);
  EXPECT_LE(memory->free_bytes, memory->total_bytes);
  EXPECT_LE(memory->total_bytes, p.total_memory_bytes);
}

TEST_F(DriverGpuTest, KernelWritesMappedAndDeviceMemory) {
  RK_ASSERT_OK_AND_ASSIGN(Module module, Module::Create(kTestPtx, "test kernels"));
  RK_ASSERT_OK_AND_ASSIGN(CUfunction write, module.GetFunction("rk_test_write"));
  EXPECT_THAT(module.GetFunction("rk_no_such_kernel").status(),
              StatusIs(Code::kNotFound, HasSubstr("cuModuleGetFunction(\"rk_no_such_kernel\" in module test kernels) "
                                                  "failed: CUDA_ERROR_NOT_FOUND (500)")));
  RK_ASSERT_OK_AND_ASSIGN(Module::Global global, module.GetGlobal("rk_test_global"));
  EXPECT_EQ(global.bytes, 4u);
  uint32_t global_value = 0;
  ASSERT_EQ(cu_->cuMemcpyDtoH(&global_value, global.address, 4), CUDA_SUCCESS);
  EXPECT_EQ(global_value, 1234u);
  EXPECT_EQ(module.GetGlobal("rk_no_such_global").status().code(), Code::kNotFound);

  constexpr uint32_t kCount = 100000;  // not a multiple of the block size
  RK_ASSERT_OK_AND_ASSIGN(MappedBuffer mapped, MappedBuffer::Create(kCount * 4));
  for (uint32_t i = 0; i < kCount; ++i) ASSERT_EQ(mapped.host_as<uint32_t>()[i], 0u) << "not zeroed at " << i;
  RK_ASSERT_OK_AND_ASSIGN(DeviceBuffer device, DeviceBuffer::Create(kCount * 4, {.zero = true}));
  RK_ASSERT_OK_AND_ASSIGN(Stream stream, Stream::Create());

  CUdeviceptr out = mapped.device();
  uint32_t n = kCount;
  uint32_t seed = 0x5EED1234u;
  void* params[] = {&out, &n, &seed};
  const unsigned int blocks = (kCount + 255) / 256;
  ASSERT_EQ(cu_->cuLaunchKernel(write, blocks, 1, 1, 256, 1, 1, 0, stream.get(), params, nullptr), CUDA_SUCCESS);
  CUdeviceptr out2 = device.get();
  uint32_t seed2 = 77;
  void* params2[] = {&out2, &n, &seed2};
  ASSERT_EQ(cu_->cuLaunchKernel(write, blocks, 1, 1, 256, 1, 1, 0, stream.get(), params2, nullptr), CUDA_SUCCESS);
  ASSERT_TRUE(stream.Synchronize().ok());
  absl::StatusOr<bool> done = stream.Query();
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(*done);

  const uint32_t* host = mapped.host_as<uint32_t>();
  for (uint32_t i = 0; i < kCount; ++i) ASSERT_EQ(host[i], Pattern(i, seed)) << "mapped word " << i;
  std::vector<uint32_t> copy(kCount);
  ASSERT_TRUE(device.Download(copy.data(), kCount * 4).ok());
  for (uint32_t i = 0; i < kCount; ++i) ASSERT_EQ(copy[i], Pattern(i, seed2)) << "device word " << i;

  // Round trips through the buffer's own copies, and their range checks.
  RK_ASSERT_OK_AND_ASSIGN(DeviceBuffer other, DeviceBuffer::Create(kCount * 4));
  ASSERT_TRUE(other.CopyFrom(device, 400, /*dst_offset=*/0, /*src_offset=*/400).ok());
  std::vector<uint32_t> back(100);
  ASSERT_TRUE(other.Download(back.data(), 400).ok());
  for (uint32_t i = 0; i < 100; ++i) EXPECT_EQ(back[i], Pattern(100 + i, seed2));
  const uint32_t word = 0xABCD0123u;
  ASSERT_TRUE(other.Upload(&word, 4, 8).ok());
  uint32_t read = 0;
  ASSERT_TRUE(other.Download(&read, 4, 8).ok());
  EXPECT_EQ(read, word);
  EXPECT_THAT(
      other.Upload(&word, 4, kCount * 4 - 2),
      StatusIs(Code::kInvalidArgument, absl::StrCat("upload of 4 bytes at offset ", kCount * 4 - 2,
                                                    " does not fit in a device buffer of ", kCount * 4, " bytes")));
  ASSERT_TRUE(other.ZeroAsync(stream).ok());
  ASSERT_TRUE(other.DownloadAsync(stream, &read, 4, 8).ok());
  ASSERT_TRUE(stream.Synchronize().ok());
  EXPECT_EQ(read, 0u);
}

TEST_F(DriverGpuTest, InvalidPtxCarriesTheJitLog) {
  absl::StatusOr<Module> module = Module::Create(kBadPtx, "bad kernels");
  EXPECT_THAT(module.status(),
              StatusIs(Code::kFailedPrecondition, AllOf(HasSubstr("cuModuleLoadDataEx(bad kernels: PTX image of "),
                                                        HasSubstr("failed: CUDA_ERROR_INVALID_PTX (218)"),
                                                        HasSubstr("; JIT error log:\n"), HasSubstr("bogus_op"))));
}

TEST_F(DriverGpuTest, CooperativeLaunchSizing) {
  RK_ASSERT_OK_AND_ASSIGN(Module module, Module::Create(kTestPtx, "test kernels"));
  RK_ASSERT_OK_AND_ASSIGN(CUfunction barrier, module.GetFunction("rk_test_barrier"));
  const DeviceProperties& p = device_->properties();

  // 64 KiB of dynamic shared memory: over the 48 KiB default, so the limit
  // must be raised for the occupancy query and the launch to accept it.
  const CooperativeShape shape{.threads_per_block = 128, .dynamic_shared_bytes = 64 * 1024};
  RK_ASSERT_OK_AND_ASSIGN(CooperativeCapacity capacity, CooperativeLaunch::MaxGrid(*device_, barrier, shape));
  EXPECT_GE(capacity.blocks_per_sm, 1);
  EXPECT_EQ(capacity.sm_count, p.sm_count);
  EXPECT_EQ(capacity.max_blocks, capacity.blocks_per_sm * p.sm_count);
  // Shared memory bounds the blocks per SM.
  EXPECT_LE(capacity.blocks_per_sm * (64 * 1024 + p.reserved_shared_per_block), p.max_shared_per_sm);
  int raised = 0;
  ASSERT_EQ(cu_->cuFuncGetAttribute(&raised, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, barrier), CUDA_SUCCESS);
  EXPECT_GE(raised, 64 * 1024);

  // One block too many: refused up front, with the numbers.
  EXPECT_THAT(CooperativeLaunch::Create(*device_, barrier, shape, capacity.max_blocks + 1).status(),
              StatusIs(Code::kResourceExhausted,
                       AllOf(HasSubstr(absl::StrCat("a cooperative launch of ", capacity.max_blocks + 1,
                                                    " blocks of 128 threads and 65536 B of dynamic shared memory "
                                                    "does not fit")),
                             HasSubstr(absl::StrCat("at most ", capacity.max_blocks,
                                                    " such blocks can be resident at once (", capacity.blocks_per_sm)),
                             HasSubstr(absl::StrCat(" per SM × ", p.sm_count, " SMs")))));
  EXPECT_THAT(
      CooperativeLaunch::MaxGrid(
          *device_, barrier,
          {.threads_per_block = 128, .dynamic_shared_bytes = static_cast<size_t>(p.max_shared_per_block_optin) + 1})
          .status(),
      StatusIs(Code::kResourceExhausted, HasSubstr("a block cannot have")));
  EXPECT_THAT(CooperativeLaunch::MaxGrid(*device_, barrier, {.threads_per_block = 4096}).status(),
              StatusIs(Code::kInvalidArgument, HasSubstr("cannot launch blocks of 4096 threads")));

  // The largest grid runs, and all its blocks are resident together: every
  // block passes a grid-wide barrier.
  RK_ASSERT_OK_AND_ASSIGN(CooperativeLaunch launch, CooperativeLaunch::Create(*device_, barrier, shape));
  ASSERT_EQ(launch.blocks(), capacity.max_blocks);
  RK_ASSERT_OK_AND_ASSIGN(DeviceBuffer counter, DeviceBuffer::Create(4, {.zero = true}));
  RK_ASSERT_OK_AND_ASSIGN(MappedBuffer out, MappedBuffer::Create(static_cast<size_t>(launch.blocks()) * 4));
  RK_ASSERT_OK_AND_ASSIGN(Stream stream, Stream::Create());
  CUdeviceptr counter_ptr = counter.get();
  CUdeviceptr out_ptr = out.device();
  uint32_t blocks = static_cast<uint32_t>(launch.blocks());
  uint32_t limit = 1u << 24;
  void* params[] = {&counter_ptr, &out_ptr, &blocks, &limit};
  ASSERT_TRUE(launch.Launch(stream, params).ok());
  ASSERT_TRUE(stream.Synchronize().ok());
  const uint32_t* result = out.host_as<uint32_t>();
  for (uint32_t b = 0; b < blocks; ++b) ASSERT_EQ(result[b], 1u) << "block " << b << " (2: gave up waiting)";
}

TEST_F(DriverGpuTest, EventsMeasureTime) {
  RK_ASSERT_OK_AND_ASSIGN(Stream stream, Stream::Create());
  RK_ASSERT_OK_AND_ASSIGN(Event start, Event::Create());
  RK_ASSERT_OK_AND_ASSIGN(Event stop, Event::Create({.blocking_sync = true}));
  RK_ASSERT_OK_AND_ASSIGN(Event untimed, Event::Create({.timing = false}));
  RK_ASSERT_OK_AND_ASSIGN(DeviceBuffer big, DeviceBuffer::Create(size_t{256} << 20));
  ASSERT_TRUE(start.Record(stream).ok());
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(big.ZeroAsync(stream).ok());
  ASSERT_TRUE(stop.Record(stream).ok());
  ASSERT_TRUE(untimed.Record(stream).ok());
  ASSERT_TRUE(stop.Synchronize().ok());
  absl::StatusOr<bool> done = stop.Query();
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(*done);
  absl::StatusOr<float> ms = Event::ElapsedMs(start, stop);
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_GT(*ms, 0.0f);
  EXPECT_LT(*ms, 10000.0f);
  EXPECT_THAT(Event::ElapsedMs(start, untimed).status(),
              StatusIs(Code::kFailedPrecondition, HasSubstr("needs two events created with timing")));
}

TEST_F(DriverGpuTest, ResetDestroysTheContextsObjects) {
  RK_ASSERT_OK_AND_ASSIGN(Stream stream, Stream::Create());
  RK_ASSERT_OK_AND_ASSIGN(Event event, Event::Create());
  RK_ASSERT_OK_AND_ASSIGN(DeviceBuffer buffer, DeviceBuffer::Create(4096));
  RK_ASSERT_OK_AND_ASSIGN(Module module, Module::Create(kTestPtx, "test kernels"));
  RK_ASSERT_OK_AND_ASSIGN(MappedBuffer mapped, MappedBuffer::Create(4096));

  ASSERT_TRUE(context_->Reset().ok());

  EXPECT_THAT(stream.Query().status(),
              StatusIs(Code::kFailedPrecondition,
                       "the stream no longer exists: its CUDA context was reset (PrimaryContext::Reset) after it was "
                       "made"));
  EXPECT_EQ(event.Record(stream).code(), Code::kFailedPrecondition);
  EXPECT_EQ(buffer.Zero().code(), Code::kFailedPrecondition);
  EXPECT_EQ(module.GetFunction("rk_test_write").status().code(), Code::kFailedPrecondition);

  // The context works again: new objects, a kernel, its result.
  RK_ASSERT_OK_AND_ASSIGN(Module fresh, Module::Create(kTestPtx, "test kernels"));
  RK_ASSERT_OK_AND_ASSIGN(CUfunction write, fresh.GetFunction("rk_test_write"));
  RK_ASSERT_OK_AND_ASSIGN(MappedBuffer out, MappedBuffer::Create(64 * 4));
  RK_ASSERT_OK_AND_ASSIGN(Stream fresh_stream, Stream::Create());
  CUdeviceptr out_ptr = out.device();
  uint32_t n = 64;
  uint32_t seed = 9;
  void* params[] = {&out_ptr, &n, &seed};
  ASSERT_EQ(cu_->cuLaunchKernel(write, 1, 1, 1, 64, 1, 1, 0, fresh_stream.get(), params, nullptr), CUDA_SUCCESS);
  ASSERT_TRUE(fresh_stream.Synchronize().ok());
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out.host_as<uint32_t>()[i], Pattern(i, seed));
  // The stale wrappers are destroyed here without touching the new objects.
}

// Keep this test last: a trap is a sticky error, so the context (and CUDA in
// this process) is unusable afterwards.
TEST_F(DriverGpuTest, ZzTrapIsAbortedAndPoisonsTheContext) {
  RK_ASSERT_OK_AND_ASSIGN(Module module, Module::Create(kTestPtx, "test kernels"));
  RK_ASSERT_OK_AND_ASSIGN(CUfunction trap, module.GetFunction("rk_test_trap"));
  RK_ASSERT_OK_AND_ASSIGN(Stream stream, Stream::Create());
  ASSERT_EQ(cu_->cuLaunchKernel(trap, 1, 1, 1, 32, 1, 1, 0, stream.get(), nullptr, nullptr), CUDA_SUCCESS);
  absl::Status synced = stream.Synchronize();
  // A trap surfaces as CUDA_ERROR_LAUNCH_FAILED (seen on sm_90, driver 580).
  EXPECT_THAT(synced, StatusIs(Code::kAborted,
                               AllOf(HasSubstr("cuStreamSynchronize() failed: CUDA_ERROR_LAUNCH_FAILED (719): "),
                                     HasSubstr("This error is sticky"))));
  // Polling reports the same fault.
  EXPECT_EQ(stream.Query().status().code(), Code::kAborted);
  // And later work in the context fails too.
  EXPECT_EQ(context_->Synchronize().code(), Code::kAborted);
}

}  // namespace
}  // namespace rk::cuda
