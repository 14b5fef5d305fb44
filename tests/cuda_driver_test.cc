// Copyright 2026 The RingKernel Authors.
//
// The driver loader without a GPU: a library that does not exist, a library
// that is not a CUDA driver, and a fake driver (tests/data/fake_libcuda.c,
// compiled by the test) that is too old, lacks an entry point, has no
// device, or loads fine. Every wrapper's Create must return the loader's
// error cleanly.
//
// Driver() caches its result for the life of the process, so each case runs
// in a forked child whose environment names the library before anything
// touches the driver; the child sends its statuses back through a pipe and
// the parent checks them. The parent never loads the driver itself.
#include "runtime/cuda_driver.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cooperative_launch.h"
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
using ::testing::SizeIs;
using Code = absl::StatusCode;

using Env = std::vector<std::pair<std::string, std::string>>;

// What a child reports: statuses, and values (such as the driver version)
// as OK items with a text.
struct Item {
  Code code = Code::kOk;
  std::string text;
  absl::Status status() const { return absl::Status(code, text); }
};
using Report = std::vector<Item>;

Item Of(const absl::Status& status) { return {status.code(), std::string(status.message())}; }
Item Value(const std::string& text) { return {Code::kOk, text}; }

// Runs `body` in a forked child with `env` set and returns its report. A
// child that crashes or exits abnormally fails the test.
Report RunInChild(const Env& env, const std::function<Report()>& body) {
  int fds[2];
  if (pipe(fds) != 0) {
    ADD_FAILURE() << "pipe failed";
    return {};
  }
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    std::string out;
    for (const Item& item : body()) {
      absl::StrAppend(&out, static_cast<int>(item.code), "\x1f", item.text, "\x1e");
    }
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) _exit(3);
      done += static_cast<size_t>(n);
    }
    close(fds[1]);
    _exit(0);  // no atexit handlers, no test teardown in the child
  }
  close(fds[1]);
  std::string in;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) in.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)
      << "the child crashed or failed (wait status " << wstatus << ")";
  Report report;
  for (absl::string_view record : absl::StrSplit(in, '\x1e', absl::SkipEmpty())) {
    std::vector<std::string> parts = absl::StrSplit(record, absl::MaxSplits('\x1f', 1));
    if (parts.size() != 2) {
      ADD_FAILURE() << "malformed report from the child";
      continue;
    }
    report.push_back({static_cast<Code>(std::atoi(parts[0].c_str())), parts[1]});
  }
  return report;
}

// The status of every wrapper's Create, in a fixed order. None of them may
// crash without a driver.
Report CreateEverything() {
  Report r;
  r.push_back(Of(Driver().status()));
  r.push_back(Of(Device::Count().status()));
  r.push_back(Of(Device::Create(0).status()));
  r.push_back(Of(PrimaryContext::Create(0).status()));
  r.push_back(Of(MappedBuffer::Create(4096).status()));
  r.push_back(Of(MappedBuffer::Create(4096, {.write_combined = true}).status()));
  r.push_back(Of(DeviceBuffer::Create(4096, {.zero = true}).status()));
  r.push_back(Of(Stream::Create().status()));
  r.push_back(Of(Event::Create().status()));
  r.push_back(Of(Module::Create(".version 7.0\n.target sm_70\n.address_size 64\n", "empty").status()));
  r.push_back(Value(LoadedDriver() == nullptr ? "not loaded" : "loaded"));
  return r;
}

constexpr int kWrappers = 9;  // the Creates after Driver() in CreateEverything

