// Copyright 2026 The RingKernel Authors.
//
// The .rkpkg container: exact round trips, deterministic bytes, and a clean
// error — never a crash — for every truncation and for corruption anywhere
// in the file. Also the image choice for a device and architecture parsing.
#include "jit/package.h"

#include <sys/stat.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ringkernel/device/system_layout.h"
#include "tests/test_support.h"
#include "xxhash.h"

namespace rk::jit {
namespace {

using ::rk::testing::StatusIs;
using ::testing::HasSubstr;
using json = nlohmann::json;

ArchImage Cubin(const std::string& arch, const std::string& body) {
  ArchImage image;
  image.arch = arch;
  image.kind = ImageKind::kCubin;
  image.bytes = std::string("\x7f" "ELF\x02\x01\x01", 7) + body + std::string("\0\x01\x02\xff", 4);
  image.resources = {32, 0, 0, 1024, 16, 8};
  image.log = "ptxas info    : Used 32 registers";
  return image;
}

ArchImage Ptx(const std::string& arch) {
  ArchImage image;
  image.arch = arch;
  image.kind = ImageKind::kPtx;
  image.bytes = ".version 9.0\n.target " + arch.substr(8) + "\n.entry rk_system_kernel() { ret; }\n";
  return image;
}

Package SmallPackage() {
  Package p;
  SourceFile src{"bank.cu", "struct RK_ACTOR Bank { long long cents[64]; };\n", true};
  p.model.sources = {src};
  RecordLayout deposit;
  deposit.name = "Deposit";
  deposit.tag = "struct";
  deposit.size = 16;
  deposit.alignment = 8;
  deposit.message_id = 1;
  deposit.location = {"bank.cu", 3, 8};
  FieldLayout account{"account", "int", FieldKind::kInt32, "", {}, 0, 4, 4};
  FieldLayout cents{"cents", "long long", FieldKind::kInt64, "", {}, 8, 8, 8};
  deposit.fields = {account, cents};
  p.model.records = {deposit};
  ActorInfo bank;
  bank.name = "Bank";
  bank.state_size = 512;
  bank.state_alignment = 8;
  bank.location = {"bank.cu", 1, 17};
  bank.handlers = {{"on", "Deposit", 1, HandlerKind::kThread, {"bank.cu", 4, 21}}};
  p.model.actors = {bank};
  p.model.routes = {{"audit", 0, {{"bank.cu", 5, 9}}}};
  p.options.defines = {"RK_TEST=1"};
  p.toolchain = {"0.1.0", kAbiVersion, "13.0", "Debian clang version 16.0.6"};
  p.images = {Cubin("sm_89", "eighty-nine"), Cubin("sm_90", "ninety"), Ptx("compute_90")};
  p.generated_source = "// generated\nextern \"C\" __global__ void rk_system_kernel() {}\n";
  Diagnostic unused;
  unused.severity = DiagnosticSeverity::kWarning;
  unused.location = {"bank.cu", 7, 9};
  unused.message = "variable \"spare\" was declared but never referenced";
  Diagnostic spills;
  spills.severity = DiagnosticSeverity::kWarning;
  spills.message = "sm_89: the system kernel spills registers to local memory";
  Diagnostic note;
  note.severity = DiagnosticSeverity::kNote;
  note.location = {"bank.cu", 2, 0};
  note.message = "declared here";
  p.warnings = {unused, spills, note};
  return p;
}

// Builds a container the way package.h documents it, from any manifest text
// and image bodies: an independent writer, so that the reader is tested on
// manifests SerializePackage would never produce.
std::string Container(const std::string& manifest, const std::vector<std::string>& images) {
  std::vector<std::string> bodies = {manifest};
  bodies.insert(bodies.end(), images.begin(), images.end());
  auto put32 = [](std::string* s, uint32_t v) { s->append(reinterpret_cast<const char*>(&v), 4); };
  auto put64 = [](std::string* s, uint64_t v) { s->append(reinterpret_cast<const char*>(&v), 8); };
  std::string table;
  uint64_t offset = 32 + 32 * bodies.size();
  for (size_t i = 0; i < bodies.size(); ++i) {
    put32(&table, i == 0 ? 1 : 2);
    put32(&table, 0);
    put64(&table, offset);
    put64(&table, bodies[i].size());
    put64(&table, XXH64(bodies[i].data(), bodies[i].size(), 0));
    offset += bodies[i].size();
  }
  std::string out("RKPKG\r\n\x1a", 8);
  put32(&out, 1);
  put32(&out, static_cast<uint32_t>(bodies.size()));
  put64(&out, offset);
  put64(&out, XXH64(table.data(), table.size(), 0));
  out += table;
  for (const std::string& b : bodies) out += b;
  return out;
}

// The manifest SerializePackage writes for `p`, as JSON to edit.
json ManifestOf(const Package& p) {
  const std::string bytes = SerializePackage(p);
  uint64_t offset, size;
  std::memcpy(&offset, bytes.data() + 32 + 8, 8);
  std::memcpy(&size, bytes.data() + 32 + 16, 8);
  return json::parse(bytes.substr(offset, size));
}

std::vector<std::string> ImageBytes(const Package& p) {
  std::vector<std::string> out;
  for (const ArchImage& i : p.images) out.push_back(i.bytes);
  return out;
}

TEST(PackageTest, RoundTripIsExactAndDeterministic) {
  const Package p = SmallPackage();
  const std::string bytes = SerializePackage(p);
  EXPECT_EQ(bytes.substr(0, 8), std::string("RKPKG\r\n\x1a", 8));
  absl::StatusOr<Package> back = ParsePackage(bytes, "bank.rkpkg");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, p);
  EXPECT_EQ(SerializePackage(p), bytes);      // same package, same bytes
  EXPECT_EQ(SerializePackage(*back), bytes);  // and after a round trip
  // The independent writer produces the same file from the same parts.
  EXPECT_EQ(Container(ManifestOf(p).dump(), ImageBytes(p)), bytes);
}

TEST(PackageTest, ManifestHoldsTheDocumentedParts) {
  const json m = ManifestOf(SmallPackage());
  EXPECT_EQ(m["format_version"], kPackageFormatVersion);
  EXPECT_EQ(m["toolchain"]["abi"], kAbiVersion);
  EXPECT_EQ(m["options"]["archs"], json::array({"sm_89", "sm_90"}));
  EXPECT_EQ(m["model"]["records"][0]["name"], "Deposit");
  EXPECT_EQ(m["images"].size(), 3u);
  EXPECT_EQ(m["images"][2]["kind"], "ptx");
  EXPECT_EQ(m["images"][0]["size"], SmallPackage().images[0].bytes.size());
  EXPECT_EQ(m["images"][0]["resources"]["registers"], 32);
  EXPECT_EQ(m["images"][2]["resources"]["registers"], -1);
  EXPECT_EQ(m["images"][1]["xxh64"].get<std::string>().size(), 16u);
  ASSERT_EQ(m["warnings"].size(), 3u);
  EXPECT_EQ(m["warnings"][0]["severity"], "warning");
  EXPECT_EQ(m["warnings"][0]["location"]["file"], "bank.cu");
  EXPECT_EQ(m["warnings"][0]["location"]["line"], 7);
  EXPECT_EQ(m["warnings"][0]["location"]["column"], 9);
  EXPECT_EQ(m["warnings"][1]["location"]["file"], "");
  EXPECT_EQ(m["warnings"][2]["severity"], "note");
}

// A package written before builds kept their warnings has no "warnings":
// it reads as one whose build warned of nothing.
TEST(PackageTest, AManifestWithoutWarningsReadsAsNone) {
  const Package p = SmallPackage();
  json m = ManifestOf(p);
  m.erase("warnings");
  absl::StatusOr<Package> back = ParsePackage(Container(m.dump(), ImageBytes(p)), "old.rkpkg");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->warnings.empty());
  Package expected = p;
  expected.warnings.clear();
  EXPECT_EQ(*back, expected);
}

