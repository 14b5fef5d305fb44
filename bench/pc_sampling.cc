// Copyright 2026 The RingKernel Authors.
#include "bench/pc_sampling.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

#if __has_include(<cupti_pcsampling.h>)
#include <cuda.h>
#include <cupti_pcsampling.h>
#define RK_HAVE_CUPTI 1
#else
#define RK_HAVE_CUPTI 0
#endif

namespace rk::bench {

#if RK_HAVE_CUPTI

namespace {

// The entry points used, looked up by name (CUPTI and the driver are opened
// at run time).
struct Api {
  void* cupti = nullptr;
  void* cuda = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*cuCtxPushCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxPopCurrent)(CUcontext*) = nullptr;
  CUptiResult (*GetResultString)(CUptiResult, const char**) = nullptr;
  CUptiResult (*Enable)(CUpti_PCSamplingEnableParams*) = nullptr;
  CUptiResult (*Disable)(CUpti_PCSamplingDisableParams*) = nullptr;
  CUptiResult (*SetConfig)(CUpti_PCSamplingConfigurationInfoParams*) = nullptr;
  CUptiResult (*GetData)(CUpti_PCSamplingGetDataParams*) = nullptr;
  CUptiResult (*GetNumStallReasons)(CUpti_PCSamplingGetNumStallReasonsParams*) = nullptr;
  CUptiResult (*GetStallReasons)(CUpti_PCSamplingGetStallReasonsParams*) = nullptr;
};

template <typename F>
absl::Status Find(void* lib, const char* name, F* out) {
  void* p = dlsym(lib, name);
  if (p == nullptr) return absl::NotFoundError(absl::StrCat("pc sampling: no symbol ", name, " (", dlerror(), ")"));
  *out = reinterpret_cast<F>(p);
  return absl::OkStatus();
}

}  // namespace

struct PcSampler::State {
  Api api;
  CUdevice device = 0;
  CUcontext ctx = nullptr;
  bool enabled = false;
  size_t num_reasons = 0;
  std::vector<uint32_t> reason_index;
  std::vector<std::string> reason_name;
  CUpti_PCSamplingData data{};
  std::vector<CUpti_PCSamplingPCData> pcs;
  std::vector<std::vector<CUpti_PCSamplingStallReason>> reasons;

  absl::Status Check(CUptiResult r, const char* what) const {
    if (r == CUPTI_SUCCESS) return absl::OkStatus();
    const char* text = "?";
    if (api.GetResultString != nullptr) api.GetResultString(r, &text);
    return absl::InternalError(absl::StrCat("pc sampling: ", what, " failed: ", text, " (", static_cast<int>(r), ")"));
  }
  void ResetBuffer() {
    for (size_t i = 0; i < pcs.size(); ++i) {
      pcs[i] = CUpti_PCSamplingPCData{};
      pcs[i].size = sizeof(CUpti_PCSamplingPCData);
      pcs[i].stallReason = reasons[i].data();
    }
    data = CUpti_PCSamplingData{};
    data.size = sizeof(CUpti_PCSamplingData);
    data.collectNumPcs = pcs.size();
    data.pPcData = pcs.data();
  }
};

PcSampler::PcSampler(std::unique_ptr<State> s) : s_(std::move(s)) {}

PcSampler::~PcSampler() {
  if (s_ == nullptr) return;
  if (s_->enabled) {
    CUpti_PCSamplingDisableParams p{};
    p.size = CUpti_PCSamplingDisableParamsSize;
    p.ctx = s_->ctx;
    s_->api.Disable(&p);
  }
  if (s_->ctx != nullptr) s_->api.cuDevicePrimaryCtxRelease(s_->device);
}

