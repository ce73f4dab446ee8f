// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/nightly/publish.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <system_error>

#include "clock.hpp"
#include "conda_channel.hpp"
#include "html.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/sha256.hpp"
#include "libpkg/nightly/runner.hpp"
#include "libpkg/nightly/state.hpp"
#include "libpkg/wheel/name.hpp"
#include "open_beneath.hpp"

namespace libpkg::nightly {

namespace fs = std::filesystem;
using nlohmann::json;

using detail::html_escape;

namespace {

struct Entry {
  std::string file, sha256, kind, project, key, requires_python, nightly;
  u64 size = 0;
  std::string md5, index_json, subdir;  // conda packages
};

json to_json(const Entry& e) {
  json j = {{"file", e.file},       {"sha256", e.sha256},
            {"size", e.size},       {"kind", e.kind},
            {"project", e.project}, {"key", e.key},
            {"nightly", e.nightly}, {"requires_python", e.requires_python}};
  if (e.kind == "conda") {
    j["md5"] = e.md5;
    j["subdir"] = e.subdir;
    j["index_json"] = e.index_json;
  }
  return j;
}

Entry from_json(const json& j, const fs::path& manifest) {
  Entry e;
  e.file = j.at("file");
  e.sha256 = j.at("sha256");
  e.size = j.at("size");
  e.kind = j.at("kind");
  e.project = j.at("project");
  e.key = j.at("key");
  e.nightly = j.at("nightly");
  e.requires_python = j.at("requires_python");
  if (e.kind == "conda") {
    e.md5 = j.at("md5");
    e.subdir = j.at("subdir");
    e.index_json = j.at("index_json");
    // Both name the directory the package lands in (the index's subdir is
    // what write_conda_channel uses): a hand-edited manifest must not lead
    // outside the channel either.
    check_conda_subdir(e.subdir, manifest.string() + ": " + e.file);
    check_conda_subdir(json::parse(e.index_json).at("subdir"),
                       manifest.string() + ": " + e.file);
  }
  return e;
}

// The file part of a link, percent-encoded as pip and PyTorch's index
// expect ('+' of local versions as %2B: old pips turned it into a space).
std::string url_escape(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// Requires-Python of the wheel's METADATA ("" when absent).
std::string requires_python(const fs::path& wheel,
                            const wheel::WheelName& name) {
  auto zip = archive::ZipReader::open(wheel);
  std::string member = name.name_version() + ".dist-info/METADATA";
  const archive::ZipEntry* entry = zip.find(member);
  if (!entry) throw Error(Errc::format, wheel.string(), "no " + member);
  std::string text = zip.read_text(*entry);
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto eol = text.find('\n', pos);
    std::string line =
        text.substr(pos, eol == std::string::npos ? eol : eol - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) break;  // the headers end at the first blank line
    static const std::string kKey = "requires-python:";
    std::string lower = line.substr(0, kKey.size());
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    if (lower == kKey) {
      std::string v = line.substr(kKey.size());
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
    if (eol == std::string::npos) break;
    pos = eol + 1;
  }
  return "";
}

// Package and configuration: the file name with its nightly date taken out
// ("torchlike-1.0.0.dev20260101+cpu-cp311-…" → "torchlike-1.0.0.dev*+cpu-…").
std::string retention_key(const std::string& file) {
  static const std::regex kDev("dev[0-9]+");
  return std::regex_replace(file, kDev, "dev*",
                            std::regex_constants::format_first_only);
}

// std::filesystem's error_code calls as Error naming the path (one line,
// exit 2), not a std::filesystem_error.
void checked(const std::error_code& ec, const fs::path& path,
             const char* action) {
  if (ec)
    throw Error(Errc::io, path.string(),
                std::string(action) + ": " + ec.message())
        .with_errno(ec.value());
}

void make_dirs(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  checked(ec, dir, "create");
}

class PublishLock {
 public:
  explicit PublishLock(const fs::path& channel) {
    fs::path file = channel / ".publish.lock";
    fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw_errno(file.string(), "open the publish lock");
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) throw_errno(file.string(), "lock");
  }
  ~PublishLock() { ::close(fd_); }
  PublishLock(const PublishLock&) = delete;
  PublishLock& operator=(const PublishLock&) = delete;

 private:
  int fd_;
};

void write_simple_index(const fs::path& release,
                        const std::vector<Entry>& entries) {
  std::map<std::string, std::vector<const Entry*>> projects;
  for (const auto& e : entries)
    if (e.kind == "wheel") projects[e.project].push_back(&e);
  make_dirs(release / "simple");
  std::string root_html =
      "<!DOCTYPE html>\n<html>\n<head><meta name=\"pypi:repository-version\" "
      "content=\"1.0\"><title>Simple index</title></head>\n<body>\n";
  json root_json = {{"meta", {{"api-version", "1.0"}}},
                    {"projects", json::array()}};
  for (auto& [project, files] : projects) {
    std::sort(files.begin(), files.end(),
              [](const Entry* a, const Entry* b) { return a->file < b->file; });
    root_html += "<a href=\"" + project + "/\">" + project + "</a>\n";
    root_json["projects"].push_back({{"name", project}});
    std::string html =
        "<!DOCTYPE html>\n<html>\n<head><meta name=\"pypi:repository-version\" "
        "content=\"1.0\"><title>Links for " +
        project + "</title></head>\n<body>\n<h1>Links for " + project +
        "</h1>\n";
    json page = {{"meta", {{"api-version", "1.0"}}},
                 {"name", project},
                 {"files", json::array()}};
    for (const Entry* e : files) {
      std::string url = "../../../files/" + url_escape(e->file);
      html += "<a href=\"" + url + "#sha256=" + e->sha256 + "\"";
      if (!e->requires_python.empty())
        html +=
            " data-requires-python=\"" + html_escape(e->requires_python) + "\"";
      html += ">" + html_escape(e->file) + "</a><br/>\n";
      json f = {{"filename", e->file},
                {"url", url},
                {"hashes", {{"sha256", e->sha256}}}};
      if (!e->requires_python.empty())
        f["requires-python"] = e->requires_python;
      page["files"].push_back(std::move(f));
    }
    html += "</body>\n</html>\n";
    make_dirs(release / "simple" / project);
    write_text_atomically(release / "simple" / project / "index.html", html);
    write_text_atomically(release / "simple" / project / "index.json",
                          page.dump(2) + "\n");
  }
  root_html += "</body>\n</html>\n";
  write_text_atomically(release / "simple" / "index.html", root_html);
  write_text_atomically(release / "simple" / "index.json",
                        root_json.dump(2) + "\n");
}

void write_libtorch_listing(const fs::path& release,
                            const std::vector<Entry>& entries) {
  make_dirs(release / "libtorch");
  std::string html =
      "<!DOCTYPE html>\n<html>\n<head><title>libtorch "
      "nightlies</title></head>\n<body>\n"
      "<h1>libtorch nightlies</h1>\n<table>\n<tr><th>file</th><th>nightly</th>"
      "<th>size</th><th>sha256</th></tr>\n";
  std::vector<const Entry*> zips;
  for (const auto& e : entries)
    if (e.kind == "libtorch") zips.push_back(&e);
  std::sort(zips.begin(), zips.end(), [](const Entry* a, const Entry* b) {
    return a->nightly != b->nightly ? a->nightly > b->nightly
                                    : a->file < b->file;
  });
  for (const Entry* e : zips)
    html += "<tr><td><a href=\"../../files/" + url_escape(e->file) + "\">" +
            html_escape(e->file) + "</a></td><td>" + e->nightly + "</td><td>" +
            std::to_string(e->size) + "</td><td><code>" + e->sha256 +
            "</code></td></tr>\n";
  html += "</table>\n</body>\n</html>\n";
  write_text_atomically(release / "libtorch" / "index.html", html);
}

// The conda channel under <release>/conda: repodata per subdir, and each
// package beside its repodata (where conda clients fetch it), hard-linked to
// files/.
void write_conda_part(const fs::path& release, const fs::path& channel,
                      const std::vector<Entry>& entries) {
  std::vector<CondaRecord> records;
  for (const auto& e : entries) {
    if (e.kind != "conda") continue;
    records.push_back({e.file, e.index_json, e.sha256, e.md5, e.size});
    fs::path dest = release / "conda" / e.subdir / e.file;
    make_dirs(dest.parent_path());
    std::error_code ec;
    fs::create_hard_link(channel / "files" / e.file, dest, ec);
    if (ec) {
      ec.clear();
      fs::copy_file(channel / "files" / e.file, dest, ec);
      checked(ec, dest, "copy");
    }
  }
  write_conda_channel(release / "conda", records);
}

// An artifact of a job document, open: `name` is where it is in the
// nightly directory (for messages and its file name), the descriptor what
// was checked. Everything read from it goes through /proc/self/fd/N, so a
// path swapped for a symlink after the check is never followed.
struct OpenArtifact {
  fs::path name;
  Fd fd;
  struct stat st {};
  fs::path via() const { return "/proc/self/fd/" + std::to_string(fd.get()); }
  // Runs `read` on via(), an error naming via() renamed to name: messages
  // show the artifact, not the descriptor.
  template <typename Fn>
  auto read(Fn&& fn) const {
    try {
      return fn(via());
    } catch (const Error& e) {
      if (e.file() != via().string()) throw;
      throw Error(e.code(), name.string(), e.message(), e.offset())
          .with_errno(e.sys_errno());
    }
  }
};

// The artifact `name` of a job document, opened below the nightly directory
// without following any symlink on the way (open_beneath): a name leaving
// it (absolute, "..") or through a symlink is refused, so a job document
// cannot publish an arbitrary file.
OpenArtifact open_artifact(const Layout& layout, const fs::path& doc_file,
                           const std::string& name) {
  fs::path rel(name);
  bool escapes = rel.empty() || rel.is_absolute() || rel.has_root_name();
  for (const auto& part : rel)
    if (part == "..") escapes = true;
  if (escapes)
    throw Error(Errc::format, doc_file.string(),
                "artifact name \"" + name + "\" leaves the nightly directory");
  OpenArtifact a{layout.dir / rel, open_beneath(layout.dir, rel), {}};
  if (::fstat(a.fd.get(), &a.st) != 0) throw_errno(a.name.string(), "stat");
  return a;
}

// The artifact opened again for the copy, refused when it is no longer the
// file that was checked (descriptors are not held across the whole
// nightly: hundreds of artifacts would exhaust them).
OpenArtifact reopen_artifact(const Layout& layout, const OpenArtifact& was) {
  OpenArtifact now{
      was.name,
      open_beneath(layout.dir, was.name.lexically_relative(layout.dir)),
      {}};
  if (::fstat(now.fd.get(), &now.st) != 0)
    throw_errno(now.name.string(), "stat");
  if (now.st.st_dev != was.st.st_dev || now.st.st_ino != was.st.st_ino ||
      now.st.st_size != was.st.st_size ||
      now.st.st_mtim.tv_sec != was.st.st_mtim.tv_sec ||
      now.st.st_mtim.tv_nsec != was.st.st_mtim.tv_nsec)
    throw Error(Errc::format, now.name.string(),
                "changed while it was being published");
  return now;
}

}  // namespace

std::string normalize_project(const std::string& name) {
  std::string out;
  bool sep = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      sep = true;
      continue;
    }
    if (sep && !out.empty()) out += '-';
    sep = false;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

PublishResult publish_nightly(const Layout& layout, const fs::path& channel_in,
                              const PublishOptions& options) {
  if (LockHolder runner = RunnerLock::holder(layout))
    throw Error(Errc::usage, layout.dir.string(),
                "a runner (" + runner.describe() +
                    ") is still running this nightly: publish when it ends");
  fs::path channel = fs::absolute(channel_in);
  std::error_code ec;
  create_output_directory(channel / "files");
  create_output_directory(channel / "releases");
  PublishLock lock(channel);

  std::vector<Entry> entries;
  fs::path manifest = channel / "manifest.json";
  if (fs::exists(manifest)) {
    try {
      // Named: a range-for over a temporary's member would dangle.
      json doc = json::parse(read_text_file(manifest));
      for (const auto& j : doc.at("files"))
        entries.push_back(from_json(j, manifest));
    } catch (const json::exception& e) {
      throw Error(Errc::format, manifest.string(),
                  std::string("not a channel manifest: ") + e.what());
    }
  }
  PublishResult result;
  std::vector<std::pair<OpenArtifact, Entry>> incoming;
  for (const auto& rec : read_states(layout)) {
    if (rec.state != JobState::succeeded) continue;
    fs::path doc_file = layout.job_document(rec.job);
    json doc = json::parse(read_text_file(doc_file), nullptr, false);
    if (!doc.is_object() || !doc.contains("artifacts"))
      throw Error(Errc::format, doc_file.string(),
                  "not a libpkg-job/1 document");
    for (const auto& a : doc["artifacts"]) {
      OpenArtifact art =
          open_artifact(layout, doc_file, a.at("name").get<std::string>());
      const fs::path& src = art.name;
      std::string file = src.filename().string();
      Entry e;
      e.file = file;
      e.nightly = layout.date;
      e.key = retention_key(file);
      if (src.extension() == ".whl") {
        auto name = wheel::WheelName::parse(file);
        e.kind = "wheel";
        e.project = normalize_project(name.distribution);
        e.requires_python = art.read(
            [&](const fs::path& via) { return requires_python(via, name); });
      } else if (src.extension() == ".zip" && file.rfind("libtorch", 0) == 0) {
        e.kind = "libtorch";
        e.project = "libtorch";
      } else if (file.ends_with(".conda") || file.ends_with(".tar.bz2")) {
        CondaRecord c = art.read(
            [&](const fs::path& via) { return read_conda_record(via, src); });
        json index = json::parse(c.index_json);
        e.kind = "conda";
        e.project = index.value("name", "");
        e.subdir = index["subdir"];
        e.md5 = c.md5;
        e.index_json = c.index_json;
      } else {
        continue;
      }
      e.sha256 = art.read([&](const fs::path& via) {
        return Sha256::hex(Sha256::of_file(via, &e.size));
      });
      if (e.sha256 != a.value("sha256", e.sha256))
        throw Error(Errc::format, src.string(),
                    "changed since its job ended (sha256 differs from " +
                        doc_file.string() + ")");
      // A published file is never replaced by other bytes: pip would see a
      // sha256 that the live index does not list, and a publish failing
      // after the copy would leave the live channel inconsistent.
      fs::path live = channel / "files" / e.file;
      if (fs::exists(live) && Sha256::hex(Sha256::of_file(live)) != e.sha256)
        throw Error(Errc::format, src.string(),
                    "differs from the published " + live.string() +
                        ": a published file is never replaced (give the new "
                        "build another name)");
      art.fd.reset();
      incoming.emplace_back(std::move(art), e);
    }
  }
  // Copied only once every artifact was read and found valid: a bad wheel
  // leaves the channel as it was.
  for (const auto& [art, e] : incoming) {
    if (!fs::exists(channel / "files" / e.file)) {  // else the same bytes
      OpenArtifact now = reopen_artifact(layout, art);
      now.read([&](const fs::path& via) {
        copy_file_atomically(via, channel / "files" / e.file, 0644);
        return 0;
      });
    }
    entries.erase(
        std::remove_if(entries.begin(), entries.end(),
                       [&](const Entry& old) { return old.file == e.file; }),
        entries.end());
    entries.push_back(e);
    result.added.push_back(e.file);
  }

  // Retention: per key, the files of the newest `keep` nightlies stay.
  std::set<std::string> drop;
  if (options.keep) {
    std::map<std::string, std::set<std::string, std::greater<>>> dates;
    for (const auto& e : entries) dates[e.key].insert(e.nightly);
    for (const auto& e : entries) {
      const auto& d = dates[e.key];
      auto rank = std::distance(d.begin(), d.find(e.nightly));
      if (rank >= static_cast<long>(options.keep)) drop.insert(e.file);
    }
  }
  std::vector<Entry> kept;
  for (const auto& e : entries)
    if (!drop.count(e.file)) kept.push_back(e);

  // The new release, complete before anyone can see it.
  std::string stamp =
      layout.date + "-" +
      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count()) +
      "-" + std::to_string(::getpid());
  fs::path staging = channel / "releases" / ("." + stamp + ".tmp");
  fs::path release = channel / "releases" / stamp;
  fs::path link_tmp =
      channel / (".current." + std::to_string(::getpid()) + ".tmp");
  // A publish that fails (a full disk, an unreadable file) leaves neither
  // its staging folder nor a half-made link behind; `current` is untouched.
  struct Cleanup {
    std::vector<fs::path> paths;
    bool done = false;
    ~Cleanup() {
      std::error_code ignored;
      if (!done)
        for (const auto& p : paths) fs::remove_all(p, ignored);
    }
  } cleanup{{staging, release, link_tmp}};
  make_dirs(staging);
  write_simple_index(staging, kept);
  write_libtorch_listing(staging, kept);
  write_conda_part(staging, channel, kept);
  fs::rename(staging, release, ec);
  checked(ec, release, "rename the release into place");
  fs::remove(link_tmp, ec);
  fs::create_directory_symlink(fs::path("releases") / stamp, link_tmp, ec);
  checked(ec, link_tmp, "create the link");
  // The manifest before the switch: when the switch fails, the next publish
  // still knows every file already in files/.
  json man = {{"schema", "libpkg-channel/1"},
              {"release", "releases/" + stamp},
              {"files", json::array()}};
  for (const auto& e : kept) man["files"].push_back(to_json(e));
  write_text_atomically(manifest, man.dump(2) + "\n");
  fs::rename(link_tmp, channel / "current", ec);  // the switch: one rename
  checked(ec, channel / "current", "switch");
  cleanup.done = true;

  for (const auto& file : drop) {
    fs::remove(channel / "files" / file, ec);
    result.pruned.push_back(file);
  }
  for (const auto& e : fs::directory_iterator(channel / "releases"))
    if (e.path() != release) fs::remove_all(e.path(), ec);
  result.release = release;
  return result;
}

}  // namespace libpkg::nightly