TEST(PackageTest, EveryTruncationFailsCleanly) {
  const std::string bytes = SerializePackage(SmallPackage());
  const auto start = std::chrono::steady_clock::now();
  for (size_t len = 0; len < bytes.size(); ++len) {
    absl::StatusOr<Package> p = ParsePackage(std::string_view(bytes.data(), len), "t.rkpkg");
    ASSERT_FALSE(p.ok()) << "length " << len;
    ASSERT_TRUE(p.status().code() == absl::StatusCode::kDataLoss ||
                p.status().code() == absl::StatusCode::kInvalidArgument)
        << "length " << len << ": " << p.status();
    ASSERT_THAT(std::string(p.status().message()), HasSubstr("t.rkpkg: "));
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::cout << "parsed " << bytes.size() << " truncations in " << ms << " ms\n";
  EXPECT_THAT(ParsePackage(std::string_view(), "t.rkpkg"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("t.rkpkg: the file is empty")));
  EXPECT_THAT(ParsePackage(std::string_view(bytes.data(), 5), "t.rkpkg"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("shorter than the 32-byte header")));
  EXPECT_THAT(ParsePackage(std::string_view(bytes.data(), bytes.size() - 1), "t.rkpkg"),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr(absl::StrCat("truncated: the header says ", bytes.size(), " bytes but there are only ",
                                              bytes.size() - 1))));
}

