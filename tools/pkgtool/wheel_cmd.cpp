// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool wheel unpack|pack|verify|tags|info ...`: the `wheel` command line
// tool's operations over libpkg::wheel (see libpkg/wheel/wheel.hpp).
//
//   wheel unpack WHEEL [-d DEST] [-j N] [--no-verify]
//   wheel pack DIR [-d DEST] [--build-number N] [-z LEVEL] [-j N]
//              [--reuse OLD.whl] [--cache-dir DIR] [--cache-max SIZE]
//              [--no-cache]               (honours SOURCE_DATE_EPOCH)
//   wheel verify WHEEL... [--json] [-j N]   exit 1 on findings, 2 unreadable
//   wheel tags WHEEL... [--python-tag T] [--abi-tag T] [--platform-tag T]
//              [--build N] [--remove] [--strip-local-version] [--in-place]
//              [-d DEST] [-j N]           prints the new file names
//   wheel info WHEEL [--json]
#include <fmt/format.h>

#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>

#include "cache_flags.hpp"
#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/archive/zip_writer.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/wheel/metadata.hpp"
#include "libpkg/wheel/wheel.hpp"
#include "subcommand_table.hpp"

namespace pkgtool {
namespace {

using libpkg::Errc;
using libpkg::Error;
using libpkg::u64;
namespace wh = libpkg::wheel;

const char* kWheelUsage =
    "usage: pkgtool wheel unpack WHEEL [-d DEST] [-j N] [--no-verify]\n"
    "                          [--max-expansion RATIO]\n"
    "       pkgtool wheel pack DIR [-d DEST] [--build-number N] [-z LEVEL] "
    "[-j N]\n"
    "                          [--reuse OLD.whl] [CACHE]\n"
    "       pkgtool wheel verify WHEEL... [--json] [-j N]\n"
    "       pkgtool wheel tags WHEEL... [--python-tag T] [--abi-tag T]\n"
    "                          [--platform-tag T] [--build N] [--remove]\n"
    "                          [--strip-local-version] [--in-place] "
    "[-d DEST] [-j N]\n"
    "                          [--allow-unverified]\n"
    "       pkgtool wheel info WHEEL [--json]\n"
    "       pkgtool wheel update WHEEL [--set MEMBER=FILE]... "
    "[--add MEMBER=FILE]...\n"
    "                          [--remove MEMBER]... [--rename OLD=NEW]...\n"
    "                          (-d DEST | -o OUT.whl | --in-place) [-z LEVEL] "
    "[-j N]\n"
    "                          [--allow-unverified] [CACHE]\n"
    "       pkgtool wheel fuse A.whl B.whl -w DIR [--prefer a|b] [-z LEVEL] "
    "[-j N]\n"
    "CACHE: [--cache-dir DIR] [--cache-max SIZE] [--no-cache] (chunk cache "
    "of\n"
    "       deflated large members; LIBPKG_NO_CACHE=1 also turns it off)\n"
    "tag options: 'a.b' replaces, '+a.b' adds, '-a.b' removes tags\n"
    "tags and update refuse a wheel that fails `verify` unless "
    "--allow-unverified\n";

[[noreturn]] void usage(const std::string& message) {
  usage_error("pkgtool wheel", message);
}

// Walks the arguments, handing options with values to `on_option`.
class Args {
 public:
  explicit Args(const std::vector<std::string>& args) : args_(args) {}
  bool done() const { return i_ >= args_.size(); }
  const std::string& next() { return args_[i_++]; }
  const std::string& value(const std::string& option) {
    if (done()) usage(option + " expects a value");
    return next();
  }

