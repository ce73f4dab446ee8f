// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/archive/chunk_cache.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <libdeflate.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string_view>
#include <system_error>
#include <utility>

#include "archive/deflate_chunk.hpp"
#include "archive/hit_tag.hpp"
#include "archive/le_bytes.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/sha256.hpp"

namespace libpkg::archive {
namespace fs = std::filesystem;
namespace {

// "LPKCHK" + format version: a new layout gets new magic, and old entries
// are then dropped as unreadable rather than misread.
constexpr std::array<u8, 8> kMagic = {'L', 'P', 'K', 'C', 'H', 'K', '0', '1'};
// magic, stored length (u64), input CRC-32, stored bytes' CRC-32, hit tag
// (u64; reserved and 0 before tags, so older entries simply have none).
constexpr size_t kHeaderSize = 8 + 8 + 4 + 4 + 8;
constexpr std::string_view kTempPrefix = ".tmp-";
// A temporary file this old belongs to a writer that died (a live writer
// holds one for the few milliseconds of writing 8 MiB).
constexpr auto kStaleTemp = std::chrono::hours(1);

u32 crc32_of(std::span<const u8> bytes) {
  return libdeflate_crc32(0, bytes.data(), bytes.size());
}

bool is_hex(std::string_view s) {
  return s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// Only files shaped like ours are listed, so that prune and clear never
// remove anything else, even under a mistyped --cache-dir.
enum class Shape { other, entry, temp };

Shape shape_of(const fs::path& sub, const fs::path& file) {
  const std::string dir = sub.filename().string();
  const std::string name = file.filename().string();
  if (dir.size() != 2 || !is_hex(dir)) return Shape::other;
  if (name.size() == 62 && is_hex(name)) return Shape::entry;
  if (name.starts_with(kTempPrefix)) return Shape::temp;
  return Shape::other;
}

struct Item {
  fs::file_time_type mtime;
  u64 size;
  fs::path path;
  Shape shape;
};

// Entries and temporary files, skipping whatever vanishes or cannot be read
// while walking (another process pruning at the same time).
std::vector<Item> list_items(const fs::path& dir) {
  std::vector<Item> items;
  std::error_code ec;
  for (fs::directory_iterator sub(dir, ec), end; !ec && sub != end;
       sub.increment(ec)) {
    std::error_code e1;
    if (!sub->is_directory(e1) || sub->is_symlink(e1)) continue;
    for (fs::directory_iterator it(sub->path(), e1); !e1 && it != end;
         it.increment(e1)) {
      const Shape shape = shape_of(sub->path(), it->path());
      if (shape == Shape::other) continue;
      std::error_code e2;
      if (!it->is_regular_file(e2) || it->is_symlink(e2)) continue;
      const u64 size = it->file_size(e2);
      if (e2) continue;
      const auto mtime = it->last_write_time(e2);
      if (e2) continue;
      items.push_back({mtime, size, it->path(), shape});
    }
  }
  return items;
}

// Whether `stored` (a chunk as deflate_chunk() emits it: a whole stream when
// `final`, else one ending byte-aligned without BFINAL) inflates to exactly
// `input`. The CRCs of an entry's header are the entry's own word: whoever
// can write the cache directory can forge them, and the writer takes the
// zip CRC and the RECORD hash from the input, so only this check keeps an
// archive from carrying bytes other than its input.
// A non-final chunk is completed in place (`stored` gets 5 bytes more for
// the check and loses them after) rather than copied: an entry is up to
// 8 MiB. The inflated bytes go to a buffer kept per thread (chunk sized:
// 8 MiB per worker of a writer that checks hits) instead of a fresh
// zero-filled vector per hit.
bool inflates_to(std::vector<u8>& stored, bool final,
                 std::span<const u8> input) {
  // An empty final stored block, as the next chunk's bytes would complete
  // a non-final chunk (it ends on a byte boundary).
  constexpr std::array<u8, 5> kEnd = {0x01, 0x00, 0x00, 0xff, 0xff};
  const std::size_t len = stored.size();
  if (!final) stored.insert(stored.end(), kEnd.begin(), kEnd.end());
  struct Decompressor {
    libdeflate_decompressor* d = libdeflate_alloc_decompressor();
    ~Decompressor() { libdeflate_free_decompressor(d); }
  };
  thread_local Decompressor decompressor;
  thread_local std::unique_ptr<u8[]> plain;
  thread_local std::size_t plain_size = 0;
  bool same = false;
  if (decompressor.d != nullptr) {
    if (plain_size < input.size()) {
      plain.reset();
      plain_size = 0;
      plain.reset(new (std::nothrow) u8[input.size()]);
      if (plain) plain_size = input.size();
    }
    size_t in_used = 0;
    // A NULL actual_out requires exactly input.size() bytes of output; the
    // whole entry must be consumed (no trailing bytes carried into the zip).
    same = plain != nullptr &&
           libdeflate_deflate_decompress_ex(
               decompressor.d, stored.data(), stored.size(), plain.get(),
               input.size(), &in_used, nullptr) == LIBDEFLATE_SUCCESS &&
           in_used == stored.size() &&
           std::memcmp(plain.get(), input.data(), input.size()) == 0;
  }
  stored.resize(len);
  return same;
}

}  // namespace

ChunkCache::ChunkCache(ChunkCacheOptions options)
    : options_(std::move(options)),
      verify_(options_.verify_every_hit || verify_by_environment()) {
  if (!options_.dir.empty()) return;  // given explicitly: trusted as is
  options_.dir = default_dir();
  default_ = true;
  // Nothing is created here: a command that only reads the cache (cache
  // stats, a lookup) leaves no directory behind. One already there is
  // checked now, so that a directory of another user is never read.
  struct stat st {};
  if (::lstat(options_.dir.c_str(), &st) == 0) (void)default_dir_is_safe();
}

bool ChunkCache::default_dir_is_safe() {
  // The default directory (possibly in a shared /tmp) must be private: one
  // that another user owns or may write is not used, its entries would be
  // theirs to choose.
  struct stat st {};
  if (::lstat(options_.dir.c_str(), &st) != 0) return true;  // store() warns
  if (S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
      (st.st_mode & S_IWOTH) == 0)
    return true;
  if (!disabled_.exchange(true))
    warn(
        fmt::format("warning: {}: the chunk cache directory is not a "
                    "directory owned by this user and closed to others; "
                    "the cache is not used in this run (give it with "
                    "--cache-dir to use it anyway)",
                    options_.dir.string()));
  return false;
}

void ChunkCache::make_default_dir() {
  std::call_once(made_, [&] {
    std::error_code ec;
    fs::create_directories(options_.dir.parent_path(), ec);
    ::mkdir(options_.dir.c_str(), 0700);
    (void)default_dir_is_safe();
  });
}

fs::path ChunkCache::default_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg == '/') return fs::path(xdg) / "libpkg/chunks";
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0')
    return fs::path(home) / ".cache/libpkg/chunks";
  // temp_directory_path() fails on a TMPDIR that is not a directory and
  // returns a relative TMPDIR as is: a relative cache directory would move
  // with the working directory, so both fall back to /tmp.
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec || tmp.is_relative()) tmp = "/tmp";
  return tmp / "libpkg-chunks";
}