TEST(PackageTest, EverySingleByteCorruptionIsDetected) {
  const std::string bytes = SerializePackage(SmallPackage());
  for (size_t at = 0; at < bytes.size(); ++at) {
    std::string bad = bytes;
    bad[at] = static_cast<char>(bad[at] ^ 0x5a);
    absl::StatusOr<Package> p = ParsePackage(bad, "c.rkpkg");
    ASSERT_FALSE(p.ok()) << "offset " << at;
    ASSERT_TRUE(p.status().code() == absl::StatusCode::kDataLoss ||
                p.status().code() == absl::StatusCode::kInvalidArgument ||
                p.status().code() == absl::StatusCode::kFailedPrecondition)
        << "offset " << at << ": " << p.status();
    ASSERT_THAT(std::string(p.status().message()), HasSubstr("c.rkpkg: "));
  }
  auto flip = [&bytes](size_t at) {
    std::string bad = bytes;
    bad[at] = static_cast<char>(bad[at] ^ 1);
    return ParsePackage(bad, "c.rkpkg");
  };
  uint64_t manifest_offset, image1_offset;
  std::memcpy(&manifest_offset, bytes.data() + 32 + 8, 8);
  std::memcpy(&image1_offset, bytes.data() + 32 + 2 * 32 + 8, 8);
  EXPECT_THAT(flip(3), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a RingKernel package")));
  EXPECT_THAT(flip(8), StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("format version 0")));
  EXPECT_THAT(flip(16), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("the header says")));
  EXPECT_THAT(flip(24), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("checksum mismatch in the section table")));
  EXPECT_THAT(flip(32 + 20), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("checksum mismatch in the section table")));
  EXPECT_THAT(flip(manifest_offset + 10),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("c.rkpkg: checksum mismatch in section 0 (manifest)")));
  EXPECT_THAT(flip(image1_offset + 2),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("c.rkpkg: checksum mismatch in section 2 (image 1)")));
  EXPECT_THAT(flip(bytes.size() - 1), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("checksum mismatch in section 3")));
}

