// Copyright 2026 The RingKernel Authors.
//
// Test goals: runtime/nvtx.h as a tool sees it. This binary links a fake
// NVTX tool the way a static injection library does (it defines
// InitializeInjectionNvtx2_fnptr, which NVTX looks for when the process
// first calls it), and the tool records what RingKernel registers and every
// range it opens and closes:
//   * the "RingKernel" domain is created once and each call's name is
//     registered once, however often ranges are opened, and Registered()
//     hands out the same handles every time;
//   * ranges carry the registered name in RingKernel's domain, nest, and end
//     in reverse order, per thread;
//   * a public API call (Runtime::Create, which needs no GPU to return) opens
//     and closes its range.
// Without a tool (nvtx_without_tool_test.cc) all of it is inert.
#include <cstdint>

// This file defines the static injection's entry point (below), so NVTX's
// header must not define its weak default: it only declares it, with the
// type of NvtxInitializeInjectionNvtxFunc_t.
#define NVTX_STATIC_INJECTION_IMPL
extern "C" int (*InitializeInjectionNvtx2_fnptr)(const void* (*)(uint32_t));

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ringkernel/runtime.h"
#include "runtime/nvtx.h"

namespace {

// ---- The fake tool. ----

struct FakeTool {
  std::mutex mu;
  bool attached = false;
  int domains_created = 0;
  std::string domain_name;
  std::map<std::string, int> registrations;      // name → times registered
  std::map<const void*, std::string> strings;    // handle → name
  std::vector<std::string> events;               // "push NAME" / "pop", in order, every thread
  bool foreign_domain = false;                   // a push or pop in another domain
  bool unregistered_message = false;             // a push whose message was not a registered string
};
FakeTool& Tool() {
  static FakeTool* tool = new FakeTool;
  return *tool;
}

int domain_token;        // the domain handle the tool gives out is its address
char string_tokens[64];  // string handles: addresses in here

thread_local std::vector<std::string> open_ranges;  // this thread's stack, as the tool sees it

extern "C" {

nvtxDomainHandle_t FakeDomainCreateA(const char* name) {
  std::lock_guard<std::mutex> lock(Tool().mu);
  ++Tool().domains_created;
  Tool().domain_name = name;
  return reinterpret_cast<nvtxDomainHandle_t>(&domain_token);
}

nvtxStringHandle_t FakeDomainRegisterStringA(nvtxDomainHandle_t domain, const char* name) {
  std::lock_guard<std::mutex> lock(Tool().mu);
  if (domain != reinterpret_cast<nvtxDomainHandle_t>(&domain_token)) Tool().foreign_domain = true;
  const size_t i = Tool().strings.size();
  if (i >= sizeof(string_tokens)) return nullptr;
  const void* handle = &string_tokens[i];
  Tool().strings[handle] = name;
  ++Tool().registrations[name];
  return reinterpret_cast<nvtxStringHandle_t>(const_cast<void*>(handle));
}

int FakeDomainRangePushEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a) {
  std::lock_guard<std::mutex> lock(Tool().mu);
  if (domain != reinterpret_cast<nvtxDomainHandle_t>(&domain_token)) Tool().foreign_domain = true;
  std::string name = "?";
  if (a->messageType != NVTX_MESSAGE_TYPE_REGISTERED) {
    Tool().unregistered_message = true;
  } else {
    auto it = Tool().strings.find(a->message.registered);
    if (it != Tool().strings.end()) name = it->second;
  }
  Tool().events.push_back("push " + name);
  open_ranges.push_back(name);
  return static_cast<int>(open_ranges.size()) - 1;
}

int FakeDomainRangePop(nvtxDomainHandle_t domain) {
  std::lock_guard<std::mutex> lock(Tool().mu);
  if (domain != reinterpret_cast<nvtxDomainHandle_t>(&domain_token)) Tool().foreign_domain = true;
  Tool().events.push_back("pop");
  if (open_ranges.empty()) return -1;
  open_ranges.pop_back();
  return static_cast<int>(open_ranges.size());
}

int FakeInitializeInjection(NvtxGetExportTableFunc_t get_export_table) {
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (callbacks == nullptr || !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) ||
      size < NVTX_CBID_CORE2_DomainCreateA) {
    return 0;
  }
  *table[NVTX_CBID_CORE2_DomainCreateA] = reinterpret_cast<NvtxFunctionPointer>(&FakeDomainCreateA);
  *table[NVTX_CBID_CORE2_DomainRegisterStringA] = reinterpret_cast<NvtxFunctionPointer>(&FakeDomainRegisterStringA);
  *table[NVTX_CBID_CORE2_DomainRangePushEx] = reinterpret_cast<NvtxFunctionPointer>(&FakeDomainRangePushEx);
  *table[NVTX_CBID_CORE2_DomainRangePop] = reinterpret_cast<NvtxFunctionPointer>(&FakeDomainRangePop);
  Tool().attached = true;
  return 1;
}

// What NVTX's loader finds when no tool was named in NVTX_INJECTION64_PATH:
// a statically linked tool (nvtxDetail/nvtxInit.h).
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = &FakeInitializeInjection;

}  // extern "C"

namespace nvtx = ::rk::internal::nvtx;

class NvtxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::getenv("NVTX_INJECTION64_PATH") != nullptr) {
      GTEST_SKIP() << "a real NVTX tool is attached (NVTX_INJECTION64_PATH); this test needs its fake one";
    }
    ASSERT_NE(nvtx::Registered().domain, nullptr);  // the first NVTX call: the fake tool attaches
    ASSERT_TRUE(Tool().attached);
    std::lock_guard<std::mutex> lock(Tool().mu);
    Tool().events.clear();
  }
  std::vector<std::string> Events() {
    std::lock_guard<std::mutex> lock(Tool().mu);
    return Tool().events;
  }
};