namespace {

// Set to anything but "" or "0".
bool environment_flag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

}  // namespace

bool ChunkCache::disabled_by_environment() {
  return environment_flag("LIBPKG_NO_CACHE");
}

bool ChunkCache::verify_by_environment() {
  return environment_flag("LIBPKG_CACHE_VERIFY");
}

std::shared_ptr<ChunkCache> ChunkCache::open(bool no_cache,
                                             const std::optional<fs::path>& dir,
                                             std::optional<u64> max_bytes,
                                             LogFn log) {
  if (no_cache || disabled_by_environment()) return nullptr;
  ChunkCacheOptions o;
  if (dir) o.dir = *dir;
  if (max_bytes) o.max_bytes = *max_bytes;
  o.log = std::move(log);
  return std::make_shared<ChunkCache>(std::move(o));
}

std::string ChunkCache::encoder_fingerprint(int level) {
  // LIBDEFLATE_VERSION_STRING is the header's, but libdeflate is linked
  // dynamically: a rebuilt or upgraded library may emit other bytes for the
  // same input under the same version string. What it emits for a fixed
  // probe at the level identifies it; computed once per level and process.
  constexpr int kLevels = 13;  // libdeflate levels 0..12
  static std::array<std::once_flag, kLevels> once;
  static std::array<std::string, kLevels> prints;
  if (level < 0 || level >= kLevels) return "no level";
  std::call_once(once[level], [level] {
    // Text-like bytes with repeats at many distances and literals of every
    // frequency, so that matching, lazy parsing and Huffman choices all
    // show in the output.
    std::vector<u8> probe(32 * 1024);
    u32 x = 12345;
    for (size_t i = 0; i < probe.size(); ++i) {
      x = x * 1103515245u + 12345u;
      probe[i] = (x >> 24) % 3 == 0 && i >= 512
                     ? probe[i - 1 - (x >> 8) % 64 * (1 + (x >> 20) % 8)]
                     : static_cast<u8>('a' + (x >> 16) % 26);
    }
    std::unique_ptr<libdeflate_compressor, void (*)(libdeflate_compressor*)> c(
        libdeflate_alloc_compressor(level), libdeflate_free_compressor);
    if (!c) {
      prints[level] = "no compressor";
      return;
    }
    std::vector<u8> out(
        libdeflate_deflate_compress_bound(c.get(), probe.size()));
    out.resize(libdeflate_deflate_compress(c.get(), probe.data(), probe.size(),
                                           out.data(), out.size()));
    Sha256 h;
    h.update(out);
    prints[level] = Sha256::hex(h.finish());
  });
  return prints[level];
}

