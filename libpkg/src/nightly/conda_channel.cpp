// SPDX-License-Identifier: BSD-3-Clause
#include "conda_channel.hpp"

#include <openssl/evp.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "libpkg/archive/tar.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/sha256.hpp"
#include "libpkg/conda/package.hpp"
#include "libpkg/nightly/state.hpp"

namespace libpkg::nightly {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string hex(const unsigned char* p, unsigned n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < n; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

// MD5 and SHA-256 in one pass over the file (repodata carries both; MD5
// only because conda clients still read it).
void digests(const fs::path& file, CondaRecord& r) {
  // open_regular: a FIFO or device put where a package was is refused, not
  // read until it ends.
  Fd fd = open_regular(file);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> md5(EVP_MD_CTX_new(),
                                                              EVP_MD_CTX_free);
  EVP_DigestInit_ex(md5.get(), EVP_md5(), nullptr);
  Sha256 sha;
  r.size = 0;
  read_chunks(fd.get(), file.string(), 1 << 20, [&](std::span<const u8> c) {
    EVP_DigestUpdate(md5.get(), c.data(), c.size());
    sha.update(c);
    r.size += c.size();
  });
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_DigestFinal_ex(md5.get(), out, &len);
  r.md5 = hex(out, len);
  r.sha256 = Sha256::hex(sha.finish());
}

std::string index_from_tar(archive::TarReader& tar) {
  archive::TarMember m;
  while (tar.next(m)) {
    if (m.path != "info/index.json") continue;
    std::string text;
    tar.read_data([&](std::span<const u8> piece) {
      text.append(reinterpret_cast<const char*>(piece.data()), piece.size());
    });
    return text;
  }
  return "";
}

bool lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

}  // namespace

void check_conda_subdir(const std::string& subdir, const std::string& file) {
  // ^[a-z0-9]+(-[a-z0-9_]+)*$ : a first run of [a-z0-9], then runs of
  // [a-z0-9_] each after one '-'.
  bool ok = !subdir.empty() && lower_alnum(subdir[0]);
  bool first_run = true;
  for (std::size_t i = 0; ok && i < subdir.size(); ++i) {
    char c = subdir[i];
    if (c == '-') {
      ok = i + 1 < subdir.size() && subdir[i + 1] != '-';
      first_run = false;
    } else {
      ok = lower_alnum(c) || (c == '_' && !first_run);
    }
  }
  if (!ok)
    throw Error(Errc::format, file,
                "info/index.json subdir \"" + subdir +
                    "\" is not a platform name like linux-64 or noarch");
}

CondaRecord read_conda_record(const fs::path& from, const fs::path& package) {
  CondaRecord r;
  r.file = package.filename().string();
  std::string text;
  if (conda::format_of(package) == conda::PackageFormat::conda) {
    auto zip = archive::ZipReader::open(from);
    std::string member = "info-" + conda::stem_of(package) + ".tar.zst";
    const auto* entry = zip.find(member);
    if (!entry) throw Error(Errc::format, package.string(), "no " + member);
    std::vector<u8> bytes = zip.read_all(*entry);
    auto tar =
        archive::TarReader::open_memory(bytes, package.string() + ":" + member);
    text = index_from_tar(tar);
  } else {
    auto tar = archive::TarReader::open_file(from);
    text = index_from_tar(tar);
  }
  if (text.empty())
    throw Error(Errc::format, package.string(), "no info/index.json");
  json j = json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("subdir") || !j["subdir"].is_string())
    throw Error(Errc::format, package.string(),
                "info/index.json has no subdir");
  check_conda_subdir(j["subdir"].get<std::string>(), package.string());
  r.index_json = text;
  digests(from, r);
  return r;
}

void write_conda_channel(const fs::path& dir,
                         const std::vector<CondaRecord>& records) {
  std::map<std::string, json> repodata;
  json channel_packages = json::object();
  std::set<std::string> subdirs{"noarch"};
  for (const auto& r : records) {
    json index = json::parse(r.index_json);
    std::string subdir = index["subdir"];
    subdirs.insert(subdir);
    json& rd = repodata[subdir];
    if (rd.is_null())
      rd = {{"info", {{"subdir", subdir}}},
            {"packages", json::object()},
            {"packages.conda", json::object()},
            {"removed", json::array()},
            {"repodata_version", 1}};
    index["md5"] = r.md5;
    index["sha256"] = r.sha256;
    index["size"] = r.size;
    bool v2 = r.file.size() > 6 &&
              r.file.compare(r.file.size() - 6, 6, ".conda") == 0;
    rd[v2 ? "packages.conda" : "packages"][r.file] = index;
    // channeldata: per package name, the newest version seen (by timestamp)
    // and every subdir it is built for.
    std::string name = index.value("name", "");
    json& cd = channel_packages[name];
    long long ts = index.value("timestamp", 0LL);
    if (cd.is_null() || ts >= cd.value("timestamp", 0LL)) {
      json subdirs_of = cd.is_null() ? json::array() : cd["subdirs"];
      cd = {{"version", index.value("version", "")},
            {"timestamp", ts},
            {"license", index.value("license", "")},
            {"subdirs", subdirs_of}};
    }
    auto& sd = cd["subdirs"];
    if (std::find(sd.begin(), sd.end(), subdir) == sd.end())
      sd.push_back(subdir);
  }
  for (const auto& subdir : subdirs) {
    json rd = repodata.count(subdir) ? repodata[subdir]
                                     : json{{"info", {{"subdir", subdir}}},
                                            {"packages", json::object()},
                                            {"packages.conda", json::object()},
                                            {"removed", json::array()},
                                            {"repodata_version", 1}};
    std::error_code ec;
    fs::create_directories(dir / subdir, ec);
    if (ec)
      throw Error(Errc::io, (dir / subdir).string(), "create: " + ec.message())
          .with_errno(ec.value());
    write_text_atomically(dir / subdir / "repodata.json", rd.dump(1) + "\n");
  }
  json cd = {{"channeldata_version", 1},
             {"packages", channel_packages},
             {"subdirs",
              json(std::vector<std::string>(subdirs.begin(), subdirs.end()))}};
  write_text_atomically(dir / "channeldata.json", cd.dump(1) + "\n");
}

}  // namespace libpkg::nightly