 private:
  const std::vector<std::string>& args_;
  std::size_t i_ = 0;
};

bool is_option(const std::string& a) { return a.size() > 1 && a[0] == '-'; }

int run_unpack(const std::vector<std::string>& argv) {
  Args args(argv);
  std::optional<std::string> wheel;
  std::string dest = ".";
  wh::UnpackOptions opt;
  while (!args.done()) {
    const std::string& a = args.next();
    if (a == "-d" || a == "--dest")
      dest = args.value(a);
    else if (a == "-j")
      opt.threads = parse_unsigned(a, args.value(a), 1024);
    else if (a == "--no-verify")
      opt.verify = false;
    else if (a == "--max-expansion")
      opt.max_expansion = parse_unsigned(a, args.value(a), 1u << 30);
    else if (is_option(a) || wheel)
      usage(unexpected_argument(a));
    else
      wheel = a;
  }
  if (!wheel) usage("unpack needs a WHEEL");
  auto target = wh::unpack(*wheel, dest, opt);
  fmt::print("Unpacking to: {}...OK\n", target.string());
  return 0;
}

int run_pack(const std::vector<std::string>& argv) {
  Args args(argv);
  std::optional<std::string> dir;
  std::string dest = ".";
  wh::PackOptions opt;
  CacheFlags cache;
  while (!args.done()) {
    const std::string& a = args.next();
    if (cache.take(a, [&] { return args.value(a); })) continue;
    if (a == "-d" || a == "--dest-dir")
      dest = args.value(a);
    else if (a == "--build-number")
      opt.build_tag = args.value(a);
    else if (a == "-z")
      opt.level = static_cast<int>(parse_unsigned(a, args.value(a), 12));
    else if (a == "-j")
      opt.threads = parse_unsigned(a, args.value(a), 1024);
    else if (a == "--reuse")
      opt.reuse = args.value(a);
    else if (is_option(a) || dir)
      usage(unexpected_argument(a));
    else
      dir = a;
  }
  if (!dir) usage("pack needs a DIR");
  opt.timestamp = libpkg::archive::source_date_epoch();
  opt.cache = cache.open();
  auto result = wh::pack(*dir, dest, opt);
  print_cache_summary(opt.cache.get());
  fmt::print("Repacked: {}\n", result.path.string());
  if (opt.reuse)
    fmt::print("Reused {} of {} members from {}\n", result.reused,
               result.members, opt.reuse->string());
  return 0;
}

nlohmann::json report_json(const wh::VerifyReport& r) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings)
    findings.push_back({{"kind", wh::finding_kind_name(f.kind)},
                        {"member", f.member},
                        {"expected", f.expected},
                        {"actual", f.actual},
                        {"message", f.message()}});
  return {{"wheel", r.wheel.string()},
          {"ok", r.ok()},
          {"members", r.members},
          {"hashed_bytes", r.hashed_bytes},
          {"findings", findings}};
}

int run_verify(const std::vector<std::string>& argv) {
  Args args(argv);
  std::vector<std::string> wheels;
  bool json = false;
  wh::VerifyOptions opt;
  while (!args.done()) {
    const std::string& a = args.next();
    if (a == "--json")
      json = true;
    else if (a == "-j")
      opt.threads = parse_unsigned(a, args.value(a), 1024);
    else if (is_option(a))
      usage(unexpected_argument(a));
    else
      wheels.push_back(a);
  }
  if (wheels.empty()) usage("verify needs at least one WHEEL");
  int status = 0;
  nlohmann::json all = nlohmann::json::array();
  for (const auto& w : wheels) {
    try {
      auto report = wh::verify(w, opt);
      if (!report.ok()) status = std::max(status, 1);
      if (json) {
        all.push_back(report_json(report));
        continue;
      }
      if (report.ok()) fmt::print("{}: OK ({} members)\n", w, report.members);
      for (const auto& f : report.findings)
        fmt::print("{}: {}\n", w, f.message());
    } catch (const Error& e) {
      // An unreadable wheel doesn't stop the others being checked.
      status = 2;
      if (json)
        all.push_back({{"wheel", w}, {"ok", false}, {"error", e.what()}});
      else
        fmt::print(stderr, "error: {}\n", e.what());
    }
  }
  if (json) fmt::print("{}\n", all.dump(2));
  return status;
}

