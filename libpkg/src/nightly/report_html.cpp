// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/nightly/report_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <condition_variable>
#include <exception>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "html.hpp"

namespace libpkg::nightly {

namespace fs = std::filesystem;
using detail::append_html_escaped;
using detail::html_escape;

namespace {

// A relative URL: path segments percent-encoded (a '#', '?' or '%' in a
// job name must not cut the link).
void append_url(std::string& out, std::string_view relative) {
  for (unsigned char c : relative) {
    if (std::isalnum(c) || std::string_view("-._~/+").find(
                               static_cast<char>(c)) != std::string_view::npos)
      out += static_cast<char>(c);
    else
      fmt::format_to(std::back_inserter(out), "%{:02X}", c);
  }
}

// Links from the page's directory to the logs. Logs are
// <root>/<night>/logs/<state>/<job>.log: the relative part of their
// directory is worked out once per directory (a few per night) and the
// file name appended, instead of normalising 10^5 paths.
class LogLinks {
 public:
  explicit LogLinks(const fs::path& out_dir)
      : out_dir_(out_dir.lexically_normal()) {}

  // Appends the URL of `log` relative to the page; false (nothing
  // appended) when there is none.
  bool append(std::string& out, const std::optional<std::string>& log) {
    if (!log) return false;
    const std::string& path = *log;
    const std::size_t slash = path.rfind('/');
    const std::string_view name =
        slash == std::string::npos ? std::string_view(path)
                                   : std::string_view(path).substr(slash + 1);
    if (slash == std::string::npos || name.empty() || name == "." ||
        name == "..") {
      std::string url = slow(path);
      out += url;
      return !url.empty();
    }
    dir_.assign(path, 0, slash);
    auto it = dirs_.find(dir_);
    if (it == dirs_.end()) {
      std::optional<std::string> prefix;
      fs::path rel =
          fs::path(dir_).lexically_normal().lexically_relative(out_dir_);
      if (rel == ".")
        prefix = "";
      else if (!rel.empty())  // empty: no relative way there (as slow())
        append_url(prefix.emplace(), rel.generic_string() + "/");
      it = dirs_.emplace(dir_, std::move(prefix)).first;
    }
    if (!it->second) return false;
    out += *it->second;
    append_url(out, name);
    return true;
  }

  // The URL of `log` relative to the page, "" when there is none.
  std::string operator()(const std::optional<std::string>& log) {
    std::string out;
    append(out, log);
    return out;
  }

 private:
  std::string slow(const std::string& log) const {
    std::string out;
    append_url(out, fs::path(log)
                        .lexically_normal()
                        .lexically_relative(out_dir_)
                        .generic_string());
    return out;
  }

  fs::path out_dir_;
  std::string dir_;  // the directory being looked up (its buffer reused)
  // Directory of logs → its URL relative to the page, with a '/' at the end.
  std::unordered_map<std::string, std::optional<std::string>> dirs_;
};

// `v` with `decimals` digits after the point, correctly rounded (as
// printf's %.Nf), appended without a temporary string.
void append_fixed(std::string& out, double v, int decimals) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed,
                         decimals);
  out.append(buf, r.ptr);
}

void append_human_size(std::string& out, double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000 && u < 4) {
    bytes /= 1000;
    ++u;
  }
  append_fixed(out, bytes, u == 0 ? 0 : 2);
  out += ' ';
  out += units[u];
}

void append_human_duration(std::string& out, double seconds) {
  if (seconds < 120) {
    append_fixed(out, seconds, 0);
    out += " s";
  } else if (seconds < 7200) {
    append_fixed(out, seconds / 60, 1);
    out += " min";
  } else {
    append_fixed(out, seconds / 3600, 1);
    out += " h";
  }
}

std::string human_size(double bytes) {
  std::string out;
  append_human_size(out, bytes);
  return out;
}