TEST(PackageTest, RejectsForeignFiles) {
  EXPECT_THAT(ParsePackage(std::string("\x7f" "ELF\x02\x01\x01", 7) + std::string(64, '\0'), "a.out"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("a.out: not a RingKernel package")));
  EXPECT_THAT(ParsePackage("{\"json\": true}", "x.json"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a RingKernel package")));
}

TEST(PackageTest, RejectsFutureFormatVersion) {
  std::string bytes = SerializePackage(SmallPackage());
  const uint32_t future = kPackageFormatVersion + 1;
  std::memcpy(bytes.data() + 8, &future, 4);
  EXPECT_THAT(ParsePackage(bytes, "new.rkpkg"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("new.rkpkg: package format version 2 is not supported (this RingKernel reads "
                                 "version 1); rebuild the package with this actorc")));
}

TEST(PackageTest, RejectsAnotherAbi) {
  Package p = SmallPackage();
  p.toolchain.abi = kAbiVersion + 1;
  EXPECT_THAT(ParsePackage(SerializePackage(p), "old.rkpkg"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr(absl::StrCat("old.rkpkg: built for device ABI version ", kAbiVersion + 1,
                                              " (RingKernel 0.1.0), but this RingKernel uses ABI version ",
                                              kAbiVersion, ": rebuild the package with this actorc"))));
}

TEST(PackageTest, RejectsAnArchitectureListedTwice) {
  Package p = SmallPackage();
  p.images.push_back(Cubin("sm_90", "again"));
  EXPECT_THAT(ParsePackage(SerializePackage(p), "twice.rkpkg"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("twice.rkpkg: manifest.images[3].arch: 'sm_90' appears twice (also images[1])")));
}

TEST(PackageTest, RejectsBadContainerLayouts) {
  const Package p = SmallPackage();
  const std::string good = SerializePackage(p);
  // Trailing bytes: the total size no longer matches.
  EXPECT_THAT(ParsePackage(good + "x", "p"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("(trailing data)")));

  // Rewrites the table with `edit` applied and a valid table checksum, so
  // that the placement checks (not the checksum) must catch it.
  auto with_table = [&good](const std::function<void(std::string&)>& edit, uint32_t count = 4) {
    std::string bytes = good;
    std::memcpy(bytes.data() + 12, &count, 4);
    std::string table = bytes.substr(32, 32 * 4);
    edit(table);
    bytes.replace(32, table.size(), table);
    const uint64_t h = XXH64(bytes.data() + 32, 32 * size_t{count}, 0);
    std::memcpy(bytes.data() + 24, &h, 8);
    return ParsePackage(bytes, "p");
  };
  auto set64 = [](std::string& t, size_t at, uint64_t v) { std::memcpy(t.data() + at, &v, 8); };
  auto get64 = [](const std::string& t, size_t at) {
    uint64_t v;
    std::memcpy(&v, t.data() + at, 8);
    return v;
  };
  EXPECT_THAT(with_table([&](std::string& t) { set64(t, 32 + 8, get64(t, 32 + 8) - 4); }),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("section 1 (image 0) at offset")));
  EXPECT_THAT(with_table([&](std::string& t) { set64(t, 32 + 8, get64(t, 32 + 8) - 4); }),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("overlaps what precedes it")));
  EXPECT_THAT(with_table([&](std::string& t) {
                set64(t, 32 + 8, get64(t, 32 + 8) + 1);
                set64(t, 32 + 16, get64(t, 32 + 16) - 1);
              }),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("leaves a gap after offset")));
  EXPECT_THAT(with_table([&](std::string& t) { set64(t, 3 * 32 + 16, uint64_t{1} << 62); }),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("section 3 (image 2) (offset")));
  EXPECT_THAT(with_table([&](std::string& t) { set64(t, 3 * 32 + 16, uint64_t{1} << 62); }),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("lies outside the file")));
  EXPECT_THAT(with_table([&](std::string& t) { t[2 * 32] = 9; }),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("section 2 has unknown kind 9")));
  EXPECT_THAT(with_table([&](std::string& t) { t[2 * 32] = 1; }),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("the manifest must be the first section")));
  EXPECT_THAT(with_table([&](std::string& t) { t[4] = 1; }),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("non-zero reserved field")));
  // The last image one byte short: its last byte belongs to no section.
  EXPECT_THAT(with_table([&](std::string& t) { set64(t, 3 * 32 + 16, get64(t, 3 * 32 + 16) - 1); }),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr(absl::StrCat("the sections end at offset ", good.size() - 1, " but the file has ",
                                              good.size(), " bytes"))));
  // A table of three entries: the manifest no longer starts where the table
  // ends.
  EXPECT_THAT(with_table([](std::string&) {}, 3),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("section 0 (manifest) at offset 160 leaves a gap after offset 128")));
  // A section count far past the file.
  std::string huge = good;
  const uint32_t count = 1u << 30;
  std::memcpy(huge.data() + 12, &count, 4);
  EXPECT_THAT(ParsePackage(huge, "p"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("section table (1073741824 entries) extends past")));
}

