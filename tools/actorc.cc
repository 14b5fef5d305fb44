// Copyright 2026 The RingKernel Authors.
//
// actorc: the RingKernel command line.
//
//   actorc check   FILES...                          parse + compile; diagnostics (file:line:col) only
//   actorc build   FILES... -o APP.rkpkg [--arch sm_89,sm_90] [--max-payload BYTES]
//   actorc inspect APP.rkpkg [--json]                actors, handlers, layouts, routes, per-arch resources,
//                                                    the build's warnings
//   actorc header  APP.rkpkg -o APP.h                typed host header
//   actorc run     (FILES...|APP.rkpkg) --script S.jsonl [--device N] [--stats-every MS] [--trace OUT.json]
//
// Exit codes: 0 success; 1 a problem in the user's input (fragments,
// packages, scripts), with diagnostics on stderr; 2 a usage or environment
// problem (bad flags, no GPU, an unusable cache).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "jit/builder.h"
#include "jit/package.h"
#include "ringkernel/runtime.h"
#include "ringkernel/status_macros.h"
#include "runtime/program_access.h"
#include "tools/host_header.h"
#include "tools/script.h"

namespace rk::tools {
namespace {

constexpr int kOk = 0;
constexpr int kUserError = 1;
constexpr int kUsageError = 2;

// --stats-every: at most an hour between snapshots.
constexpr int64_t kMaxStatsEveryMs = 3600 * 1000;

constexpr char kUsage[] =
    "usage:\n"
    "  actorc check   FILES... [options]                  parse and compile; print diagnostics only\n"
    "  actorc build   FILES... -o APP.rkpkg [options]     build a package\n"
    "  actorc inspect APP.rkpkg [--json]                  show actors, handlers, layouts, routes, resources,\n"
    "                                                     the build's warnings\n"
    "  actorc header  APP.rkpkg -o APP.h                  write a typed host header\n"
    "  actorc run     (FILES...|APP.rkpkg) --script S.jsonl [--device N] [--stats-every MS] [options]\n"
    "                                                     run a JSON-lines script on the GPU\n"
    "options for run:\n"
    "  --device N             the CUDA device (default 0)\n"
    "  --stats-every MS       also print the system's statistics every MS milliseconds while the script\n"
    "                         runs, as JSON lines {\"at_ms\": ..., \"stats\": {...}}; the fragments are\n"
    "                         built with tracing, for the handler times (a package has them if it was)\n"
    "  --trace OUT.json       record the device timeline and write it for Perfetto's UI; the\n"
    "                         fragments are built with tracing (a package must have been)\n"
    "options for check, build and run (with FILES):\n"
    "  --arch sm_89,sm_90     architectures to build cubins for (default: sm_89,sm_90); PTX is added\n"
    "  --max-payload BYTES    largest message (default 4096)\n"
    "  --no-ptx               leave out the PTX for newer GPUs\n"
    "  -I DIR, -D NAME[=VAL]  include directory / define for the fragments\n"
    "  --no-cache             do not use the compile cache\n"
    "  --timings              print where the build's time went\n"
    "  --trace                (check, build) build with the device timeline compiled in (-D RK_TRACE)\n"
    "exit codes: 0 ok, 1 error in the input (diagnostics printed), 2 usage or environment error\n";

// Compiles the device timeline and the handler-time histograms in (once).
void AddTraceDefine(jit::BuildOptions* build) {
  if (std::find(build->defines.begin(), build->defines.end(), "RK_TRACE") == build->defines.end()) {
    build->defines.push_back("RK_TRACE");
  }
}

struct Args {
  std::string command;
  std::vector<std::string> inputs;
  std::string output;
  std::string script;
  std::string trace;  // run --trace FILE
  int device = 0;
  int64_t stats_every_ms = 0;  // 0: not asked for
  bool json = false;
  bool no_cache = false;
  bool timings = false;
  jit::BuildOptions build;
};

int Usage(const std::string& problem) {
  std::cerr << "actorc: " << problem << "\n" << kUsage;
  return kUsageError;
}

// Parses argv; returns an exit code to stop with, or -1 to go on.
int ParseArgs(int argc, char** argv, Args* args) {
  if (argc < 2) return Usage("no command given");
  args->command = argv[1];
  if (args->command == "--help" || args->command == "-h" || args->command == "help") {
    std::cout << kUsage;
    return kOk;
  }
  if (args->command == "--version") {
    std::cout << "actorc " << RK_VERSION << "\n";
    return kOk;
  }
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string* out) -> bool {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (a == "-o" || a == "--output") {
      if (!value(&args->output)) return Usage(a + " needs a file name");
    } else if (a == "--script") {
      if (!value(&args->script)) return Usage("--script needs a file name");
    } else if (a == "--device") {
      if (!value(&v)) return Usage("--device needs a number");
      char* end = nullptr;
      const long d = std::strtol(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != 0 || d < 0 || d > 1024) return Usage("--device needs a device number, got '" + v + "'");
      args->device = static_cast<int>(d);
    } else if (a == "--stats-every") {
      if (!value(&v)) return Usage("--stats-every needs a number of milliseconds");
      char* end = nullptr;
      errno = 0;
      const long long ms = std::strtoll(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != 0 || errno == ERANGE || ms <= 0 || ms > kMaxStatsEveryMs) {
        return Usage(absl::StrCat("--stats-every needs a whole number of milliseconds from 1 to ", kMaxStatsEveryMs,
                                  ", got '", v, "'"));
      }
      args->stats_every_ms = ms;
      // The handler times come from histograms that only an instrumented
      // build keeps (handler_times.h).
      AddTraceDefine(&args->build);
    } else if (a == "--arch") {
      if (!value(&v)) return Usage("--arch needs a list such as sm_89,sm_90");
      args->build.archs = absl::StrSplit(v, ',', absl::SkipEmpty());
    } else if (a == "--max-payload") {
      if (!value(&v)) return Usage("--max-payload needs a number of bytes");
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != 0 || n <= 0) return Usage("--max-payload needs a number of bytes, got '" + v + "'");
      args->build.max_payload = static_cast<uint32_t>(n);
    } else if (a == "--trace") {
      // run: where the timeline goes (and the fragments get it compiled
      // in); check and build: compile it in.
      if (args->command == "run" && !value(&args->trace)) return Usage("--trace needs a file name");
      AddTraceDefine(&args->build);
    } else if (a == "--no-ptx") {
      args->build.ptx = false;
    } else if (a == "--no-cache") {
      args->no_cache = true;
    } else if (a == "--timings") {
      args->timings = true;
    } else if (a == "--json") {
      args->json = true;
    } else if (a == "-I") {
      if (!value(&v)) return Usage("-I needs a directory");
      args->build.include_dirs.push_back(v);
    } else if (a.rfind("-I", 0) == 0) {
      args->build.include_dirs.push_back(a.substr(2));
    } else if (a == "-D") {
      if (!value(&v)) return Usage("-D needs NAME or NAME=VALUE");
      args->build.defines.push_back(v);
    } else if (a.rfind("-D", 0) == 0) {
      args->build.defines.push_back(a.substr(2));
    } else if (!a.empty() && a[0] == '-') {
      return Usage("unknown option '" + a + "'");
    } else {
      args->inputs.push_back(a);
    }
  }
  return -1;
}