ChunkCache::Key ChunkCache::key(std::span<const u8> input, int level,
                                bool final) {
  return key(input, level, final, encoder_fingerprint(level));
}

ChunkCache::Key ChunkCache::key(std::span<const u8> input, int level,
                                bool final, std::string_view fingerprint) {
  Sha256 h;
  h.update(key_prefix(input.size(), level, final, fingerprint));
  h.update(input);
  return h.finish();
}

std::string ChunkCache::key_prefix(u64 size, int level, bool final) {
  return key_prefix(size, level, final, encoder_fingerprint(level));
}

std::string ChunkCache::key_prefix(u64 size, int level, bool final,
                                   std::string_view fingerprint) {
  return fmt::format(
      "libpkg chunk; libdeflate {}; encoder {}; rules {}; "
      "level {}; final {}; {} bytes\n",
      LIBDEFLATE_VERSION_STRING, fingerprint, kChunkRulesVersion, level,
      final ? 1 : 0, size);
}

ChunkCache::Key ChunkCache::key_for(std::string_view identity,
                                    std::span<const u8> input) {
  Sha256 h;
  h.update(fmt::format("{}; {} bytes\n", identity, input.size()));
  h.update(input);
  return h.finish();
}

fs::path ChunkCache::entry_path(const Key& key) const {
  const std::string hex = Sha256::hex(key);
  return options_.dir / hex.substr(0, 2) / hex.substr(2);
}

void ChunkCache::warn(const std::string& message) {
  if (!options_.log) return;
  std::lock_guard lock(log_mutex_);
  options_.log(message);
}

void ChunkCache::warn_unwritable(const std::string& message) {
  if (unwritable_.exchange(true)) return;
  warn(message + " (the chunk cache stores nothing more in this run)");
}

void ChunkCache::drop(const fs::path& path, bool count_miss,
                      const std::string& why) {
  ++corrupt_;
  if (count_miss) ++misses_;
  warn(fmt::format("warning: {}: {}; removed, the chunk is compressed again",
                   path.string(), why));
  ::unlink(path.c_str());
}

bool ChunkCache::load(const Key& key, std::span<const u8> input,
                      u32 input_crc32, bool final, u64 max_size,
                      std::vector<u8>& out, bool count_absent) {
  // `stored` is `out`'s bytes: the check completes them in place.
  return load_checked(
      key, input, input_crc32, max_size,
      [final, &out](std::span<const u8>, std::span<const u8> in) {
        return inflates_to(out, final, in);
      },
      "inflate", out, count_absent);
}