int run_tags(const std::vector<std::string>& argv) {
  Args args(argv);
  std::vector<std::string> wheels;
  wh::RetagOptions opt;
  while (!args.done()) {
    const std::string& a = args.next();
    if (a == "--python-tag")
      opt.python_tags = args.value(a);
    else if (a == "--abi-tag")
      opt.abi_tags = args.value(a);
    else if (a == "--platform-tag")
      opt.platform_tags = args.value(a);
    else if (a == "--build")
      opt.build = args.value(a);
    else if (a == "--remove")
      opt.remove_original = true;
    else if (a == "--strip-local-version")
      opt.strip_local_version = true;
    else if (a == "--in-place")
      opt.in_place = true;
    else if (a == "--allow-unverified")
      opt.allow_unverified = true;
    else if (a == "-d" || a == "--dest-dir")
      opt.out_dir = args.value(a);
    else if (a == "-j")
      opt.threads = parse_unsigned(a, args.value(a), 1024);
    else if (a.size() > 1 && a[0] == '-' && a[1] == '-')
      usage(unexpected_argument(a));
    else
      wheels.push_back(a);
  }
  if (wheels.empty()) usage("tags needs at least one WHEEL");
  for (const auto& w : wheels) {
    auto result = wh::retag(w, opt);
    fmt::print("{}\n", result.path.filename().string());
  }
  return 0;
}