// Which exit code a status from the pipeline deserves.
int ExitCodeFor(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kOutOfRange:
      return kUserError;
    default:
      return kUsageError;
  }
}

void PrintDiagnostics(const std::vector<jit::Diagnostic>& diags) {
  for (const jit::Diagnostic& d : diags) std::cerr << d.ToString() << "\n";
}

bool IsPackagePath(const std::string& p) { return p.size() > 6 && p.substr(p.size() - 6) == ".rkpkg"; }

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read '", path, "'"));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Builds FILES (check, build, run). Prints diagnostics; returns the package
// or an exit code.
absl::StatusOr<jit::BuildResult> Build(const Args& args, int* exit_code) {
  if (absl::Status s = jit::ValidateBuildOptions(args.build); !s.ok()) {
    *exit_code = Usage(std::string(s.message()));
    return s;
  }
  jit::Builder::Options bo;
  bo.use_cache = !args.no_cache;
  absl::StatusOr<jit::Builder> builder = jit::Builder::Create(bo);
  if (!builder.ok()) {
    std::cerr << "actorc: " << builder.status().message()
              << "\n(set RINGKERNEL_CACHE_DIR to a writable directory, or pass --no-cache)\n";
    *exit_code = kUsageError;
    return builder.status();
  }
  std::vector<jit::Diagnostic> diags;
  absl::StatusOr<jit::BuildResult> result = builder->BuildFiles(args.inputs, args.build, &diags);
  if (!result.ok()) {
    if (jit::HasErrors(diags)) {
      PrintDiagnostics(diags);
      std::cerr << "actorc: " << args.inputs.size() << " fragment(s) failed to build\n";
    } else {
      std::cerr << "actorc: " << result.status().message() << "\n";
    }
    *exit_code = ExitCodeFor(result.status());
    return result.status();
  }
  PrintDiagnostics(diags);  // warnings
  if (args.timings) {
    const jit::BuildTimings& t = result->timings;
    std::string archs;
    for (const auto& [arch, ms] : t.arch_ms) absl::StrAppend(&archs, " ", arch, "=", absl::StrFormat("%.1f", ms));
    std::cerr << absl::StrFormat(
        "timings (ms): total %.2f, cache %s, read %.2f, lookup %.2f, parse %.2f, codegen %.2f, nvrtc %.2f [%s ], "
        "store %.2f\n",
        t.total_ms, result->cache_hit ? "hit" : "miss", t.read_ms, t.lookup_ms, t.parse_ms, t.codegen_ms,
        t.compile_ms, archs, t.store_ms);
  }
  return result;
}