bool ChunkCache::load(const Key& key, std::span<const u8> input,
                      u32 input_crc32, u64 max_size,
                      const DecodeCheck& decodes_to_input,
                      std::vector<u8>& out) {
  return load_checked(key, input, input_crc32, max_size, decodes_to_input,
                      "decode", out);
}

namespace {

// An entry read whole: the stat of its file, its header, its bytes.
struct ReadEntry {
  struct stat st {};
  std::array<u8, kHeaderSize> header{};
  u32 input_crc32() const {
    return static_cast<u32>(get_le(header.data() + 16, 4));
  }
  u64 tag() const { return get_le(header.data() + 24, 8); }
  u64 stored_size() const { return get_le(header.data() + 8, 8); }
  u32 stored_crc32() const {
    return static_cast<u32>(get_le(header.data() + 20, 4));
  }
};

// Reads the entry open on `fd` into `out` (at most `max_size` bytes, the
// stored CRC checked); "" or why it is corrupt. Throws Errc::io on a read
// error.
std::string read_entry(int fd, const fs::path& path, u64 max_size, ReadEntry& e,
                       std::vector<u8>& out) {
  if (::fstat(fd, &e.st) != 0 || !S_ISREG(e.st.st_mode) ||
      read_full(fd, e.header, path.string()) != e.header.size() ||
      !std::equal(kMagic.begin(), kMagic.end(), e.header.begin()))
    return "not a chunk cache entry, or its header is truncated";
  const u64 len = get_le(e.header.data() + 8, 8);
  if (len > max_size || static_cast<u64>(e.st.st_size) != kHeaderSize + len)
    return fmt::format("{} bytes long, its header declares {} + {}",
                       e.st.st_size, kHeaderSize, len);
  out.resize(len);
  if (read_full(fd, out, path.string()) != len ||
      crc32_of(out) != get_le(e.header.data() + 20, 4)) {
    out.clear();
    return "checksum of the stored bytes does not match";
  }
  return {};
}

// O_NONBLOCK: a FIFO put there does not hang us (read_entry's fstat
// refuses it).
Fd open_entry(const fs::path& path) {
  return Fd(
      ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
}

// LRU order: a hit makes the entry young (mtime, which we set, rather than
// atime, which relatime/noatime mounts do not keep). Not our file (a shared
// cache): the order is only approximate, not an error.
void touch(int fd) {
  const struct timespec times[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
  (void)::futimens(fd, times);
}

}  // namespace

bool ChunkCache::own_tag_matches(const ReadEntryView& e, const Key& key) {
  if (verify_ || e.tag == 0 || !trustable_entry_file(e.uid, e.mode))
    return false;
  const auto k = tag_key(false);
  try {
    return k && hit_tag(*k, key, e.input_crc32, e.stored_size,
                        e.stored_crc32) == e.tag;
  } catch (const Error&) {
    return false;  // OpenSSL failed: the codec's check decides instead
  }
}

bool ChunkCache::load_checked(const Key& key, std::span<const u8> input,
                              u32 input_crc32, u64 max_size,
                              const DecodeCheck& decodes_to_input,
                              std::string_view verb, std::vector<u8>& out,
                              bool count_absent) {
  if (disabled_) {
    if (count_absent) ++misses_;
    return false;
  }
  const fs::path path = entry_path(key);
  Fd fd = open_entry(path);
  if (!fd) {
    if (count_absent) ++misses_;
    return false;
  }
  try {
    ReadEntry e;
    std::string corrupt = read_entry(fd.get(), path, max_size, e, out);
    if (corrupt.empty() && e.input_crc32() != input_crc32) {
      out.clear();
      corrupt = "checksum of the stored bytes does not match";
    }
    if (!corrupt.empty()) {
      drop(path, count_absent, corrupt);
      return false;
    }
    // Our own entry with our tag: its bytes are the ones we stored for this
    // key (hit_tag.hpp). Anyone else's, or a tag that does not match: the
    // codec's check.
    if (own_tag_matches({e.tag(), e.st.st_uid, e.st.st_mode, input_crc32,
                         e.stored_size(), e.stored_crc32()},
                        key)) {
      ++tagged_hits_;
    } else if (!decodes_to_input(out, input)) {
      out.clear();
      drop(path, count_absent,
           fmt::format("its bytes do not {} to the chunk's input", verb));
      return false;
    } else if (!verify_ && trustable_entry_file(e.st.st_uid, e.st.st_mode) &&
               tag_key(false)) {
      // Our own entry, proven by decoding, whose tag is missing or older
      // (written before tags, by tag version 1, under a key since cleared):
      // stored again with a tag, so the next run need not decode it.
      store(key, input_crc32, out);
    }
  } catch (const Error& e) {  // a read error: same as corrupt
    out.clear();
    drop(path, count_absent, e.message());
    return false;
  }
  touch(fd.get());
  ++hits_;
  return true;
}

ChunkCache::OwnRead ChunkCache::read_own(const Key& key, u64 max_size,
                                         std::optional<u32> input_crc32,
                                         std::vector<u8>& out,
                                         std::string& why) {
  const fs::path path = entry_path(key);
  Fd fd = open_entry(path);
  if (!fd) return OwnRead::absent;
  try {
    ReadEntry e;
    why = read_entry(fd.get(), path, max_size, e, out);
    if (!why.empty()) return OwnRead::corrupt;
    const u32 crc = input_crc32.value_or(e.input_crc32());
    if (e.input_crc32() != crc ||
        !own_tag_matches({e.tag(), e.st.st_uid, e.st.st_mode, crc,
                          e.stored_size(), e.stored_crc32()},
                         key))
      return OwnRead::not_vouched;
  } catch (const Error& e) {  // a read error: same as corrupt
    why = e.message();
    return OwnRead::corrupt;
  }
  touch(fd.get());
  return OwnRead::vouched;
}

bool ChunkCache::load_tagged(const Key& key, u32 input_crc32, u64 max_size,
                             std::vector<u8>& out) {
  if (disabled_) return false;
  std::string why;
  switch (read_own(key, max_size, input_crc32, out, why)) {
    case OwnRead::vouched:
      ++tagged_hits_;
      ++hits_;
      return true;
    case OwnRead::corrupt:
      drop(entry_path(key), false, why);
      break;
    case OwnRead::absent:
    case OwnRead::not_vouched:  // load() judges it with the input
      break;
  }
  out.clear();
  return false;
}

std::optional<std::vector<u8>> ChunkCache::load_own(const Key& key,
                                                    u64 max_size) {
  if (disabled_) return std::nullopt;
  std::vector<u8> out;
  std::string why;
  // Anything but our own tagged entry: the caller computes the value and
  // stores it again, replacing a corrupt entry.
  if (read_own(key, max_size, std::nullopt, out, why) != OwnRead::vouched)
    return std::nullopt;
  return out;
}

void ChunkCache::store(const Key& key, u32 input_crc32,
                       std::span<const u8> bytes) {
  if (unwritable_ || disabled_) return;
  if (default_) make_default_dir();
  if (disabled_) return;
  const fs::path path = entry_path(key);
  const fs::path sub = path.parent_path();
  std::error_code ec;
  fs::create_directories(sub, ec);
  if (ec) {
    warn_unwritable(
        fmt::format("warning: {}: cannot create the chunk cache "
                    "directory: {}",
                    sub.string(), ec.message()));
    return;
  }
  std::string tmp = (sub / (std::string(kTempPrefix) + "XXXXXX")).string();
  Fd fd(::mkostemp(tmp.data(), O_CLOEXEC));
  if (!fd) {
    warn_unwritable(
        fmt::format("warning: {}: cannot write to the chunk "
                    "cache: {}",
                    sub.string(), std::strerror(errno)));
    return;
  }
  std::array<u8, kHeaderSize> h{};
  std::copy(kMagic.begin(), kMagic.end(), h.begin());
  put_le(h.data() + 8, bytes.size(), 8);
  put_le(h.data() + 16, input_crc32, 4);
  const u32 stored_crc32 = crc32_of(bytes);
  put_le(h.data() + 20, stored_crc32, 4);
  put_le(h.data() + 24, tag_of(key, input_crc32, bytes.size(), stored_crc32),
         8);
  try {
    write_all(fd.get(), h, tmp);
    write_all(fd.get(), bytes, tmp);
    // Entries are read by other users of a shared cache directory.
    if (::fchmod(fd.get(), 0644) != 0 || ::close(fd.release()) != 0 ||
        ::rename(tmp.c_str(), path.c_str()) != 0)
      throw Error(Errc::io, tmp, std::strerror(errno));
  } catch (const Error& e) {
    ::unlink(tmp.c_str());
    warn_unwritable(
        fmt::format("warning: cannot write to the chunk cache: {}", e.what()));
    return;
  }
  stored_ += bytes.size();
}

std::optional<HitKey> ChunkCache::tag_key(bool create) {
  std::lock_guard lock(key_mutex_);
  switch (key_state_) {
    case KeyState::present:
      return key_;
    case KeyState::unavailable:
      return std::nullopt;
    case KeyState::absent:
      if (!create) return std::nullopt;  // looked already: no file
      break;
    case KeyState::unread:
      break;
  }
  const HitKeyFile file = read_hit_key(options_.dir, create);
  if (file.key) {
    key_ = *file.key;
    key_state_ = KeyState::present;
    return key_;
  }
  if (!file.refused.empty())
    warn(
        fmt::format("warning: {}; not used as the chunk cache's tag key: "
                    "every hit is checked by decoding it (slower)",
                    file.refused));
  key_state_ = create || !file.refused.empty() ? KeyState::unavailable
                                               : KeyState::absent;
  return std::nullopt;
}

u64 ChunkCache::tag_of(const Key& key, u32 input_crc32, u64 stored_size,
                       u32 stored_crc32) {
  const auto k = tag_key(true);
  if (!k) return 0;
  try {
    return hit_tag(*k, key, input_crc32, stored_size, stored_crc32);
  } catch (const Error&) {
    return 0;  // OpenSSL failed: an untagged entry is still a valid one
  }
}

ChunkCache::Usage ChunkCache::usage() const {
  Usage u;
  for (const Item& i : list_items(options_.dir)) {
    if (i.shape != Shape::entry) continue;
    ++u.entries;
    u.bytes += i.size;
  }
  return u;
}

ChunkCache::Usage ChunkCache::prune(u64 max_bytes) {
  const auto stale = fs::file_time_type::clock::now() - kStaleTemp;
  std::vector<Item> entries;
  Usage kept;
  for (Item& i : list_items(options_.dir)) {
    std::error_code ec;
    if (i.shape == Shape::entry) {
      kept.bytes += i.size;
      ++kept.entries;
      entries.push_back(std::move(i));
    } else if (i.mtime < stale) {
      fs::remove(i.path, ec);
    }
  }
  // Least recently used first; the path breaks ties so that two prunes of
  // the same directory agree on the order.
  std::sort(entries.begin(), entries.end(), [](const Item& a, const Item& b) {
    return a.mtime != b.mtime ? a.mtime < b.mtime : a.path < b.path;
  });
  for (const Item& i : entries) {
    if (kept.bytes <= max_bytes) break;
    // An entry that could not be removed still takes its room: counting it
    // as gone would report less than the directory holds.
    std::error_code ec;
    // (A file another process removed meanwhile is gone: no error.)
    fs::remove(i.path, ec);
    if (ec) continue;
    kept.bytes -= i.size;
    --kept.entries;
  }
  return kept;
}

void ChunkCache::prune_if_stored() {
  if (stored_ > 0) prune(options_.max_bytes);
}

void ChunkCache::clear() {
  for (const Item& i : list_items(options_.dir)) {
    std::error_code ec;
    fs::remove(i.path, ec);
  }
  ::unlink(hit_key_path(options_.dir).c_str());
  std::error_code ec;
  for (fs::directory_iterator it(options_.dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code e2;
    // Empty two-hex-digit subdirectories only (remove fails on others).
    if (name.size() == 2 && is_hex(name)) fs::remove(it->path(), e2);
  }
}

ChunkCache::Counters ChunkCache::counters() const {
  Counters c;
  c.hits = hits_;
  c.misses = misses_;
  c.corrupt = corrupt_;
  c.bytes_saved = saved_;
  c.bytes_stored = stored_;
  c.tagged_hits = tagged_hits_;
  c.memo_hits = memo_hits_;
  return c;
}

}  // namespace libpkg::archive