TEST(CudaDriverTest, MissingLibraryIsAFailedPreconditionWithTheLoaderMessage) {
  ASSERT_EQ(LoadedDriver(), nullptr);
  const std::string path = "/nonexistent/rk-no-such-dir/libcuda.so.1";
  const Report r = RunInChild({{kLibcudaEnvVar, path}}, CreateEverything);
  ASSERT_THAT(r, SizeIs(kWrappers + 2));
  EXPECT_THAT(r[0].status(), StatusIs(Code::kFailedPrecondition,
                                      AllOf(HasSubstr(absl::StrCat("no CUDA driver: ", path, " could not be loaded (")),
                                            // dlerror()'s own words
                                            HasSubstr("cannot open shared object file: No such file or directory"),
                                            HasSubstr("RingKernel needs an NVIDIA GPU and an NVIDIA driver"))));
  // Every wrapper returns the very same error, and nothing is loaded.
  for (int i = 1; i <= kWrappers; ++i) EXPECT_EQ(r[i].status(), r[0].status()) << "wrapper #" << i;
  EXPECT_EQ(r[kWrappers + 1].text, "not loaded");
}

TEST(CudaDriverTest, DefaultLibraryNameIsLibcuda) {
  // Only meaningful where there is no driver (CI); on a GPU machine the
  // real driver loads.
  const Report r = RunInChild({}, [] { return Report{Of(Driver().status())}; });
  ASSERT_THAT(r, SizeIs(1));
  if (r[0].code == Code::kOk) GTEST_SKIP() << "a CUDA driver is installed here";
  EXPECT_THAT(r[0].status(),
              StatusIs(Code::kFailedPrecondition, HasSubstr("no CUDA driver: libcuda.so.1 could not be loaded (")));
}

TEST(CudaDriverTest, ALibraryThatIsNotADriverLacksCuGetProcAddress) {
  const Report r = RunInChild({{kLibcudaEnvVar, "libm.so.6"}}, CreateEverything);
  ASSERT_THAT(r, SizeIs(kWrappers + 2));
  EXPECT_THAT(r[0].status(),
              StatusIs(Code::kFailedPrecondition,
                       "no CUDA driver: libm.so.6 does not export cuGetProcAddress_v2, so it is not a CUDA driver "
                       "or is older than CUDA 12.0; RingKernel needs an NVIDIA GPU and an NVIDIA driver for CUDA "
                       "12.0 or newer"));
  for (int i = 1; i <= kWrappers; ++i) EXPECT_EQ(r[i].status(), r[0].status()) << "wrapper #" << i;
  EXPECT_EQ(r[kWrappers + 1].text, "not loaded");
}

TEST(CudaDriverTest, TheErrorIsCachedAndTheEnvironmentReadOnce) {
  const Report r = RunInChild({{kLibcudaEnvVar, "/nonexistent/first.so"}}, [] {
    Report out{Of(Driver().status())};
    setenv(kLibcudaEnvVar, "libm.so.6", 1);  // too late: the first answer stands
    out.push_back(Of(Driver().status()));
    return out;
  });
  ASSERT_THAT(r, SizeIs(2));
  EXPECT_THAT(r[0].status(),
              StatusIs(Code::kFailedPrecondition, HasSubstr("/nonexistent/first.so could not be loaded")));
  EXPECT_EQ(r[1].status(), r[0].status());
}

TEST(FormatCudaVersionTest, Formats) {
  EXPECT_EQ(FormatCudaVersion(12000), "12.0");
  EXPECT_EQ(FormatCudaVersion(12080), "12.8");
  EXPECT_EQ(FormatCudaVersion(13000), "13.0");
  EXPECT_EQ(FormatCudaVersion(11040), "11.4");
}

// ---------------------------------------------------------------------------
// With the fake driver.

class FakeDriverTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new rk::testing::TempDir();
    const std::string source = rk::testing::TestDataDir() + "/fake_libcuda.c";
    library_ = dir_->Join("libfakecuda.so.1");
    const rk::testing::CommandResult built = rk::testing::RunCommand(
        {"/bin/sh", "-c", absl::StrCat("cc -shared -fPIC -O1 -o '", library_, "' '", source, "'")});
    if (built.exit_code != 0) {
      build_error_ = absl::StrCat("cc could not build the fake driver (exit ", built.exit_code, "): ", built.err);
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (!build_error_.empty()) GTEST_SKIP() << build_error_;
  }

  Env FakeEnv(Env extra = {}) const {
    extra.push_back({kLibcudaEnvVar, library_});
    return extra;
  }

  static rk::testing::TempDir* dir_;
  static std::string library_;
  static std::string build_error_;
};