int Check(const Args& args) {
  if (args.inputs.empty()) return Usage("check needs fragment files");
  int code = kOk;
  absl::StatusOr<jit::BuildResult> r = Build(args, &code);
  if (!r.ok()) return code;
  const jit::HandlerModel& m = r->package.model;
  size_t handlers = 0;
  for (const auto& a : m.actors) handlers += a.handlers.size();
  std::cout << absl::StrFormat("ok: %d actor type(s), %d handler(s), %d message type(s), %d route(s)\n",
                               m.actors.size(), handlers, m.message_count(), m.routes.size());
  return kOk;
}

int BuildCommand(const Args& args) {
  if (args.inputs.empty()) return Usage("build needs fragment files");
  if (args.output.empty()) return Usage("build needs -o APP.rkpkg");
  int code = kOk;
  absl::StatusOr<jit::BuildResult> r = Build(args, &code);
  if (!r.ok()) return code;
  if (absl::Status s = jit::WritePackage(r->package, args.output); !s.ok()) {
    std::cerr << "actorc: " << s.message() << "\n";
    return kUsageError;
  }
  std::cout << "wrote " << args.output << " (" << jit::DescribeImages(r->package) << ")\n";
  return kOk;
}

absl::StatusOr<jit::Package> LoadPackageArg(const Args& args, int* code) {
  if (args.inputs.size() != 1 || !IsPackagePath(args.inputs[0])) {
    *code = Usage(args.command + " needs one APP.rkpkg");
    return absl::InvalidArgumentError("usage");
  }
  absl::StatusOr<jit::Package> p = jit::ReadPackage(args.inputs[0]);
  if (!p.ok()) {
    std::cerr << "actorc: " << p.status().message() << "\n";
    *code = p.status().code() == absl::StatusCode::kNotFound ? kUsageError : kUserError;
  }
  return p;
}

std::string Resources(const jit::ResourceUsage& r) {
  if (!r.known()) return "compiled by the driver at load";
  return absl::StrFormat("%d registers, %d B spill stores, %d B spill loads, %d B static smem, %d B stack",
                         r.registers, r.spill_store_bytes, r.spill_load_bytes, r.shared_bytes, r.stack_bytes);
}

void PrintRecord(const jit::RecordLayout& r, std::ostream& out) {
  out << "  " << r.tag << " " << r.name << "  (" << r.size << " bytes, align " << r.alignment;
  if (r.is_message()) out << ", message id " << r.message_id;
  out << ")  " << r.location.ToString() << "\n";
  for (const jit::FieldLayout& f : r.fields) {
    out << absl::StrFormat("    +%-5d %-24s %s (%d bytes)\n", f.offset, f.name, f.type, f.size);
  }
}