absl::StatusOr<std::unique_ptr<PcSampler>> PcSampler::Start(int ordinal, int period_log2) {
  if (period_log2 < 5 || period_log2 > 31) return absl::InvalidArgumentError("pc sampling: period must be 5..31");
  auto s = std::make_unique<State>();
  Api& a = s->api;
  for (const char* name : {"libcupti.so.13", "libcupti.so", "/usr/local/cuda/lib64/libcupti.so",
                           "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so"}) {
    a.cupti = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (a.cupti != nullptr) break;
  }
  if (a.cupti == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("pc sampling: CUPTI not found (libcupti.so.13; set LD_LIBRARY_PATH): ", dlerror()));
  }
  a.cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (a.cuda == nullptr) return absl::FailedPreconditionError("pc sampling: libcuda.so.1 not found");
  absl::Status st;
  for (absl::Status f :
       {Find(a.cuda, "cuDeviceGet", &a.cuDeviceGet), Find(a.cuda, "cuDevicePrimaryCtxRetain", &a.cuDevicePrimaryCtxRetain),
        Find(a.cuda, "cuDevicePrimaryCtxRelease", &a.cuDevicePrimaryCtxRelease),
        Find(a.cuda, "cuCtxPushCurrent", &a.cuCtxPushCurrent), Find(a.cuda, "cuCtxPopCurrent", &a.cuCtxPopCurrent),
        Find(a.cupti, "cuptiGetResultString", &a.GetResultString), Find(a.cupti, "cuptiPCSamplingEnable", &a.Enable),
        Find(a.cupti, "cuptiPCSamplingDisable", &a.Disable),
        Find(a.cupti, "cuptiPCSamplingSetConfigurationAttribute", &a.SetConfig),
        Find(a.cupti, "cuptiPCSamplingGetData", &a.GetData),
        Find(a.cupti, "cuptiPCSamplingGetNumStallReasons", &a.GetNumStallReasons),
        Find(a.cupti, "cuptiPCSamplingGetStallReasons", &a.GetStallReasons)}) {
    if (!f.ok()) return f;
  }
  if (a.cuDeviceGet(&s->device, ordinal) != CUDA_SUCCESS ||
      a.cuDevicePrimaryCtxRetain(&s->ctx, s->device) != CUDA_SUCCESS) {
    s->ctx = nullptr;
    return absl::InternalError("pc sampling: cannot retain the primary context");
  }
  a.cuCtxPushCurrent(s->ctx);
  struct Pop {
    Api* a;
    ~Pop() {
      CUcontext c;
      a->cuCtxPopCurrent(&c);
    }
  } pop{&a};

  CUpti_PCSamplingEnableParams en{};
  en.size = CUpti_PCSamplingEnableParamsSize;
  en.ctx = s->ctx;
  if (absl::Status e = s->Check(a.Enable(&en), "cuptiPCSamplingEnable"); !e.ok()) return e;
  s->enabled = true;

  CUpti_PCSamplingGetNumStallReasonsParams nr{};
  nr.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
  nr.ctx = s->ctx;
  nr.numStallReasons = &s->num_reasons;
  if (absl::Status e = s->Check(a.GetNumStallReasons(&nr), "cuptiPCSamplingGetNumStallReasons"); !e.ok()) return e;
  s->reason_index.resize(s->num_reasons);
  std::vector<std::vector<char>> names(s->num_reasons, std::vector<char>(CUPTI_STALL_REASON_STRING_SIZE, 0));
  std::vector<char*> name_ptrs(s->num_reasons);
  for (size_t i = 0; i < s->num_reasons; ++i) name_ptrs[i] = names[i].data();
  CUpti_PCSamplingGetStallReasonsParams gr{};
  gr.size = CUpti_PCSamplingGetStallReasonsParamsSize;
  gr.ctx = s->ctx;
  gr.numStallReasons = s->num_reasons;
  gr.stallReasonIndex = s->reason_index.data();
  gr.stallReasons = name_ptrs.data();
  if (absl::Status e = s->Check(a.GetStallReasons(&gr), "cuptiPCSamplingGetStallReasons"); !e.ok()) return e;
  for (size_t i = 0; i < s->num_reasons; ++i) s->reason_name.emplace_back(names[i].data());

  constexpr size_t kPcs = 40000;
  s->pcs.resize(kPcs);
  s->reasons.assign(kPcs, std::vector<CUpti_PCSamplingStallReason>(s->num_reasons));
  s->ResetBuffer();

  std::vector<CUpti_PCSamplingConfigurationInfo> cfg(5);
  cfg[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
  cfg[0].attributeData.samplingPeriodData.samplingPeriod = static_cast<uint32_t>(period_log2);
  cfg[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
  cfg[1].attributeData.collectionModeData.collectionMode = CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
  cfg[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
  cfg[2].attributeData.samplingDataBufferData.samplingDataBuffer = &s->data;
  cfg[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
  cfg[3].attributeData.scratchBufferSizeData.scratchBufferSize = size_t{64} << 20;
  cfg[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
  cfg[4].attributeData.outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
  CUpti_PCSamplingConfigurationInfoParams cp{};
  cp.size = CUpti_PCSamplingConfigurationInfoParamsSize;
  cp.ctx = s->ctx;
  cp.numAttributes = cfg.size();
  cp.pPCSamplingConfigurationInfo = cfg.data();
  if (absl::Status e = s->Check(a.SetConfig(&cp), "cuptiPCSamplingSetConfigurationAttribute"); !e.ok()) return e;
  return std::unique_ptr<PcSampler>(new PcSampler(std::move(s)));
}

absl::StatusOr<std::string> PcSampler::StopAndWrite(const std::string& path) {
  State& s = *s_;
  s.api.cuCtxPushCurrent(s.ctx);
  std::ofstream out(path);
  if (!out) return absl::InternalError(absl::StrCat("pc sampling: cannot write ", path));
  out << "cubin_crc,function,pc_offset,stall_reason,samples\n";
  uint64_t total = 0, dropped = 0, non_user = 0, pcs = 0;
  bool hw_full = false;
  auto drain = [&]() {
    for (size_t i = 0; i < s.data.totalNumPcs; ++i) {
      const CUpti_PCSamplingPCData& pc = s.data.pPcData[i];
      ++pcs;
      for (size_t r = 0; r < pc.stallReasonCount; ++r) {
        const CUpti_PCSamplingStallReason& sr = pc.stallReason[r];
        if (sr.samples == 0) continue;
        std::string reason = absl::StrCat(sr.pcSamplingStallReasonIndex);
        for (size_t k = 0; k < s.num_reasons; ++k) {
          if (s.reason_index[k] == sr.pcSamplingStallReasonIndex) reason = s.reason_name[k];
        }
        out << pc.cubinCrc << "," << (pc.functionName != nullptr ? pc.functionName : "?") << "," << pc.pcOffset << ","
            << reason << "," << sr.samples << "\n";
      }
    }
    total += s.data.totalSamples;
    dropped += s.data.droppedSamples;
    non_user += s.data.nonUsrKernelsTotalSamples;
    hw_full = hw_full || s.data.hardwareBufferFull != 0;
  };
  absl::Status status;
  for (int round = 0; round < 1000; ++round) {
    s.ResetBuffer();
    CUpti_PCSamplingGetDataParams gd{};
    gd.size = CUpti_PCSamplingGetDataParamsSize;
    gd.ctx = s.ctx;
    gd.pcSamplingData = &s.data;
    status = s.Check(s.api.GetData(&gd), "cuptiPCSamplingGetData");
    if (!status.ok()) break;
    drain();
    if (s.data.remainingNumPcs == 0) break;
  }
  s.ResetBuffer();
  CUpti_PCSamplingDisableParams dp{};
  dp.size = CUpti_PCSamplingDisableParamsSize;
  dp.ctx = s.ctx;
  const absl::Status disabled = s.Check(s.api.Disable(&dp), "cuptiPCSamplingDisable");
  s.enabled = false;
  if (disabled.ok()) drain();  // what the disable flushed into the buffer
  CUcontext c;
  s.api.cuCtxPopCurrent(&c);
  if (!status.ok()) return status;
  if (!disabled.ok()) return disabled;
  return absl::StrCat("pc sampling: ", total, " samples (", dropped, " dropped, ", non_user, " in other kernels), ",
                      pcs, " PCs", hw_full ? ", hardware buffer full" : "", " -> ", path);
}

#else  // !RK_HAVE_CUPTI

struct PcSampler::State {};
PcSampler::PcSampler(std::unique_ptr<State> s) : s_(std::move(s)) {}
PcSampler::~PcSampler() = default;
absl::StatusOr<std::unique_ptr<PcSampler>> PcSampler::Start(int, int) {
  return absl::FailedPreconditionError("pc sampling: rkbench was built without CUPTI's headers");
}
absl::StatusOr<std::string> PcSampler::StopAndWrite(const std::string&) {
  return absl::FailedPreconditionError("pc sampling: rkbench was built without CUPTI's headers");
}

#endif

}  // namespace rk::bench