TEST_F(NvtxTest, TheDomainAndEachCallNameAreRegisteredOnce) {
  const nvtx::Registry& first = nvtx::Registered();
  for (int i = 0; i < 100; ++i) nvtx::Range range(nvtx::Call::kSend);
  const nvtx::Registry& second = nvtx::Registered();
  EXPECT_EQ(&first, &second);
  EXPECT_EQ(first.domain, reinterpret_cast<nvtxDomainHandle_t>(&domain_token));

  std::lock_guard<std::mutex> lock(Tool().mu);
  EXPECT_EQ(Tool().domains_created, 1);
  EXPECT_EQ(Tool().domain_name, "RingKernel");
  EXPECT_EQ(Tool().registrations.size(), nvtx::kCallCount);
  std::set<const void*> handles;
  for (size_t i = 0; i < nvtx::kCallCount; ++i) {
    const std::string name = nvtx::CallName(static_cast<nvtx::Call>(i));
    EXPECT_EQ(Tool().registrations[name], 1) << name;
    ASSERT_NE(first.names[i], nullptr) << name;
    EXPECT_EQ(Tool().strings[first.names[i]], name);
    handles.insert(first.names[i]);
  }
  EXPECT_EQ(handles.size(), nvtx::kCallCount);
  EXPECT_FALSE(Tool().foreign_domain);
  EXPECT_FALSE(Tool().unregistered_message);
}

TEST_F(NvtxTest, CallNamesAreTheApiAsTheApplicationWritesIt) {
  EXPECT_STREQ(nvtx::CallName(nvtx::Call::kRuntimeCreate), "Runtime::Create");
  EXPECT_STREQ(nvtx::CallName(nvtx::Call::kRuntimeCompileFiles), "Runtime::CompileFiles");
  EXPECT_STREQ(nvtx::CallName(nvtx::Call::kRuntimeCompileSources), "Runtime::CompileSources");
  EXPECT_STREQ(nvtx::CallName(nvtx::Call::kRuntimeLoadPackage), "Runtime::LoadPackage");
  EXPECT_STREQ(nvtx::CallName(nvtx::Call::kRuntimeStart), "Runtime::Start");
  EXPECT_STREQ(nvtx::CallName(nvtx::Call::kSpawn), "System::Spawn");
  EXPECT_STREQ(nvtx::CallName(nvtx::Call::kBind), "System::Bind");
  EXPECT_STREQ(nvtx::CallName(nvtx::Call::kUnbind), "System::Unbind");
  EXPECT_STREQ(nvtx::CallName(nvtx::Call::kSend), "System::Send");
  EXPECT_STREQ(nvtx::CallName(nvtx::Call::kAsk), "System::Ask");
  EXPECT_STREQ(nvtx::CallName(nvtx::Call::kReceive), "System::Receive");
  EXPECT_STREQ(nvtx::CallName(nvtx::Call::kTakeDeadLetters), "System::TakeDeadLetters");
  EXPECT_STREQ(nvtx::CallName(nvtx::Call::kTakeFailures), "System::TakeFailures");
  EXPECT_STREQ(nvtx::CallName(nvtx::Call::kStats), "System::Stats");
  EXPECT_STREQ(nvtx::CallName(nvtx::Call::kStop), "System::Stop");
}

TEST_F(NvtxTest, RangesNestAndEndInReverseOrder) {
  {
    nvtx::Range stop(nvtx::Call::kStop);
    {
      nvtx::Range stats(nvtx::Call::kStats);
      EXPECT_EQ(open_ranges, (std::vector<std::string>{"System::Stop", "System::Stats"}));
    }
    EXPECT_EQ(open_ranges, (std::vector<std::string>{"System::Stop"}));
    nvtx::Range receive(nvtx::Call::kReceive);
    EXPECT_EQ(open_ranges, (std::vector<std::string>{"System::Stop", "System::Receive"}));
  }
  EXPECT_TRUE(open_ranges.empty());
  EXPECT_EQ(Events(), (std::vector<std::string>{"push System::Stop", "push System::Stats", "pop",
                                                "push System::Receive", "pop", "pop"}));
}

TEST_F(NvtxTest, EachThreadNestsItsOwnRanges) {
  std::vector<std::string> seen_a, seen_b;
  std::thread a([&] {
    nvtx::Range send(nvtx::Call::kSend);
    std::thread b([&] {
      nvtx::Range ask(nvtx::Call::kAsk);
      seen_b = open_ranges;
    });
    b.join();
    seen_a = open_ranges;
  });
  a.join();
  EXPECT_EQ(seen_a, (std::vector<std::string>{"System::Send"}));
  EXPECT_EQ(seen_b, (std::vector<std::string>{"System::Ask"}));
}

TEST_F(NvtxTest, APublicCallOpensAndClosesItsRange) {
  // Returns FailedPrecondition without a GPU, a Runtime with one: a range
  // either way.
  {
    absl::StatusOr<std::unique_ptr<rk::Runtime>> runtime = rk::Runtime::Create();
    if (!runtime.ok()) {
      EXPECT_EQ(runtime.status().code(), absl::StatusCode::kFailedPrecondition) << runtime.status();
    }
  }
  const std::vector<std::string> events = Events();
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events.front(), "push Runtime::Create");
  EXPECT_EQ(events.back(), "pop");
  EXPECT_TRUE(open_ranges.empty());
}

}  // namespace
