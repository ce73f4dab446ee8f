// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/nightly/report_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

namespace libpkg::nightly {

namespace fs = std::filesystem;

namespace {

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A relative URL: path segments percent-encoded (a '#', '?' or '%' in a
// job name must not cut the link).
std::string url_of(const fs::path& relative) {
  std::string out;
  for (unsigned char c : relative.generic_string()) {
    if (std::isalnum(c) || std::string_view("-._~/+").find(
                               static_cast<char>(c)) != std::string_view::npos)
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

std::string link_to(const std::optional<fs::path>& log,
                    const fs::path& out_dir) {
  if (!log) return "";
  return url_of(
      log->lexically_normal().lexically_relative(out_dir.lexically_normal()));
}

std::string human_size(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000 && u < 4) {
    bytes /= 1000;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes)
                : fmt::format("{:.2f} {}", bytes, units[u]);
}

std::string human_duration(double seconds) {
  if (seconds < 120) return fmt::format("{:.0f} s", seconds);
  if (seconds < 7200) return fmt::format("{:.1f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

std::string status_class(const std::string& status) {
  if (status == "SUCCEEDED") return "ok";
  if (status == "FAILED") return "fail";
  if (status == "CANCELLED") return "cancel";
  return "other";
}

const char* kStyle = R"css(
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em;color:#1f2328}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse}th,td{padding:2px 4px;text-align:left}
table.grid td,table.grid th.date{border:1px solid #fff;width:2.2em;text-align:center;font-size:11px}
table.grid th.config{white-space:nowrap;font-weight:normal}
table.grid th.date{writing-mode:vertical-rl;transform:rotate(180deg);height:5.5em}
td.cell a{color:#fff;text-decoration:none;display:block}
td.ok{background:#1a7f37}td.fail{background:#cf222e}td.cancel{background:#8c959f}
td.other{background:#bf8700}td.none{background:#f6f8fa}
span.key{display:inline-block;padding:0 .6em;color:#fff;margin-right:.5em}
span.ok{background:#1a7f37}span.fail{background:#cf222e}span.cancel{background:#8c959f}
span.other{background:#bf8700}
table.list td,table.list th{border-bottom:1px solid #d0d7de;padding:3px 8px}
figure{display:inline-block;margin:0 1.5em 1.5em 0}figcaption{font-weight:600}
svg text{font-size:10px;fill:#57606a}svg polyline{fill:none;stroke:#0969da;stroke-width:1.5}
svg circle{fill:#0969da}svg circle.today{fill:#cf222e}svg line{stroke:#d0d7de}
)css";

// A line chart over the report's nights: x is the night's position in
// `dates` (a missing night leaves a gap in x), y spans the values.
std::string chart(const ReportSeries& series,
                  const std::vector<std::string>& dates, const char* kind,
                  const std::string& today, std::string (*label)(double)) {
  constexpr double W = 560, H = 170, L = 70, R = 10, T = 10, B = 30;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < dates.size(); ++i) index[dates[i]] = i;
  double lo = series.points.front().value, hi = lo;
  for (const auto& p : series.points) {
    lo = std::min(lo, p.value);
    hi = std::max(hi, p.value);
  }
  if (hi == lo) {
    hi += std::max(1.0, hi * 0.05);
    lo = std::max(0.0, lo - std::max(1.0, lo * 0.05));
  }
  const double span =
      dates.size() > 1 ? static_cast<double>(dates.size() - 1) : 1.0;
  auto x = [&](const std::string& date) {
    auto it = index.find(date);
    double i = it == index.end() ? 0 : static_cast<double>(it->second);
    return L + (W - L - R) * i / span;
  };
  auto y = [&](double v) { return T + (H - T - B) * (hi - v) / (hi - lo); };
  std::string points, circles;
  for (const auto& p : series.points) {
    points += fmt::format("{:.1f},{:.1f} ", x(p.date), y(p.value));
    circles += fmt::format(
        "<circle class=\"point{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" "
        "data-date=\"{}\" data-value=\"{}\"><title>{}: {}</title></circle>",
        p.date == today ? " today" : "", x(p.date), y(p.value), p.date, p.value,
        p.date, escape(label(p.value)));
  }
  return fmt::format(
      "<figure><figcaption>{} — {}</figcaption>"
      "<svg class=\"{}\" data-config=\"{}\" data-name=\"{}\" width=\"{}\" "
      "height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{} of {} "
      "{}\">"
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>"
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>"
      "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>"
      "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>"
      "<text x=\"{}\" y=\"{}\">{}</text>"
      "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>"
      "<polyline points=\"{}\"/>{}</svg></figure>\n",
      escape(series.config), escape(series.name), kind, escape(series.config),
      escape(series.name), W, H, W, H, kind, escape(series.config),
      escape(series.name), L, H - B, W - R, H - B, L, T, L, H - B, L - 4, T + 8,
      escape(label(hi)), L - 4, H - B, escape(label(lo)), L, H - B + 16,
      dates.empty() ? "" : dates.front(), W - R, H - B + 16,
      dates.empty() ? "" : dates.back(), points, circles);
}

std::string size_label(double v) { return human_size(v); }
std::string duration_label(double v) { return human_duration(v); }

void grid(const ReportData& data, const fs::path& out_dir, std::string& out) {
  std::map<std::pair<std::string, std::string>, const ReportCell*> at;
  for (const auto& c : data.cells) at[{c.config, c.date}] = &c;
  out += "<table class=\"grid\"><thead><tr><th>configuration</th>";
  for (const auto& d : data.dates)
    out +=
        fmt::format("<th class=\"date\" title=\"{}\">{}</th>", d, d.substr(5));
  out += "</tr></thead><tbody>\n";
  for (const auto& config : data.configs) {
    out += fmt::format("<tr><th class=\"config\">{}</th>", escape(config));
    for (const auto& d : data.dates) {
      auto it = at.find({config, d});
      if (it == at.end()) {
        out += "<td class=\"none\"></td>";
        continue;
      }
      const ReportCell& c = *it->second;
      const std::string cls = status_class(c.status);
      // The mark says the status without colour; the failure is named.
      std::string mark = cls == "ok" ? "✓" : cls == "fail" ? "✗" : "–";
      std::string title = fmt::format(
          "{} {}: {}{}{}", c.job, c.date, c.status,
          c.failure.empty() ? "" : " at " + c.failure,
          c.duration_s ? " (" + human_duration(*c.duration_s) + ")" : "");
      std::string body =
          c.failure.empty()
              ? mark
              : fmt::format("{}<br><small>{}</small>", mark,
                            escape(c.failure.substr(0, c.failure.find(':'))));
      std::string href = link_to(c.log, out_dir);
      out += fmt::format(
          "<td class=\"cell {}\" data-status=\"{}\" data-config=\"{}\" "
          "data-date=\"{}\" title=\"{}\">{}</td>",
          cls, escape(c.status), escape(c.config), c.date, escape(title),
          href.empty()
              ? body
              : fmt::format("<a href=\"{}\">{}</a>", escape(href), body));
    }
    out += "</tr>\n";
  }
  out += "</tbody></table>\n<p>";
  for (const char* s : {"SUCCEEDED", "FAILED", "CANCELLED"})
    out += fmt::format("<span class=\"key {}\">{}</span>", status_class(s), s);
  out +=
      "a cell links to the job's log and names the failing step (and "
      "checks).</p>\n";
}

void regressions(const ReportData& data, const fs::path& out_dir,
                 std::string& out) {
  if (data.size_regressions.empty() && data.status_regressions.empty()) {
    out += "<p id=\"no-regressions\">None.</p>\n";
    return;
  }
  if (!data.status_regressions.empty()) {
    out +=
        "<table class=\"list status-regressions\"><tr><th>configuration"
        "</th><th>before</th><th>now</th><th>failure</th></tr>\n";
    for (const auto& r : data.status_regressions) {
      std::string href = link_to(r.log, out_dir);
      out += fmt::format(
          "<tr><td>{}</td><td>{} on {}</td><td>{}</td><td>{}</td></tr>\n",
          escape(r.config), r.old_status, r.old_date,
          href.empty()
              ? r.status
              : fmt::format("<a href=\"{}\">{}</a>", escape(href), r.status),
          escape(r.failure));
    }
    out += "</table>\n";
  }
  if (!data.size_regressions.empty()) {
    out += fmt::format(
        "<table class=\"list size-regressions\"><tr><th>configuration</th>"
        "<th>package</th><th>{} → {}</th><th>growth (threshold {:.1f}%)</th>"
        "<th>members that grew</th></tr>\n",
        "before", "now", data.size_threshold * 100);
    for (const auto& r : data.size_regressions) {
      std::string members;
      for (const auto& m : r.members)
        members += fmt::format("{} {} → {}<br>", escape(m.name),
                               human_size(static_cast<double>(m.old_size)),
                               human_size(static_cast<double>(m.new_size)));
      out += fmt::format(
          "<tr><td>{}</td><td>{}</td><td title=\"{} → {}\">{} ({}) → {} "
          "({})</td><td>{:+.1f}%</td><td>{}</td></tr>\n",
          escape(r.config), escape(r.package), escape(r.old_artifact),
          escape(r.new_artifact), human_size(static_cast<double>(r.old_size)),
          r.old_date, human_size(static_cast<double>(r.new_size)), r.new_date,
          r.growth * 100, members.empty() ? "—" : members);
    }
    out += "</table>\n";
  }
}

}  // namespace

std::string report_html(const ReportData& data, const fs::path& out_dir) {
  std::string out;
  out.reserve(4096 + data.cells.size() * 300);
  out += fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width\">"
      "<title>Nightly report {}</title><style>{}</style></head><body>\n"
      "<h1>Nightly report {}</h1>\n",
      escape(data.today), kStyle, escape(data.today));
  std::map<std::string, int> today;
  for (const auto& c : data.cells)
    if (c.date == data.today) ++today[c.status];
  out += fmt::format(
      "<p class=\"summary\">{} configurations over {} nights ({} to {}). "
      "Latest night: {} succeeded, {} failed, {} cancelled.</p>\n",
      data.configs.size(), data.dates.size(),
      data.dates.empty() ? "" : data.dates.front(),
      data.dates.empty() ? "" : data.dates.back(), today["SUCCEEDED"],
      today["FAILED"], today["CANCELLED"]);
  out += "<h2 id=\"regressions\">Today's regressions</h2>\n";
  regressions(data, out_dir, out);
  out += "<h2 id=\"grid\">Status</h2>\n";
  grid(data, out_dir, out);
  out += "<h2 id=\"sizes\">Sizes</h2>\n";
  for (const auto& s : data.sizes)
    out += chart(s, data.dates, "size-chart", data.today, size_label);
  out += "<h2 id=\"durations\">Durations</h2>\n";
  for (const auto& s : data.durations)
    out += chart(s, data.dates, "duration-chart", data.today, duration_label);
  out += "</body></html>\n";
  return out;
}

}  // namespace libpkg::nightly