const char* status_class(std::string_view status) {
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

// One piece of the page, rendered on its own (pieces are rendered by
// several threads and written in order: render_in_order).
struct Piece {
  template <typename... Args>
  void format(fmt::format_string<Args...> f, Args&&... args) {
    fmt::format_to(std::back_inserter(out), f, std::forward<Args>(args)...);
  }
  void escaped(std::string_view s) { append_html_escaped(out, s); }

  std::string out;
};

// The x axis every chart shares: each night's position in `dates` (a
// missing night leaves a gap), its coordinate written once.
struct Axis {
  static constexpr double W = 560, H = 170, L = 70, R = 10, T = 10, B = 30;
  explicit Axis(const std::vector<std::string>& dates) {
    const double span =
        dates.size() > 1 ? static_cast<double>(dates.size() - 1) : 1.0;
    for (std::size_t i = 0; i < dates.size(); ++i) {
      index.try_emplace(dates[i], i);
      append_fixed(x.emplace_back(),
                   L + (W - L - R) * static_cast<double>(i) / span, 1);
    }
    if (x.empty()) append_fixed(x.emplace_back(), L, 1);
  }
  // The written x of `date` (a date outside the nights: the first).
  const std::string& x_of(const std::string& date) const {
    auto it = index.find(date);
    return x[it == index.end() ? 0 : it->second];
  }
  std::unordered_map<std::string_view, std::size_t> index;
  std::vector<std::string> x;
};

// A line chart over the report's nights: x from `axis`, y spans the values.
void chart(Piece& page, const ReportSeries& series,
           const std::vector<std::string>& dates, const Axis& axis,
           const char* kind, const std::string& today,
           void (*label)(std::string&, double)) {
  constexpr double W = Axis::W, H = Axis::H, L = Axis::L, R = Axis::R,
                   T = Axis::T, B = Axis::B;
  double lo = series.points.front().value, hi = lo;
  for (const auto& p : series.points) {
    lo = std::min(lo, p.value);
    hi = std::max(hi, p.value);
  }
  if (hi == lo) {
    hi += std::max(1.0, hi * 0.05);
    lo = std::max(0.0, lo - std::max(1.0, lo * 0.05));
  }
  auto y = [&](double v) { return T + (H - T - B) * (hi - v) / (hi - lo); };
  std::string& out = page.out;
  out += "<figure><figcaption>";
  page.escaped(series.config);
  out += " — ";
  page.escaped(series.name);
  page.format("</figcaption><svg class=\"{}\" data-config=\"", kind);
  page.escaped(series.config);
  out += "\" data-name=\"";
  page.escaped(series.name);
  page.format(
      "\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "aria-label=\"{} of ",
      W, H, W, H, kind);
  page.escaped(series.config);
  out += ' ';
  page.escaped(series.name);
  page.format(
      "\"><line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>"
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>"
      "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">",
      L, H - B, W - R, H - B, L, T, L, H - B, L - 4, T + 8);
  std::string text;
  label(text, hi);
  page.escaped(text);
  page.format("</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">", L - 4,
              H - B);
  text.clear();
  label(text, lo);
  page.escaped(text);
  page.format("</text><text x=\"{}\" y=\"{}\">", L, H - B + 16);
  page.escaped(dates.empty() ? "" : dates.front());
  page.format("</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">", W - R,
              H - B + 16);
  page.escaped(dates.empty() ? "" : dates.back());
  out += "</text><polyline points=\"";
  // Each point's y, written once for the line and once for its circle.
  std::vector<std::size_t> y_at;
  std::string ys;
  y_at.reserve(series.points.size() + 1);
  for (const auto& p : series.points) {
    y_at.push_back(ys.size());
    append_fixed(ys, y(p.value), 1);
  }
  y_at.push_back(ys.size());
  auto y_text = [&](std::size_t i) {
    return std::string_view(ys).substr(y_at[i], y_at[i + 1] - y_at[i]);
  };
  for (std::size_t i = 0; i < series.points.size(); ++i) {
    out += axis.x_of(series.points[i].date);
    out += ',';
    out += y_text(i);
    out += ' ';
  }
  out += "\"/>";
  for (std::size_t i = 0; i < series.points.size(); ++i) {
    const ReportPoint& p = series.points[i];
    out += p.date == today ? "<circle class=\"point today\" cx=\""
                           : "<circle class=\"point\" cx=\"";
    out += axis.x_of(p.date);
    out += "\" cy=\"";
    out += y_text(i);
    out += "\" r=\"2.5\" data-date=\"";
    page.escaped(p.date);
    page.format("\" data-value=\"{}\"><title>", p.value);
    page.escaped(p.date);
    out += ": ";
    text.clear();
    label(text, p.value);
    page.escaped(text);
    out += "</title></circle>";
  }
  out += "</svg></figure>\n";
}

// The cells of each configuration in date order: `data.cells` as
// build_report orders them (configuration, then date), else sorted so.
std::vector<const ReportCell*> cells_in_order(const ReportData& data) {
  std::vector<const ReportCell*> out;
  out.reserve(data.cells.size());
  for (const auto& c : data.cells) out.push_back(&c);
  auto before = [](const ReportCell* a, const ReportCell* b) {
    int c = a->config.compare(b->config);
    return c < 0 || (c == 0 && a->date < b->date);
  };
  if (!std::is_sorted(out.begin(), out.end(), before))
    std::stable_sort(out.begin(), out.end(), before);
  return out;
}

void cell(Piece& page, const ReportCell& c, LogLinks& links) {
  std::string& out = page.out;
  const char* cls = status_class(c.status);
  // The mark says the status without colour; the failure is named.
  const std::string_view c_cls(cls);
  const char* mark = c_cls == "ok" ? "✓" : c_cls == "fail" ? "✗" : "–";
  out += "<td class=\"cell ";
  out += cls;
  out += "\" data-status=\"";
  page.escaped(c.status);
  out += "\" data-config=\"";
  page.escaped(c.config);
  out += "\" data-date=\"";
  page.escaped(c.date);
  out += "\" title=\"";
  page.escaped(c.job);
  out += ' ';
  page.escaped(c.date);
  out += ": ";
  page.escaped(c.status);
  if (!c.failure.empty()) {
    out += " at ";
    page.escaped(c.failure);
  }
  if (c.duration_s) {
    out += " (";
    append_human_duration(out, *c.duration_s);  // nothing to escape
    out += ')';
  }
  out += "\">";
  // The URL holds no character HTML would need escaped (append_url).
  const std::size_t before = out.size();
  out += "<a href=\"";
  const bool linked = links.append(out, c.log);
  if (linked)
    out += "\">";
  else
    out.resize(before);
  out += mark;
  if (!c.failure.empty()) {
    out += "<br><small>";
    page.escaped(std::string_view(c.failure).substr(0, c.failure.find(':')));
    out += "</small>";
  }
  if (linked) out += "</a>";
  out += "</td>";
}

void grid_head(Piece& page, const ReportData& data) {
  page.out += "<table class=\"grid\"><thead><tr><th>configuration</th>";
  for (const auto& d : data.dates) {
    page.out += "<th class=\"date\" title=\"";
    page.escaped(d);
    page.out += "\">";
    page.escaped(
        std::string_view(d).substr(std::min<std::size_t>(5, d.size())));
    page.out += "</th>";
  }
  page.out += "</tr></thead><tbody>\n";
}

// The row of `config`, whose cells are [begin, end) of the ordered cells.
void grid_row(Piece& page, const ReportData& data, const std::string& config,
              const ReportCell* const* begin, const ReportCell* const* end,
              LogLinks& links) {
  page.out += "<tr><th class=\"config\">";
  page.escaped(config);
  page.out += "</th>";
  // Dates and the row's cells are both ascending: one walk fills the row.
  for (const auto& d : data.dates) {
    // A later cell of the same night (not from build_report) wins, as a
    // map keyed by configuration and night would keep it.
    const ReportCell* c = nullptr;
    for (; begin != end && (*begin)->date <= d; ++begin)
      if ((*begin)->date == d) c = *begin;
    if (c)
      cell(page, *c, links);
    else
      page.out += "<td class=\"none\"></td>";
  }
  page.out += "</tr>\n";
}

void grid_tail(Piece& page) {
  page.out += "</tbody></table>\n<p>";
  for (const char* s : {"SUCCEEDED", "FAILED", "CANCELLED"})
    page.format("<span class=\"key {}\">{}</span>", status_class(s), s);
  page.out +=
      "a cell links to the job's log and names the failing step (and "
      "checks).</p>\n";
}

void regressions(const ReportData& data, LogLinks& links, std::string& out) {
  if (data.size_regressions.empty() && data.status_regressions.empty()) {
    out += "<p id=\"no-regressions\">None.</p>\n";
    return;
  }
  if (!data.status_regressions.empty()) {
    out +=
        "<table class=\"list status-regressions\"><tr><th>configuration"
        "</th><th>before</th><th>now</th><th>failure</th></tr>\n";
    for (const auto& r : data.status_regressions) {
      std::string href = links(r.log);
      std::string status = html_escape(r.status);
      out += fmt::format(
          "<tr><td>{}</td><td>{} on {}</td><td>{}</td><td>{}</td></tr>\n",
          html_escape(r.config), html_escape(r.old_status),
          html_escape(r.old_date),
          href.empty() ? status
                       : fmt::format("<a href=\"{}\">{}</a>", href, status),
          html_escape(r.failure));
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
        members += fmt::format("{} {} → {}<br>", html_escape(m.name),
                               human_size(static_cast<double>(m.old_size)),
                               human_size(static_cast<double>(m.new_size)));
      out += fmt::format(
          "<tr><td>{}</td><td>{}</td><td title=\"{} → {}\">{} ({}) → {} "
          "({})</td><td>{:+.1f}%</td><td>{}</td></tr>\n",
          html_escape(r.config), html_escape(r.package),
          html_escape(r.old_artifact), html_escape(r.new_artifact),
          human_size(static_cast<double>(r.old_size)), html_escape(r.old_date),
          human_size(static_cast<double>(r.new_size)), html_escape(r.new_date),
          r.growth * 100, members.empty() ? "—" : members);
    }
    out += "</table>\n";
  }
}

// Renders pieces 0..n-1 (`render(i, piece, links)`) on up to `threads`
// threads and hands each to `sink` in order as soon as it and those before
// it are done, holding at most `window` finished pieces: the 50 MB page of
// 10^5 cells is rendered by every core and never held whole. Each thread
// has its own LogLinks (its cache of directories).
void render_in_order(
    std::size_t n, unsigned threads, const fs::path& out_dir,
    const std::function<void(std::size_t, Piece&, LogLinks&)>& render,
    const std::function<void(std::string_view)>& sink) {
  if (threads <= 1 || n <= 1) {
    LogLinks links(out_dir);
    for (std::size_t i = 0; i < n; ++i) {
      Piece piece;
      render(i, piece, links);
      sink(piece.out);
    }
    return;
  }
  const std::size_t window = 4 * threads;
  std::vector<Piece> pieces(n);
  std::vector<char> done(n, 0);
  std::size_t next = 0, written = 0;
  bool stop = false;
  std::exception_ptr error;
  std::mutex mutex;
  std::condition_variable changed;
  auto work = [&] {
    LogLinks links(out_dir);
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(
          lock, [&] { return stop || next == n || next < written + window; });
      if (stop || next == n) return;
      const std::size_t i = next++;
      lock.unlock();
      try {
        render(i, pieces[i], links);
      } catch (...) {
        lock.lock();
        if (!error) error = std::current_exception();
        stop = true;
        changed.notify_all();
        return;
      }
      lock.lock();
      done[i] = 1;
      changed.notify_all();
    }
  };
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) workers.emplace_back(work);
  auto finish = [&] {
    {
      std::lock_guard lock(mutex);
      stop = true;
    }
    changed.notify_all();
    for (auto& w : workers) w.join();
  };
  try {
    std::unique_lock lock(mutex);
    while (written < n) {
      changed.wait(lock, [&] { return stop || done[written]; });
      if (!done[written]) break;  // a worker failed
      std::string out = std::move(pieces[written].out);
      lock.unlock();
      sink(out);
      lock.lock();
      ++written;
      changed.notify_all();
    }
  } catch (...) {
    finish();
    throw;
  }
  finish();
  if (error) std::rethrow_exception(error);
}