rk::testing::TempDir* FakeDriverTest::dir_ = nullptr;
std::string FakeDriverTest::library_;
std::string FakeDriverTest::build_error_;

TEST_F(FakeDriverTest, LoadsEveryEntryPointAtThePinnedVersion) {
  const std::string log = dir_->Join("lookups.log");
  const Report r = RunInChild(FakeEnv({{"FAKE_CUDA_LOG", log}}), [] {
    Report out;
    absl::StatusOr<const DriverApi*> api = Driver();
    out.push_back(Of(api.status()));
    if (!api.ok()) return out;
    const DriverApi* cu = *api;
    out.push_back(Value(absl::StrCat(cu->driver_version)));
    out.push_back(Value(cu->library));
    out.push_back(Value(LoadedDriver() == cu && *Driver() == cu ? "same table" : "different tables"));
    const void* entries[] = {reinterpret_cast<const void*>(cu->cuInit),
                             reinterpret_cast<const void*>(cu->cuGetErrorString),
                             reinterpret_cast<const void*>(cu->cuDeviceGetUuid),
                             reinterpret_cast<const void*>(cu->cuDevicePrimaryCtxReset),
                             reinterpret_cast<const void*>(cu->cuCtxSynchronize),
                             reinterpret_cast<const void*>(cu->cuModuleLoadDataEx),
                             reinterpret_cast<const void*>(cu->cuOccupancyMaxActiveBlocksPerMultiprocessor),
                             reinterpret_cast<const void*>(cu->cuLaunchCooperativeKernel),
                             reinterpret_cast<const void*>(cu->cuMemHostGetDevicePointer),
                             reinterpret_cast<const void*>(cu->cuEventElapsedTime)};
    int null_entries = 0;
    for (const void* e : entries) null_entries += e == nullptr;
    // An entry point outside the table (the benchmarks' graph API), resolved
    // the same way, after the table.
    void* instantiate = nullptr;
    const absl::Status extra = ResolveDriverEntryPoint(*cu, "cuGraphInstantiateWithFlags", &instantiate);
    null_entries += instantiate == nullptr;
    out.push_back(Value(absl::StrCat(null_entries, " null", extra.ok() ? "" : " (extra failed)")));
    // Through the loaded driver, CuStatus uses the driver's strings.
    out.push_back(Of(CuStatus(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(8 bytes)")));
    return out;
  });
  ASSERT_THAT(r, SizeIs(6));
  ASSERT_EQ(r[0].code, Code::kOk) << r[0].text;
  EXPECT_EQ(r[1].text, "12080");
  EXPECT_EQ(r[2].text, library_);
  EXPECT_EQ(r[3].text, "same table");
  EXPECT_EQ(r[4].text, "0 null");
  EXPECT_THAT(r[5].status(),
              StatusIs(Code::kResourceExhausted,
                       "cuMemAlloc(8 bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (2): fake driver: out of memory"));

  // Every look-up but the first asked for the 12.0 ABI without per-thread
  // streams (flags 1 = CU_GET_PROC_ADDRESS_LEGACY_STREAM).
  std::vector<std::string> lines = absl::StrSplit(rk::testing::ReadFileOrDie(log), '\n', absl::SkipEmpty());
  // cuDriverGetVersion, the 47 entry points of the table, then the extra one.
  ASSERT_EQ(lines.size(), 49u);
  EXPECT_EQ(lines[0], "cuDriverGetVersion 2020 1");
  for (size_t i = 1; i < lines.size(); ++i) {
    EXPECT_THAT(lines[i], ::testing::EndsWith(" 12000 1")) << lines[i];
  }
  EXPECT_EQ(lines.back(), "cuGraphInstantiateWithFlags 12000 1");
  // The runtime's table holds no graph entry point: only the benchmarks use them.
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    EXPECT_THAT(lines[i], ::testing::Not(::testing::HasSubstr("Graph"))) << lines[i];
    EXPECT_THAT(lines[i], ::testing::Not(::testing::HasSubstr("Capture"))) << lines[i];
  }
}

TEST_F(FakeDriverTest, MissingEntryPointIsNamedWithTheDriverVersion) {
  const Report r = RunInChild(FakeEnv({{"FAKE_CUDA_MISSING", "cuEventElapsedTime"}}), CreateEverything);
  ASSERT_THAT(r, SizeIs(kWrappers + 2));
  EXPECT_THAT(r[0].status(),
              StatusIs(Code::kFailedPrecondition,
                       AllOf(HasSubstr(absl::StrCat("the CUDA driver ", library_,
                                                    " (CUDA 12.8 driver) lacks the entry point cuEventElapsedTime "
                                                    "(CUDA 12.0 ABI)")),
                             HasSubstr("update the NVIDIA driver"))));
  for (int i = 1; i <= kWrappers; ++i) EXPECT_EQ(r[i].status(), r[0].status()) << "wrapper #" << i;
  EXPECT_EQ(r[kWrappers + 1].text, "not loaded");
}

// A missing entry point outside the table fails only its own look-up.
TEST_F(FakeDriverTest, AMissingExtraEntryPointFailsOnlyItsLookUp) {
  const Report r = RunInChild(FakeEnv({{"FAKE_CUDA_MISSING", "cuGraphLaunch"}}), [] {
    Report out;
    absl::StatusOr<const DriverApi*> api = Driver();
    out.push_back(Of(api.status()));
    if (!api.ok()) return out;
    void* fn = nullptr;
    out.push_back(Of(ResolveDriverEntryPoint(**api, "cuGraphLaunch", &fn)));
    out.push_back(Value(fn == nullptr ? "untouched" : "set"));
    return out;
  });
  ASSERT_THAT(r, SizeIs(3));
  EXPECT_EQ(r[0].code, Code::kOk) << r[0].text;
  EXPECT_THAT(r[1].status(),
              StatusIs(Code::kFailedPrecondition,
                       HasSubstr(absl::StrCat("the CUDA driver ", library_,
                                              " (CUDA 12.8 driver) lacks the entry point cuGraphLaunch "
                                              "(CUDA 12.0 ABI)"))));
  EXPECT_EQ(r[2].text, "untouched");
}

TEST_F(FakeDriverTest, DriverOlderThanCuda12IsRefused) {
  const Report r = RunInChild(FakeEnv({{"FAKE_CUDA_VERSION", "11080"}}), [] { return Report{Of(Driver().status())}; });
  ASSERT_THAT(r, SizeIs(1));
  EXPECT_THAT(r[0].status(),
              StatusIs(Code::kFailedPrecondition,
                       AllOf(HasSubstr(absl::StrCat("the CUDA driver ", library_, " (CUDA 11.8 driver) is too old")),
                             HasSubstr("CUDA 12.0 or newer"))));
}

TEST_F(FakeDriverTest, NoDeviceIsAClearFailedPrecondition) {
  const Report r = RunInChild(FakeEnv({{"FAKE_CUDA_INIT", "100"}}), CreateEverything);
  ASSERT_THAT(r, SizeIs(kWrappers + 2));
  EXPECT_THAT(r[0].status(),
              StatusIs(Code::kFailedPrecondition,
                       AllOf(HasSubstr("no CUDA device found: cuInit(0) failed: CUDA_ERROR_NO_DEVICE (100): fake "
                                       "driver: no CUDA-capable device is detected"),
                             HasSubstr("CUDA_VISIBLE_DEVICES"))));
  for (int i = 1; i <= kWrappers; ++i) EXPECT_EQ(r[i].status(), r[0].status()) << "wrapper #" << i;
  EXPECT_EQ(r[kWrappers + 1].text, "not loaded");
}

TEST_F(FakeDriverTest, OtherInitFailuresNameTheCudaError) {
  const Report r = RunInChild(FakeEnv({{"FAKE_CUDA_INIT", "803"}}), [] { return Report{Of(Driver().status())}; });
  ASSERT_THAT(r, SizeIs(1));
  // The fake knows no name for 803: RingKernel's table supplies it.
  EXPECT_THAT(r[0].status(),
              StatusIs(Code::kFailedPrecondition,
                       HasSubstr("could not be initialised: cuInit(0) failed: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH "
                                 "(803): the driver library and the kernel module have different versions")));
}

TEST_F(FakeDriverTest, WrappersNeedADeviceAndACurrentContext) {
  const Report r = RunInChild(FakeEnv(), [] {
    return Report{Of(Driver().status()),
                  Of(Device::Count().status()),
                  Value(absl::StrCat(Device::Count().value_or(-1))),
                  Of(Device::Create(0).status()),
                  Of(PrimaryContext::Create(0).status()),
                  Of(Stream::Create().status()),
                  Of(Event::Create().status()),
                  Of(MappedBuffer::Create(64).status()),
                  Of(MappedBuffer::Create(0).status()),
                  Of(DeviceBuffer::Create(64).status()),
                  Of(DeviceBuffer::Create(0).status()),
                  Of(Module::Create("", "empty image").status()),
                  Of(Module::Create(".version 7.0\n", "bank").status())};
  });
  ASSERT_THAT(r, SizeIs(13));
  EXPECT_EQ(r[0].code, Code::kOk) << r[0].text;
  EXPECT_EQ(r[1].code, Code::kOk) << r[1].text;
  EXPECT_EQ(r[2].text, "0");
  EXPECT_THAT(r[3].status(), StatusIs(Code::kInvalidArgument, "no CUDA device 0: 0 devices are visible"));
  EXPECT_EQ(r[4].status(), r[3].status());
  const auto no_context = [](const std::string& what) {
    return StatusIs(Code::kFailedPrecondition,
                    absl::StrCat("cannot create ", what,
                                 ": no CUDA context is current on this thread; call PrimaryContext::MakeCurrent() on "
                                 "this thread first"));
  };
  EXPECT_THAT(r[5].status(), no_context("a stream"));
  EXPECT_THAT(r[6].status(), no_context("an event"));
  EXPECT_THAT(r[7].status(), no_context("a mapped buffer"));
  EXPECT_THAT(r[8].status(), StatusIs(Code::kInvalidArgument, "cannot allocate an empty mapped buffer"));
  EXPECT_THAT(r[9].status(), no_context("a device buffer"));
  EXPECT_THAT(r[10].status(), StatusIs(Code::kInvalidArgument, "cannot allocate an empty device buffer"));
  EXPECT_THAT(r[11].status(), StatusIs(Code::kInvalidArgument, "cannot load module empty image: the image is empty"));
  EXPECT_THAT(r[12].status(), no_context("module bank"));
}

TEST(ImageKindTest, RecognisesCubinFatbinAndPtx) {
  EXPECT_STREQ(ImageKindName(absl::string_view("\x7f"
                                               "ELF\x02\x01",
                                               6)),
               "cubin");
  EXPECT_STREQ(ImageKindName(absl::string_view("\x50\xed\x55\xba\x01\x00", 6)), "fatbin");
  EXPECT_STREQ(ImageKindName(".version 8.0\n.target sm_90\n"), "PTX");
  EXPECT_STREQ(ImageKindName(""), "PTX");
}

}  // namespace
}  // namespace rk::cuda