TEST(PackageTest, RejectsManifestsThatAreNotJsonOrNotTheSchema) {
  const Package p = SmallPackage();
  const std::vector<std::string> images = ImageBytes(p);
  EXPECT_THAT(ParsePackage(Container("{\"format_version\": 1,", images), "m.rkpkg"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("m.rkpkg: the manifest is not valid JSON")));
  EXPECT_THAT(ParsePackage(Container("[1, 2]", images), "m.rkpkg"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("the manifest is not a JSON object")));

  auto with = [&](const std::function<void(json&)>& edit, std::vector<std::string> imgs = {}) {
    json m = ManifestOf(p);
    edit(m);
    return ParsePackage(Container(m.dump(), imgs.empty() ? images : imgs), "m.rkpkg");
  };
  EXPECT_THAT(with([](json& m) { m["model"]["records"][0]["fields"][1]["offset"] = 12; }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("m.rkpkg: manifest.model.records[0].fields[1].offset: field 'cents' at offset 12")));
  EXPECT_THAT(with([](json& m) { m.erase("generated_source"); }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("manifest.generated_source: missing")));
  EXPECT_THAT(with([](json& m) { m["format_version"] = 7; }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("manifest.format_version: 7 does not match the header's version 1")));
  EXPECT_THAT(with([](json& m) { m["options"]["archs"][1] = "gfx90a"; }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("manifest.options.archs[1]: 'gfx90a' is not an architecture")));
  EXPECT_THAT(with([](json& m) { m["options"]["ptx"] = "yes"; }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("manifest.options.ptx: expected true or false, got string")));
  EXPECT_THAT(with([](json& m) { m["toolchain"].erase("nvrtc"); }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("manifest.toolchain.nvrtc: missing")));
  EXPECT_THAT(with([](json& m) { m["images"][0]["resources"]["registers"] = -2; }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("manifest.images[0].resources.registers: expected -1 or a 32-bit count, got -2")));
  EXPECT_THAT(with([](json& m) { m["images"][1]["kind"] = "fatbin"; }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("manifest.images[1].kind: expected \"cubin\" or \"ptx\", got \"fatbin\"")));
  EXPECT_THAT(with([](json& m) { m["images"][2]["arch"] = "sm_90"; }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("manifest.images[2].arch: 'sm_90' is not an architecture for a ptx image")));
  EXPECT_THAT(with([](json& m) { m["warnings"] = "none"; }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("m.rkpkg: manifest.warnings: expected an array, got string")));
  // A build with errors makes no package, so a listed error is not one's.
  EXPECT_THAT(with([](json& m) { m["warnings"][0]["severity"] = "error"; }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("manifest.warnings[0].severity: expected \"warning\" or \"note\", got \"error\"")));
  EXPECT_THAT(with([](json& m) { m["warnings"][2]["location"]["line"] = -1; }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("manifest.warnings[2].location.line: must not be negative, got -1")));
  EXPECT_THAT(with([](json& m) { m["warnings"][1].erase("message"); }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("manifest.warnings[1].message: missing")));
}

TEST(PackageTest, RejectsImagesMissingExtraOrNotMatchingTheirMetadata) {
  const Package p = SmallPackage();
  std::vector<std::string> images = ImageBytes(p);
  const json m = ManifestOf(p);
  // One image section fewer than the manifest lists, and one more.
  EXPECT_THAT(ParsePackage(Container(m.dump(), {images[0], images[1]}), "i.rkpkg"),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("i.rkpkg: the manifest lists 3 images but the file holds 2 image sections")));
  EXPECT_THAT(ParsePackage(Container(m.dump(), {images[0], images[1], images[2], images[2]}), "i.rkpkg"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("the manifest lists 3 images but the file holds 4")));
  // Image 1's section replaced by other (checksummed) bytes.
  std::vector<std::string> swapped = images;
  swapped[1] = images[0];
  EXPECT_THAT(ParsePackage(Container(m.dump(), swapped), "i.rkpkg"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("manifest.images[1].size: the manifest says")));
  swapped[1] = images[1];
  swapped[1][5] ^= 1;
  EXPECT_THAT(ParsePackage(Container(m.dump(), swapped), "i.rkpkg"),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("manifest.images[1].xxh64: " + m["images"][1]["xxh64"].get<std::string>() +
                                 " does not match the image section")));
  // A "cubin" that is not ELF, with metadata that matches it.
  Package not_elf = p;
  not_elf.images[0].bytes = "MZ not an ELF file";
  EXPECT_THAT(ParsePackage(SerializePackage(not_elf), "i.rkpkg"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("manifest.images[0]: the sm_89 cubin is not an ELF file")));
  Package no_images = p;
  no_images.images.clear();
  EXPECT_THAT(ParsePackage(SerializePackage(no_images), "i.rkpkg"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("i.rkpkg: the package holds no images")));
}