// How many threads render the page: the cores, at most 4 (the writing of
// the pieces in order is the limit beyond).
unsigned render_threads() {
  return std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
}

}  // namespace

void write_report_html(const ReportData& data, const fs::path& out_dir,
                       const std::function<void(std::string_view)>& sink) {
  const std::vector<const ReportCell*> cells = cells_in_order(data);
  const Axis axis(data.dates);
  // The page as a list of pieces of about the same size (a few rows of the
  // grid, a few charts), rendered in parallel and written in order.
  std::vector<std::function<void(Piece&, LogLinks&)>> plan;
  plan.emplace_back([&](Piece& page, LogLinks& links) {
    page.out +=
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width\">"
        "<title>Nightly report ";
    page.escaped(data.today);
    page.format("</title><style>{}</style></head><body>\n<h1>Nightly report ",
                kStyle);
    page.escaped(data.today);
    page.out += "</h1>\n";
    std::map<std::string, int> today;
    for (const auto& c : data.cells)
      if (c.date == data.today) ++today[c.status];
    page.format(
        "<p class=\"summary\">{} configurations over {} nights ({} to {}). "
        "Latest night: {} succeeded, {} failed, {} cancelled.</p>\n",
        data.configs.size(), data.dates.size(),
        html_escape(data.dates.empty() ? "" : data.dates.front()),
        html_escape(data.dates.empty() ? "" : data.dates.back()),
        today["SUCCEEDED"], today["FAILED"], today["CANCELLED"]);
    page.out += "<h2 id=\"regressions\">Today's regressions</h2>\n";
    regressions(data, links, page.out);
    page.out += "<h2 id=\"grid\">Status</h2>\n";
    grid_head(page, data);
  });
  // About 2000 cells or points per piece.
  const std::size_t per_piece = std::max<std::size_t>(
      1, 2000 / std::max<std::size_t>(1, data.dates.size()));
  const ReportCell* const* first = cells.data();
  const ReportCell* const* last = cells.data() + cells.size();
  auto config_before = [](const ReportCell* c, const std::string& config) {
    return c->config < config;
  };
  for (std::size_t b = 0; b < data.configs.size(); b += per_piece) {
    const std::size_t e = std::min(data.configs.size(), b + per_piece);
    plan.emplace_back([&, b, e](Piece& page, LogLinks& links) {
      for (std::size_t i = b; i < e; ++i) {
        const std::string& config = data.configs[i];
        auto from = std::lower_bound(first, last, config, config_before);
        auto to = from;
        while (to != last && (*to)->config == config) ++to;
        grid_row(page, data, config, from, to, links);
      }
    });
  }
  plan.emplace_back([](Piece& page, LogLinks&) {
    grid_tail(page);
    page.out += "<h2 id=\"sizes\">Sizes</h2>\n";
  });
  auto charts = [&](const std::vector<ReportSeries>& list, const char* kind,
                    void (*label)(std::string&, double)) {
    for (std::size_t b = 0; b < list.size(); b += per_piece) {
      const std::size_t e = std::min(list.size(), b + per_piece);
      plan.emplace_back([&, b, e, kind, label](Piece& page, LogLinks&) {
        for (std::size_t i = b; i < e; ++i)
          if (!list[i].points.empty())
            chart(page, list[i], data.dates, axis, kind, data.today, label);
      });
    }
  };
  charts(data.sizes, "size-chart", append_human_size);
  plan.emplace_back([](Piece& page, LogLinks&) {
    page.out += "<h2 id=\"durations\">Durations</h2>\n";
  });
  charts(data.durations, "duration-chart", append_human_duration);
  plan.emplace_back(
      [](Piece& page, LogLinks&) { page.out += "</body></html>\n"; });
  render_in_order(
      plan.size(), render_threads(), out_dir,
      [&](std::size_t i, Piece& page, LogLinks& links) {
        plan[i](page, links);
      },
      sink);
}

std::string report_html(const ReportData& data, const fs::path& out_dir) {
  std::string out;
  write_report_html(data, out_dir,
                    [&](std::string_view piece) { out.append(piece); });
  return out;
}

}  // namespace libpkg::nightly