int run_info(const std::vector<std::string>& argv) {
  Args args(argv);
  std::optional<std::string> wheel;
  bool json = false;
  while (!args.done()) {
    const std::string& a = args.next();
    if (a == "--json")
      json = true;
    else if (is_option(a) || wheel)
      usage(unexpected_argument(a));
    else
      wheel = a;
  }
  if (!wheel) usage("info needs a WHEEL");
  auto name =
      wh::WheelName::parse(std::filesystem::path(*wheel).filename().string());
  auto zip = libpkg::archive::ZipReader::open(*wheel);
  std::string dist_info = wh::find_dist_info(zip, name);
  std::optional<wh::WheelFile> wf;
  if (const auto* e = zip.find(dist_info + "/WHEEL"))
    wf = wh::WheelFile::parse(zip.read_text(*e),
                              zip.name() + ":" + dist_info + "/WHEEL");
  u64 files = 0, size = 0, compressed = 0;
  for (const auto& e : zip.entries()) {
    if (e.is_directory()) continue;
    ++files;
    size += e.uncompressed_size;
    compressed += e.compressed_size;
  }
  std::vector<std::string> tags;
  for (const auto& t : name.tags()) tags.push_back(t.str());
  if (json) {
    nlohmann::json j = {{"file", *wheel},
                        {"name", name.distribution},
                        {"version", name.version},
                        {"build", name.build ? nlohmann::json(*name.build)
                                             : nlohmann::json(nullptr)},
                        {"tags", tags},
                        {"dist_info", dist_info},
                        {"members", files},
                        {"size", size},
                        {"compressed_size", compressed},
                        {"file_size", zip.file_size()}};
    if (wf) {
      j["generator"] = wf->generator().value_or("");
      j["root_is_purelib"] = wf->root_is_purelib().value_or(false);
      j["wheel_version"] = wf->wheel_version().value_or("");
    }
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("file:        {}\n", *wheel);
  fmt::print("name:        {}\n", name.distribution);
  fmt::print("version:     {}\n", name.version);
  if (name.build) fmt::print("build:       {}\n", *name.build);
  for (const auto& t : tags) fmt::print("tag:         {}\n", t);
  fmt::print("dist-info:   {}\n", dist_info);
  if (wf) {
    fmt::print("generator:   {}\n", wf->generator().value_or("(none)"));
    fmt::print("purelib:     {}\n",
               wf->root_is_purelib().value_or(false) ? "true" : "false");
  }
  fmt::print("members:     {}\n", files);
  fmt::print("size:        {} bytes ({} compressed, file {})\n", size,
             compressed, zip.file_size());
  return 0;
}

// Splits "LEFT=RIGHT" (both non-empty) for --set/--add/--rename.
std::pair<std::string, std::string> split_pair(const std::string& option,
                                               const std::string& text) {
  std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    usage(fmt::format("{} expects MEMBER=VALUE, got '{}'", option, text));
  return {text.substr(0, eq), text.substr(eq + 1)};
}

// `update`: member-level edits of an existing wheel. Untouched members are
// copied with their compressed bytes, so changing one file of a GB wheel
// costs about one copy of the file, not a recompression of everything.
int run_update(const std::vector<std::string>& argv) {
  Args args(argv);
  std::optional<std::string> wheel, out, dest;
  bool in_place = false;
  wh::WheelEdits edits;
  wh::RewriteOptions opt;
  CacheFlags cache;
  while (!args.done()) {
    const std::string& a = args.next();
    if (cache.take(a, [&] { return args.value(a); })) continue;
    if (a == "--set") {
      auto [member, file] = split_pair(a, args.value(a));
      edits.replace[member] = libpkg::archive::file_source(file);
    } else if (a == "--add") {
      auto [member, file] = split_pair(a, args.value(a));
      unsigned mode =
          (std::filesystem::status(file).permissions() &
           std::filesystem::perms::owner_exec) != std::filesystem::perms::none
              ? 0755
              : 0644;
      edits.add.push_back({member, libpkg::archive::file_source(file), mode});
    } else if (a == "--remove") {
      edits.remove.insert(args.value(a));
    } else if (a == "--rename") {
      auto [from, to] = split_pair(a, args.value(a));
      edits.rename[from] = to;
    } else if (a == "-d" || a == "--dest-dir") {
      dest = args.value(a);
    } else if (a == "-o" || a == "--output") {
      out = args.value(a);
    } else if (a == "--allow-unverified") {
      opt.allow_unverified = true;
    } else if (a == "--in-place") {
      in_place = true;
    } else if (a == "-z") {
      opt.level = static_cast<int>(parse_unsigned(a, args.value(a), 12));
    } else if (a == "-j") {
      opt.threads = parse_unsigned(a, args.value(a), 1024);
    } else if (is_option(a) || wheel) {
      usage(unexpected_argument(a));
    } else {
      wheel = a;
    }
  }
  if (!wheel) usage("update needs a WHEEL");
  if (int(bool(out)) + int(bool(dest)) + int(in_place) != 1)
    usage("update needs exactly one of -d DEST, -o OUT.whl, --in-place");
  std::filesystem::path target =
      out    ? std::filesystem::path(*out)
      : dest ? std::filesystem::path(*dest) /
                   std::filesystem::path(*wheel).filename()
             : std::filesystem::path(*wheel);
  if (!in_place && std::filesystem::exists(target) &&
      std::filesystem::equivalent(target, *wheel))
    usage("the output would replace the input; pass --in-place to allow it");
  if (dest) libpkg::create_output_directory(*dest);
  opt.timestamp = libpkg::archive::source_date_epoch();
  opt.cache = cache.open();
  auto input = libpkg::archive::ZipReader::open(*wheel);
  auto result = wh::rewrite(input, target, edits, opt);
  print_cache_summary(opt.cache.get());
  fmt::print("{}: {} members, {} copied raw, {} compressed\n",
             result.path.string(), result.members, result.raw_copies,
             result.compressed);
  return 0;
}

}  // namespace

unsigned parse_unsigned(const std::string& option, const std::string& text,
                        unsigned max) {
  unsigned v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v > max)
    usage(fmt::format("{} expects an integer 0..{}, got '{}'", option, max,
                      text));
  return v;
}

int run_wheel(const std::vector<std::string>& args) {
  static const SubcommandTable table = {
      {"unpack", {"", run_unpack, kWheelUsage}},
      {"pack", {"", run_pack, kWheelUsage}},
      {"verify", {"", run_verify, kWheelUsage}},
      {"tags", {"", run_tags, kWheelUsage}},
      {"info", {"", run_info, kWheelUsage}},
      {"update", {"", run_update, kWheelUsage}},
      {"fuse", {"", run_wheel_fuse}},  // parses its own --help
  };
  return run_subcommand(table, "pkgtool wheel", args, kWheelUsage);
}

}  // namespace pkgtool
