// Copyright 2026 The RingKernel Authors.
#include "jit/nvrtc_compiler.h"

#include <nvrtc.h>

#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "ringkernel/device/system_layout.h"

namespace rk::jit {
namespace {

absl::Status NvrtcError(const char* what, nvrtcResult r) {
  return absl::InternalError(absl::StrCat(what, " failed: ", nvrtcGetErrorString(r)));
}

// Owns an nvrtcProgram.
class Program {
 public:
  Program() = default;
  ~Program() {
    if (prog_ != nullptr) nvrtcDestroyProgram(&prog_);
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram* out() { return &prog_; }
  nvrtcProgram get() const { return prog_; }

 private:
  nvrtcProgram prog_ = nullptr;
};

int CaretColumn(const std::string& source_line, const std::string& caret_line) {
  // EDG echoes the source line indented by two spaces and puts a caret under
  // the column; both lines carry the same indentation.
  const size_t caret = caret_line.find('^');
  if (caret == std::string::npos || caret < 2) return 0;
  (void)source_line;
  return static_cast<int>(caret - 2 + 1);
}

}  // namespace

std::string NvrtcVersion() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return absl::StrCat(major, ".", minor);
}

std::vector<Diagnostic> ParseNvrtcLog(const std::string& log) {
  static const std::regex kLine(R"(^(.*)\((\d+)\): (catastrophic error|error|warning|remark)(?: #[^:]*)?: (.*)$)");
  std::vector<Diagnostic> out;
  std::vector<std::string> lines = absl::StrSplit(log, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    const std::string& line = lines[i];
    if (!std::regex_match(line, m, kLine)) continue;
    Diagnostic d;
    const std::string sev = m[3].str();
    d.severity = sev == "warning" ? DiagnosticSeverity::kWarning
                 : sev == "remark" ? DiagnosticSeverity::kNote
                                   : DiagnosticSeverity::kError;
    d.location.file = m[1].str();
    uint32_t n = 0;
    if (absl::SimpleAtoi(m[2].str(), &n)) d.location.line = n;
    d.message = m[4].str();
    if (i + 2 < lines.size() && lines[i + 2].find('^') != std::string::npos &&
        lines[i + 2].find_first_not_of(" ^") == std::string::npos) {
      d.location.column = static_cast<uint32_t>(CaretColumn(lines[i + 1], lines[i + 2]));
    }
    out.push_back(std::move(d));
  }
  return out;
}

ResourceUsage ParsePtxasResources(const std::string& log, const std::string& entry) {
  ResourceUsage r;
  std::vector<std::string> lines = absl::StrSplit(log, '\n');
  bool in_entry = false;
  bool in_props = false;
  static const std::regex kUsed(R"(Used (\d+) registers)");
  static const std::regex kSmem(R"((\d+) bytes smem)");
  static const std::regex kCmem(R"((\d+) bytes cmem\[0\])");
  static const std::regex kFrame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  for (const std::string& line : lines) {
    if (line.find("Compiling entry function") != std::string::npos) {
      in_entry = line.find("'" + entry + "'") != std::string::npos;
      continue;
    }
    if (line.find("Function properties for") != std::string::npos) {
      in_props = absl::EndsWith(absl::StripTrailingAsciiWhitespace(line), entry);
      continue;
    }
    std::smatch m;
    if (in_props && std::regex_search(line, m, kFrame)) {
      r.stack_bytes = std::stoi(m[1].str());
      r.spill_store_bytes = std::stoi(m[2].str());
      r.spill_load_bytes = std::stoi(m[3].str());
      in_props = false;
      continue;
    }
    if (in_entry && std::regex_search(line, m, kUsed)) {
      r.registers = std::stoi(m[1].str());
      r.shared_bytes = std::regex_search(line, m, kSmem) ? std::stoi(m[1].str()) : 0;
      r.constant_bytes = std::regex_search(line, m, kCmem) ? std::stoi(m[1].str()) : 0;
      in_entry = false;
    }
  }
  return r;
}

absl::StatusOr<NvrtcOutput> CompileForArch(const GeneratedUnit& unit, const std::string& arch, bool line_info,
                                           std::vector<Diagnostic>* diagnostics) {
  std::vector<const char*> header_contents;
  std::vector<const char*> header_names;
  for (const SourceFile& h : unit.headers) {
    header_contents.push_back(h.contents.c_str());
    header_names.push_back(h.name.c_str());
  }
  Program prog;
  nvrtcResult r = nvrtcCreateProgram(prog.out(), unit.source.c_str(), unit.name.c_str(),
                                     static_cast<int>(header_names.size()), header_contents.data(),
                                     header_names.data());
  if (r != NVRTC_SUCCESS) return NvrtcError("nvrtcCreateProgram", r);

  std::vector<std::string> options = {
      absl::StrCat("--gpu-architecture=", arch),
      "-default-device",  // fragments need no __device__
      "-std=c++17",
      "--ptxas-options=-v",  // registers, spills, shared memory for the package
  };
  if (line_info) options.push_back("-lineinfo");
  for (const std::string& d : unit.defines) options.push_back(absl::StrCat("-D", d));
  std::vector<const char*> option_ptrs;
  for (const std::string& o : options) option_ptrs.push_back(o.c_str());

  const nvrtcResult compiled = nvrtcCompileProgram(prog.get(), static_cast<int>(option_ptrs.size()), option_ptrs.data());
  // The log first: it explains a failure.
  size_t log_size = 0;
  std::string log;
  if (nvrtcGetProgramLogSize(prog.get(), &log_size) == NVRTC_SUCCESS && log_size > 1) {
    log.resize(log_size);
    nvrtcGetProgramLog(prog.get(), log.data());
    log.resize(log_size - 1);
  }
  std::vector<Diagnostic> diags = ParseNvrtcLog(log);
  if (diagnostics != nullptr) diagnostics->insert(diagnostics->end(), diags.begin(), diags.end());
  if (compiled != NVRTC_SUCCESS) {
    std::vector<Diagnostic> errors;
    for (const Diagnostic& d : diags) {
      if (d.severity == DiagnosticSeverity::kError) errors.push_back(d);
    }
    std::string text = errors.empty() ? log : FormatDiagnostics(errors);
    return absl::InvalidArgumentError(absl::StrCat("NVRTC failed to compile the program for ", arch, ":\n", text,
                                                   "options: ", absl::StrJoin(options, " ")));
  }

  NvrtcOutput out;
  size_t size = 0;
  if ((r = nvrtcGetCUBINSize(prog.get(), &size)) != NVRTC_SUCCESS) return NvrtcError("nvrtcGetCUBINSize", r);
  out.cubin.bytes.resize(size);
  if ((r = nvrtcGetCUBIN(prog.get(), out.cubin.bytes.data())) != NVRTC_SUCCESS) return NvrtcError("nvrtcGetCUBIN", r);
  if ((r = nvrtcGetPTXSize(prog.get(), &size)) != NVRTC_SUCCESS) return NvrtcError("nvrtcGetPTXSize", r);
  out.ptx.bytes.resize(size);
  if ((r = nvrtcGetPTX(prog.get(), out.ptx.bytes.data())) != NVRTC_SUCCESS) return NvrtcError("nvrtcGetPTX", r);
  // The PTX text ends with a NUL the driver does not need in our copy.
  while (!out.ptx.bytes.empty() && out.ptx.bytes.back() == '\0') out.ptx.bytes.pop_back();

  out.cubin.arch = arch;
  out.cubin.kind = ImageKind::kCubin;
  out.cubin.log = log;
  out.cubin.resources = ParsePtxasResources(log, RK_KERNEL_ENTRY_NAME);
  std::string virt = arch;
  if (absl::StartsWith(virt, "sm_")) virt = absl::StrCat("compute_", virt.substr(3));
  out.ptx.arch = virt;
  out.ptx.kind = ImageKind::kPtx;
  return out;
}

}  // namespace rk::jit
