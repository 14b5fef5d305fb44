// Copyright 2026 The RingKernel Authors.
//
// SystemStats::ToText and ToJson: a live snapshot for a terminal and for
// tools. (ActorStats::ToString, StopReport::ToString and SystemStats::Find
// are in system.cc, beside the code that fills them.)
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "ringkernel/system.h"

namespace rk {
namespace {

std::string_view StateName(ActorState state) {
  switch (state) {
    case ActorState::kFree: return "free";
    case ActorState::kRunning: return "running";
    case ActorState::kFailed: return "failed";
  }
  return "unknown";
}

// A name as one terminal line: control characters (a newline in an actor's
// name would break its row) as \xNN; everything else, UTF-8 included, as is.
std::string Printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      absl::StrAppend(&out, absl::StrFormat("\\x%02x", u));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// Columns a string takes in a terminal, near enough: one per UTF-8 code
// point (continuation bytes take none).
size_t Width(std::string_view s) {
  size_t w = 0;
  for (char c : s) w += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return w;
}

struct Column {
  std::string header;
  bool right = false;  // numbers: aligned right
};

// Rows under their headers, each column as wide as its widest cell, two
// spaces apart, no trailing spaces.
void AppendTable(const std::vector<Column>& columns, const std::vector<std::vector<std::string>>& rows,
                 std::string* out) {
  std::vector<size_t> widths;
  for (const Column& c : columns) widths.push_back(Width(c.header));
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], Width(row[i]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i != 0) l.append("  ");
      const std::string pad(widths[i] - Width(cells[i]), ' ');
      if (columns[i].right) {
        absl::StrAppend(&l, pad, cells[i]);
      } else {
        absl::StrAppend(&l, cells[i], pad);
      }
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    absl::StrAppend(out, "\n", l);
  };
  std::vector<std::string> headers;
  for (const Column& c : columns) headers.push_back(c.header);
  line(headers);
  for (const auto& row : rows) line(row);
}

// Nanoseconds as microseconds with three decimals ("0.352").
std::string Micros(uint64_t ns) { return absl::StrFormat("%.3f", static_cast<double>(ns) / 1000.0); }

}  // namespace

std::string SystemStats::ToText(bool with_workers) const {
  std::string out = absl::StrCat("phase ", std::string(KernelPhaseName(phase)));
  const std::pair<const char*, uint64_t> counters[] = {
      {"host sent", host_sent},
      {"host ring full", host_ring_full},
      {"ingress delivered", ingress_delivered},
      {"ingress dead-lettered", ingress_dead},
      {"outbound full", outbound_full},
      {"host holes", host_holes},
      {"channel bytes", channel_bytes},
      {"received by host", received_by_host},
      {"dead letters dropped", dead_letters_dropped},
      {"failures dropped", failures_dropped},
      {"late replies", late_replies},
  };
  std::vector<std::string> nonzero;
  for (const auto& [what, n] : counters) {
    if (n != 0) nonzero.push_back(absl::StrCat(what, " ", n));
  }
  if (!nonzero.empty()) absl::StrAppend(&out, "; ", absl::StrJoin(nonzero, ", "));
  if (actors.empty()) {
    absl::StrAppend(&out, "\n(no actors)");
  } else {
    // Handler times only for a program that keeps them.
    const bool timed = std::any_of(actors.begin(), actors.end(), [](const ActorStats& a) { return a.timed; });
    std::vector<std::vector<std::string>> rows;
    for (const ActorStats& a : actors) {
      rows.push_back({Printable(a.name), Printable(a.type),
                      a.state == ActorState::kFailed ? absl::StrCat("failed(", a.fail_code, ")")
                                                     : std::string(StateName(a.state)),
                      absl::StrCat(a.received), absl::StrCat(a.handled), absl::StrCat(a.depth),
                      absl::StrCat(a.dead_lettered), absl::StrCat(a.sent), absl::StrCat(a.send_full)});
      if (timed) {
        const bool any = a.timed && a.timed_calls != 0;
        rows.back().push_back(any ? Micros(a.handler_p50_ns) : "-");
        rows.back().push_back(any ? Micros(a.handler_p99_ns) : "-");
      }
    }
    std::vector<Column> columns = {{"actor"},
                                   {"type"},
                                   {"state"},
                                   {"received", true},
                                   {"handled", true},
                                   {"depth", true},
                                   {"dead-lettered", true},
                                   {"sent", true},
                                   {"kFull", true}};
    if (timed) {
      columns.push_back({"p50 µs", true});
      columns.push_back({"p99 µs", true});
    }
    AppendTable(columns, rows, &out);
  }
  if (with_workers && !workers.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const WorkerStatsView& w : workers) {
      rows.push_back({absl::StrCat(w.worker), w.exited ? "exited" : "running", absl::StrCat(w.heartbeat),
                      absl::StrCat(w.handled)});
    }
    AppendTable({{"worker", true}, {"state"}, {"heartbeat", true}, {"handled", true}}, rows, &out);
  }
  return out;
}

std::string SystemStats::ToJson() const {
  using nlohmann::json;
  json j_actors = json::array();
  for (const ActorStats& a : actors) {
    j_actors.push_back({{"id", a.id.value},
                        {"name", a.name},
                        {"type", a.type},
                        {"state", StateName(a.state)},
                        {"fail_code", a.fail_code},
                        {"received", a.received},
                        {"handled", a.handled},
                        {"dead_lettered", a.dead_lettered},
                        {"depth", a.depth},
                        {"sent", a.sent},
                        {"send_full", a.send_full},
                        {"send_no_actor", a.send_no_actor},
                        {"send_other", a.send_other},
                        {"rejected", a.rejected},
                        {"hlc", a.hlc}});
    // The handler times: null in a program that keeps none.
    json& j = j_actors.back();
    j["timed_calls"] = a.timed ? json(a.timed_calls) : json(nullptr);
    j["handler_p50_ns"] = a.timed && a.timed_calls != 0 ? json(a.handler_p50_ns) : json(nullptr);
    j["handler_p99_ns"] = a.timed && a.timed_calls != 0 ? json(a.handler_p99_ns) : json(nullptr);
  }
  json j_workers = json::array();
  for (const WorkerStatsView& w : workers) {
    j_workers.push_back(
        {{"worker", w.worker}, {"heartbeat", w.heartbeat}, {"handled", w.handled}, {"exited", w.exited}});
  }
  const json j = {{"phase", KernelPhaseName(phase)},
                  {"flush_epoch", flush_epoch},
                  {"host_sent", host_sent},
                  {"host_ring_full", host_ring_full},
                  {"ingress_delivered", ingress_delivered},
                  {"ingress_dead", ingress_dead},
                  {"outbound_full", outbound_full},
                  {"host_holes", host_holes},
                  {"channel_bytes", channel_bytes},
                  {"received_by_host", received_by_host},
                  {"dead_letters_dropped", dead_letters_dropped},
                  {"failures_dropped", failures_dropped},
                  {"late_replies", late_replies},
                  {"actors", std::move(j_actors)},
                  {"workers", std::move(j_workers)}};
  // dump() escapes quotes, backslashes and control characters, so the line
  // holds no raw newline; `replace` turns bytes that are not UTF-8 (an
  // actor's name is any string) into U+FFFD rather than throw.
  return j.dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

}  // namespace rk