int Inspect(const Args& args) {
  int code = kOk;
  absl::StatusOr<jit::Package> p = LoadPackageArg(args, &code);
  if (!p.ok()) return code;
  if (args.json) {
    nlohmann::json j;
    j["model"] = p->model.ToJson();
    j["model"].erase("sources");
    j["options"] = p->options.ToJson();
    j["toolchain"] = p->toolchain.ToJson();
    j["images"] = nlohmann::json::array();
    for (const jit::ArchImage& img : p->images) {
      j["images"].push_back({{"arch", img.arch},
                             {"kind", img.kind == jit::ImageKind::kCubin ? "cubin" : "ptx"},
                             {"bytes", img.bytes.size()},
                             {"resources", jit::ResourceUsageToJson(img.resources)}});
    }
    j["warnings"] = nlohmann::json::array();
    for (const jit::Diagnostic& d : p->warnings) j["warnings"].push_back(d.ToString());
    std::cout << j.dump(2) << "\n";
    return kOk;
  }
  const jit::HandlerModel& m = p->model;
  std::cout << args.inputs[0] << ": RingKernel package, built by RingKernel " << p->toolchain.ringkernel << " (ABI "
            << p->toolchain.abi << ", NVRTC " << p->toolchain.nvrtc << ", " << p->toolchain.libclang << ")\n";
  std::vector<std::string> frags;
  for (const auto& s : m.sources) frags.push_back(s.fragment ? s.name : s.name + " (header)");
  std::cout << "sources: " << absl::StrJoin(frags, ", ") << "\n";
  std::cout << "max payload: " << m.max_payload << " bytes\n\nactors:\n";
  for (const jit::ActorInfo& a : m.actors) {
    std::cout << "  " << a.name << "  (type " << a.type_id << ", state " << a.state_size << " bytes, "
              << (a.zero_initialized ? "zero-initialised" : "constructed at spawn") << ")  " << a.location.ToString()
              << "\n";
    for (const jit::HandlerInfo& h : a.handlers) {
      std::cout << "    " << (h.kind == jit::HandlerKind::kBlock ? "block  " : "thread ") << h.method << "(const "
                << h.message << "&)  message " << h.message_id << "  " << h.location.ToString() << "\n";
    }
  }
  std::cout << "\nmessages:\n";
  for (const jit::RecordLayout& r : m.records) {
    if (r.is_message()) PrintRecord(r, std::cout);
  }
  bool nested = false;
  for (const jit::RecordLayout& r : m.records) {
    if (r.is_message()) continue;
    if (!nested) std::cout << "\nnested records:\n";
    nested = true;
    PrintRecord(r, std::cout);
  }
  if (!m.enums.empty()) std::cout << "\nenums:\n";
  for (const jit::EnumLayout& e : m.enums) {
    std::vector<std::string> values;
    for (const jit::EnumeratorLayout& v : e.enumerators) {
      values.push_back(absl::StrCat(v.name, " = ", jit::FormatEnumeratorValue(e.kind, v.value)));
    }
    std::cout << "  " << (e.scoped ? "enum class " : "enum ") << e.name << " : " << jit::FieldKindName(e.kind)
              << "  { " << absl::StrJoin(values, ", ") << (values.empty() ? "}" : " }") << "  "
              << e.location.ToString() << "\n";
  }
  std::cout << "\nroutes:\n";
  if (m.routes.empty()) std::cout << "  (none)\n";
  for (const jit::RouteInfo& r : m.routes) {
    std::vector<std::string> uses;
    for (const auto& u : r.uses) uses.push_back(u.ToString());
    std::cout << "  " << r.id << " \"" << r.name << "\"  used at " << absl::StrJoin(uses, ", ") << "\n";
  }
  std::cout << "\nimages:\n";
  for (const jit::ArchImage& img : p->images) {
    std::cout << absl::StrFormat("  %-11s %-5s %8d bytes  %s\n", img.arch,
                                 img.kind == jit::ImageKind::kCubin ? "cubin" : "ptx", img.bytes.size(),
                                 Resources(img.resources));
  }
  if (!p->warnings.empty()) {
    std::cout << "\nwarnings of the build:\n";
    for (const jit::Diagnostic& d : p->warnings) std::cout << "  " << d.ToString() << "\n";
  }
  return kOk;
}