TEST(PackageTest, SelectImagePicksTheBestFit) {
  const Package p = SmallPackage();
  ASSERT_NE(SelectImage(p, 89), nullptr);
  EXPECT_EQ(SelectImage(p, 89)->arch, "sm_89");
  ASSERT_NE(SelectImage(p, 90), nullptr);
  EXPECT_EQ(SelectImage(p, 90)->arch, "sm_90");
  ASSERT_NE(SelectImage(p, 100), nullptr);
  EXPECT_EQ(SelectImage(p, 100)->arch, "compute_90");
  EXPECT_EQ(SelectImage(p, 100)->kind, ImageKind::kPtx);
  EXPECT_EQ(SelectImage(p, 80), nullptr);
  EXPECT_EQ(SelectImage(p, 86), nullptr);  // no cubin for it, and the PTX is newer than the device

  Package ptx_only = p;
  ptx_only.images = {Ptx("compute_89"), Ptx("compute_90"), Ptx("compute_75")};
  EXPECT_EQ(SelectImage(ptx_only, 120)->arch, "compute_90");  // the newest that fits
  EXPECT_EQ(SelectImage(ptx_only, 89)->arch, "compute_89");
  EXPECT_EQ(SelectImage(ptx_only, 80)->arch, "compute_75");
  EXPECT_EQ(SelectImage(ptx_only, 70), nullptr);
}

TEST(PackageTest, DescribeImages) {
  EXPECT_EQ(DescribeImages(SmallPackage()), "sm_89, sm_90, compute_90 (PTX)");
  EXPECT_EQ(DescribeImages(Package{}), "no images");
}

TEST(PackageTest, WriteAndReadFiles) {
  rk::testing::TempDir dir;
  const std::string path = dir.Join("bank.rkpkg");
  const Package p = SmallPackage();
  ASSERT_TRUE(WritePackage(p, path).ok());
  absl::StatusOr<Package> back = ReadPackage(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, p);
  EXPECT_EQ(rk::testing::ReadFileOrDie(path), SerializePackage(p));
  // Overwriting works and leaves no temporary files behind.
  ASSERT_TRUE(WritePackage(p, path).ok());
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "bank.rkpkg");
  }
  EXPECT_EQ(files, 1u);

  // Reading names the file in errors.
  EXPECT_THAT(ReadPackage(dir.Join("missing.rkpkg")),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(dir.Join("missing.rkpkg"))));
  rk::testing::WriteFileOrDie(dir.Join("cut.rkpkg"), SerializePackage(p).substr(0, 100));
  EXPECT_THAT(ReadPackage(dir.Join("cut.rkpkg")),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr(dir.Join("cut.rkpkg") + ": truncated")));
  EXPECT_THAT(ReadPackage(dir.path()), StatusIs(absl::StatusCode::kFailedPrecondition,
                                                HasSubstr(dir.path() + ": not a regular file")));
}

TEST(PackageTest, WriteToAnUnwritablePathNamesIt) {
  rk::testing::TempDir dir;
  // A path below a regular file can't be created, even by root.
  rk::testing::WriteFileOrDie(dir.Join("plain"), "x");
  const std::string path = dir.Join("plain/app.rkpkg");
  EXPECT_THAT(WritePackage(SmallPackage(), path),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("cannot write package " + path), HasSubstr("Not a directory"))));
}

