// Copyright 2026 The RingKernel Authors.
//
// rk_fuzz_package_seeds OUT_DIR FRAGMENT...: writes package_fuzzer's
// generated seeds. For each fragment, the front-end's model in a small valid
// package (images are stubs of a few bytes: an sm_89 and an sm_90 "cubin"
// and compute_90 PTX), as a whole file, NAME.rkpkg, and as its manifest's
// text alone, NAME.manifest.json, which package_fuzzer wraps in a container
// itself. Generated at build time so that they always match this build's
// format and device ABI; a few bytes to a few KB each.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "jit/frontend.h"
#include "jit/package.h"
#include "ringkernel/device/system_layout.h"

namespace {

bool Write(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) std::cerr << "rk_fuzz_package_seeds: cannot write " << path << "\n";
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: rk_fuzz_package_seeds OUT_DIR FRAGMENT...\n";
    return 2;
  }
  const std::filesystem::path out_dir = argv[1];
  std::filesystem::create_directories(out_dir);
  for (int i = 2; i < argc; ++i) {
    absl::StatusOr<std::vector<rk::jit::SourceFile>> fragments = rk::jit::ReadFragments({argv[i]});
    if (!fragments.ok()) {
      std::cerr << fragments.status() << "\n";
      return 1;
    }
    // Named as a user would name it, not by the build's absolute path.
    const std::string stem = std::filesystem::path(argv[i]).stem().string();
    (*fragments)[0].name = stem + ".cu";
    absl::StatusOr<rk::jit::HandlerModel> model = rk::jit::ParseFragments(*fragments, {}, nullptr);
    if (!model.ok()) {
      std::cerr << model.status() << "\n";
      return 1;
    }
    rk::jit::Package package;
    package.model = *std::move(model);
    package.toolchain = {.ringkernel = "0.1.0", .abi = rk::kAbiVersion, .nvrtc = "13.0", .libclang = "clang 16"};
    package.generated_source = "// generated source (stub)\n";
    package.images.push_back({.arch = "sm_89", .kind = rk::jit::ImageKind::kCubin, .bytes = "\x7f" "ELF sm_89 stub"});
    package.images.push_back({.arch = "sm_90", .kind = rk::jit::ImageKind::kCubin, .bytes = "\x7f" "ELF sm_90 stub"});
    package.images.push_back(
        {.arch = "compute_90", .kind = rk::jit::ImageKind::kPtx, .bytes = ".version 9.0\n.target sm_90\n"});
    // A build's warnings, so that mutations reach their schema too.
    rk::jit::Diagnostic unused;
    unused.severity = rk::jit::DiagnosticSeverity::kWarning;
    unused.location = {stem + ".cu", 3, 7};
    unused.message = "variable \"spare\" was declared but never referenced";
    rk::jit::Diagnostic spills;
    spills.severity = rk::jit::DiagnosticSeverity::kWarning;
    spills.message = "sm_90: the system kernel spills registers to local memory";
    rk::jit::Diagnostic note;
    note.severity = rk::jit::DiagnosticSeverity::kNote;
    note.location = {stem + ".cu", 2, 0};
    note.message = "declared here";
    package.warnings = {unused, spills, note};
    const std::string bytes = rk::jit::SerializePackage(package);
    // Section 0, the manifest: its offset and size are the first table entry's.
    uint64_t offset = 0;
    uint64_t size = 0;
    std::memcpy(&offset, bytes.data() + 32 + 8, 8);
    std::memcpy(&size, bytes.data() + 32 + 16, 8);
    if (!Write((out_dir / (stem + ".rkpkg")).string(), bytes) ||
        !Write((out_dir / (stem + ".manifest.json")).string(), bytes.substr(offset, size))) {
      return 1;
    }
  }
  return 0;
}