int Header(const Args& args) {
  if (args.output.empty()) return Usage("header needs -o APP.h");
  int code = kOk;
  absl::StatusOr<jit::Package> p = LoadPackageArg(args, &code);
  if (!p.ok()) return code;
  std::string guard = "RK_GENERATED_";
  for (char c : args.output) guard.push_back(std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(c)) : '_');
  guard += "_";
  absl::StatusOr<std::string> text = GenerateHostHeader(*p, guard, args.inputs[0]);
  if (!text.ok()) {
    std::cerr << "actorc: " << text.status().message() << "\n";
    return kUserError;
  }
  std::ofstream out(args.output, std::ios::binary | std::ios::trunc);
  out << *text;
  if (!out.flush()) {
    std::cerr << "actorc: cannot write '" << args.output << "'\n";
    return kUsageError;
  }
  std::cout << "wrote " << args.output << "\n";
  return kOk;
}

int Run(const Args& args) {
  if (args.inputs.empty()) return Usage("run needs fragment files or a package");
  if (args.script.empty()) return Usage("run needs --script S.jsonl");
  // Everything that needs no GPU first: the program and the script.
  jit::Package package;
  int code = kOk;
  if (args.inputs.size() == 1 && IsPackagePath(args.inputs[0])) {
    absl::StatusOr<jit::Package> p = LoadPackageArg(args, &code);
    if (!p.ok()) return code;
    package = *std::move(p);
  } else {
    absl::StatusOr<jit::BuildResult> r = Build(args, &code);
    if (!r.ok()) return code;
    package = std::move(r->package);
  }
  absl::StatusOr<std::string> text = ReadFile(args.script);
  if (!text.ok()) {
    std::cerr << "actorc: " << text.status().message() << "\n";
    return kUsageError;
  }
  absl::StatusOr<Script> script = ParseScript(*text, args.script, package.model);
  if (!script.ok()) {
    std::cerr << "actorc: " << script.status().message() << "\n";
    return kUserError;
  }
  // Now the GPU.
  RuntimeOptions ro;
  ro.device = args.device;
  ro.use_cache = !args.no_cache;
  absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(ro);
  if (!runtime.ok()) {
    std::cerr << "actorc: cannot run on a GPU: " << runtime.status().message() << "\n"
              << "actorc: the program was built and the script checked (" << script->commands.size()
              << " command(s)); running it needs an NVIDIA GPU with a CUDA driver.\n";
    return kUsageError;
  }
  absl::StatusOr<Program> program = internal::ProgramAccess::Load(**runtime, std::move(package));
  if (!program.ok()) {
    std::cerr << "actorc: " << program.status().message() << "\n";
    return ExitCodeFor(program.status());
  }
  absl::StatusOr<std::unique_ptr<System>> system = (*runtime)->Start(*program, script->options);
  if (!system.ok()) {
    std::cerr << "actorc: cannot start the system: " << system.status().message() << "\n";
    return kUsageError;
  }
  if (!args.trace.empty()) {
    if (absl::Status t = (*system)->StartTrace(args.trace); !t.ok()) {
      std::cerr << "actorc: " << t.message() << "\n";
      (void)(*system)->Stop();
      return t.code() == absl::StatusCode::kFailedPrecondition ? kUserError : kUsageError;
    }
  }
  RunScriptOptions run_options;
  run_options.stats_every = absl::Milliseconds(args.stats_every_ms);
  absl::Status s = RunScript(*script, args.script, internal::ProgramAccess::Package(*program).model, **system, std::cout,
                             run_options);
  std::cout.flush();
  if (!args.trace.empty()) {
    std::cerr << "actorc: timeline written to " << args.trace << " (open it in ui.perfetto.dev)\n";
  }
  if (!s.ok()) {
    std::cerr << "actorc: " << s.message() << "\n";
    return s.code() == absl::StatusCode::kAborted || s.code() == absl::StatusCode::kFailedPrecondition ? kUsageError
                                                                                                       : kUserError;
  }
  return kOk;
}

}  // namespace
}  // namespace rk::tools

int main(int argc, char** argv) {
  using namespace rk::tools;
  Args args;
  const int early = ParseArgs(argc, argv, &args);
  if (early >= 0) return early;
  if (args.stats_every_ms != 0 && args.command != "run") return Usage("--stats-every is an option of run");
  if (args.command == "check") return Check(args);
  if (args.command == "build") return BuildCommand(args);
  if (args.command == "inspect") return Inspect(args);
  if (args.command == "header") return Header(args);
  if (args.command == "run") return Run(args);
  return Usage("unknown command '" + args.command + "'");
}