TEST(ArchTest, ParseArch) {
  EXPECT_EQ(ParseArch("sm_89").value(), 89);
  EXPECT_EQ(ParseArch("sm_90").value(), 90);
  EXPECT_EQ(ParseArch("compute_90").value(), 90);
  EXPECT_EQ(ParseArch("compute_89").value(), 89);
  EXPECT_EQ(ParseArch("89").value(), 89);
  EXPECT_EQ(ParseArch("90").value(), 90);
  EXPECT_THAT(ParseArch("sm_42"), StatusIs(absl::StatusCode::kInvalidArgument,
                                           ::testing::Eq("unknown architecture 'sm_42': supported are sm_89, sm_90")));
  for (const char* bad : {"sm_100", "sm_80", "", "sm_", "sm_9x", "sm_90a", "compute_", "9", "sm_0090", "gfx90a"}) {
    EXPECT_THAT(ParseArch(bad), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr(absl::StrCat("unknown architecture '", bad, "'"))));
  }
  EXPECT_EQ(SupportedArchs(), (std::vector<std::string>{"sm_89", "sm_90"}));
}

TEST(ArchTest, ImageCapability) {
  EXPECT_EQ(ArchImage{.arch = "sm_89"}.capability(), 89);
  EXPECT_EQ(ArchImage{.arch = "compute_90"}.capability(), 90);
  EXPECT_EQ(ArchImage{.arch = "sm_100"}.capability(), 100);  // not built here, but still ordered
  EXPECT_EQ(ArchImage{.arch = "sm_9x"}.capability(), 0);
  EXPECT_EQ(ArchImage{.arch = ""}.capability(), 0);
}

TEST(ArchTest, ResourceUsageJson) {
  const ResourceUsage r{40, 8, 4, 2048, 32, 64};
  EXPECT_EQ(ResourceUsageFromJson(ResourceUsageToJson(r)), r);
  EXPECT_EQ(ResourceUsageToJson(r)["shared_bytes"], 2048);
  EXPECT_FALSE(ResourceUsageFromJson(ResourceUsageToJson(ResourceUsage{})).known());
  // Lenient: odd values read as unknown.
  const ResourceUsage odd = ResourceUsageFromJson(json{{"registers", "many"}, {"spill_store_bytes", 1ull << 40}});
  EXPECT_EQ(odd.registers, -1);
  EXPECT_EQ(odd.spill_store_bytes, -1);
  EXPECT_EQ(odd.shared_bytes, -1);
}

TEST(BuildOptionsTest, JsonRoundTripAndErrors) {
  BuildOptions o;
  o.archs = {"sm_90"};
  o.ptx = false;
  o.max_payload = 256;
  o.line_info = false;
  o.defines = {"A=1", "B"};
  o.include_dirs = {"/opt/inc"};
  absl::StatusOr<BuildOptions> back = BuildOptions::FromJson(json::parse(o.ToJson().dump()));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, o);
  json j = o.ToJson();
  j["max_payload"] = 0;
  EXPECT_THAT(BuildOptions::FromJson(j),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("options.max_payload: must be at least 1")));
  j = o.ToJson();
  j["defines"] = json::array({"A", 3});
  EXPECT_THAT(BuildOptions::FromJson(j),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("options.defines[1]: expected a string")));

  Toolchain t{"0.1.0", 1, "13.0", "clang 16"};
  absl::StatusOr<Toolchain> t2 = Toolchain::FromJson(t.ToJson());
  ASSERT_TRUE(t2.ok()) << t2.status();
  EXPECT_EQ(*t2, t);
  EXPECT_THAT(Toolchain::FromJson(json{{"ringkernel", "0.1.0"}, {"abi", -1}, {"nvrtc", ""}, {"libclang", ""}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("toolchain.abi: expected a non-negative integer")));
}

TEST(PackageTest, NonUtf8TextIsReplacedNotFatal) {
  Package p = SmallPackage();
  p.generated_source = "// caf\xe9\n";
  absl::StatusOr<Package> back = ParsePackage(SerializePackage(p), "u.rkpkg");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->generated_source, "// caf\xef\xbf\xbd\n");  // U+FFFD
}

}  // namespace
}  // namespace rk::jit
