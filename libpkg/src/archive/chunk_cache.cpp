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
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string_view>
#include <system_error>
#include <utility>

#include "archive/chunk_packs.hpp"
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

// The packs in DIR/packs; `mtime` is the inode's ctime, which a link sets
// and nobody can set back (the mtime is the archive's, its user's to touch).
std::vector<Item> list_packs(const fs::path& dir) {
  std::vector<Item> packs;
  std::error_code ec;
  for (fs::directory_iterator it(packs_dir(dir), ec), end; !ec && it != end;
       it.increment(ec)) {
    if (!is_pack_name(it->path().filename().string())) continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    const auto since_epoch = std::chrono::seconds(st.st_ctim.tv_sec) +
                             std::chrono::nanoseconds(st.st_ctim.tv_nsec);
    const auto ctime =
        std::chrono::file_clock::from_sys(std::chrono::system_clock::time_point(
            std::chrono::duration_cast<std::chrono::system_clock::duration>(
                since_epoch)));
    packs.push_back(
        {ctime, static_cast<u64>(st.st_size), it->path(), Shape::other});
  }
  return packs;
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
      "libpkg chunk; libdeflate {}; encoder {}; fast encoder {}; rules {}; "
      "level {}; final {}; {} bytes\n",
      LIBDEFLATE_VERSION_STRING, fingerprint, fast_deflate_fingerprint(),
      kChunkRulesVersion, level, final ? 1 : 0, size);
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

// An entry read whole: the stat of its file, its header, its bytes; for a
// pointer entry, where they are and what the pack is like.
struct ChunkEntryRead {
  struct stat st {};
  std::array<u8, kHeaderSize> header{};
  bool pointer = false;
  PackId pack{};
  u64 offset = 0;
  bool pack_gone = false;    // pruned meanwhile: a plain miss
  bool pack_bad = false;     // its bytes there do not check
  bool pack_closed = false;  // this user's, closed to other writers
  u32 input_crc32() const {
    return static_cast<u32>(get_le(header.data() + 16, 4));
  }
  u64 tag() const { return get_le(header.data() + 24, 8); }
  u64 stored_size() const { return get_le(header.data() + 8, 8); }
  u32 stored_crc32() const {
    return static_cast<u32>(get_le(header.data() + 20, 4));
  }
};

namespace {

std::string read_pointed(const fs::path& dir, u64 len, ChunkEntryRead& e,
                         std::vector<u8>& out);

// Reads the entry open on `fd` (in cache directory `dir`) into `out` (at
// most `max_size` bytes, the stored CRC checked); "" or why it is corrupt
// ("" with pack_gone set for a pointer whose pack is gone). Throws Errc::io
// on a read error.
std::string read_entry(int fd, const fs::path& dir, const fs::path& path,
                       u64 max_size, ChunkEntryRead& e, std::vector<u8>& out) {
  if (::fstat(fd, &e.st) != 0 || !S_ISREG(e.st.st_mode) ||
      read_full(fd, e.header, path.string()) != e.header.size())
    return "not a chunk cache entry, or its header is truncated";
  e.pointer =
      std::equal(kPointerMagic.begin(), kPointerMagic.end(), e.header.begin());
  if (!e.pointer && !std::equal(kMagic.begin(), kMagic.end(), e.header.begin()))
    return "not a chunk cache entry, or its header is truncated";
  const u64 len = get_le(e.header.data() + 8, 8);
  const u64 body = e.pointer ? kPointerTrailer : len;
  if (len > max_size || static_cast<u64>(e.st.st_size) != kHeaderSize + body)
    return fmt::format("{} bytes long, its header declares {} + {}",
                       e.st.st_size, kHeaderSize, body);
  if (e.pointer) {
    std::array<u8, kPointerTrailer> trailer{};
    if (read_full(fd, trailer, path.string()) != trailer.size())
      return "pointer entry truncated";
    e.offset = get_le(trailer.data(), 8);
    std::copy(trailer.begin() + 8, trailer.end(), e.pack.begin());
    return read_pointed(dir, len, e, out);
  }
  out.resize(len);
  if (read_full(fd, out, path.string()) != len ||
      crc32_of(out) != get_le(e.header.data() + 20, 4)) {
    out.clear();
    return "checksum of the stored bytes does not match";
  }
  return {};
}

// The bytes a pointer entry names, from its pack.
std::string read_pointed(const fs::path& dir, u64 len, ChunkEntryRead& e,
                         std::vector<u8>& out) {
  const fs::path pack = pack_path(dir, e.pack);
  Fd fd(::open(pack.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd) {
    e.pack_gone = errno == ENOENT;
    return e.pack_gone ? std::string()
                       : fmt::format("its pack {}: {}", pack.string(),
                                     std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      e.offset > static_cast<u64>(st.st_size) ||
      len > static_cast<u64>(st.st_size) - e.offset) {
    e.pack_bad = true;
    return fmt::format("its pack {} is not a file holding its bytes",
                       pack.string());
  }
  e.pack_closed = trustable_entry_file(st.st_uid, st.st_mode);
  out.resize(len);
  if (pread_full(fd.get(), out, e.offset, pack.string()) != len ||
      crc32_of(out) != get_le(e.header.data() + 20, 4)) {
    out.clear();
    e.pack_bad = true;
    return fmt::format(
        "checksum of the stored bytes in its pack {} does not match (the "
        "archive it links to was changed in place)",
        pack.string());
  }
  return {};
}

// Whether a tag may vouch for the entry: its file and its pack (if any) are
// this user's, closed to other writers.
bool closed_to_others(const ChunkEntryRead& e) {
  return trustable_entry_file(e.st.st_uid, e.st.st_mode) &&
         (!e.pointer || e.pack_closed);
}

// What the entry's tag binds.
ChunkCache::Key tag_subject(const ChunkEntryRead& e,
                            const ChunkCache::Key& key) {
  return e.pointer ? pointer_subject(key, e.pack, e.offset) : key;
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

void ChunkCache::forget_changed_pack(const ChunkEntryRead& e, const Key& key) {
  // The pointer is intact and ours (its tag holds), its pack's bytes are
  // not what it wrote there: the archive was changed in place, and every
  // pointer into it would fail the same way. Removed at the first, the
  // others are then plain misses. A damaged pointer leaves the pack alone.
  if (e.pack_bad &&
      own_tag_matches({e.tag(), closed_to_others(e), tag_subject(e, key),
                       e.input_crc32(), e.stored_size(), e.stored_crc32()}))
    ::unlink(pack_path(options_.dir, e.pack).c_str());
}

bool ChunkCache::own_tag_matches(const ReadEntryView& e) {
  if (verify_ || e.tag == 0 || !e.closed) return false;
  const auto k = tag_key(false);
  try {
    return k && hit_tag(*k, e.subject, e.input_crc32, e.stored_size,
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
    ChunkEntryRead e;
    std::string corrupt =
        read_entry(fd.get(), options_.dir, path, max_size, e, out);
    if (e.pack_gone) {  // pruned by another process: a plain miss
      ::unlink(path.c_str());
      if (count_absent) ++misses_;
      return false;
    }
    if (corrupt.empty() && e.input_crc32() != input_crc32) {
      out.clear();
      corrupt = "checksum of the stored bytes does not match";
    }
    if (!corrupt.empty()) {
      forget_changed_pack(e, key);
      drop(path, count_absent, corrupt);
      return false;
    }
    // Our own entry with our tag: its bytes are the ones we stored for this
    // key (hit_tag.hpp). Anyone else's, or a tag that does not match: the
    // codec's check.
    if (own_tag_matches({e.tag(), closed_to_others(e), tag_subject(e, key),
                         input_crc32, e.stored_size(), e.stored_crc32()})) {
      ++tagged_hits_;
    } else if (!decodes_to_input(out, input)) {
      out.clear();
      drop(path, count_absent,
           fmt::format("its bytes do not {} to the chunk's input", verb));
      return false;
    } else if (!verify_ && closed_to_others(e) && tag_key(false)) {
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
    ChunkEntryRead e;
    why = read_entry(fd.get(), options_.dir, path, max_size, e, out);
    if (e.pack_gone) {
      ::unlink(path.c_str());
      return OwnRead::absent;
    }
    if (!why.empty()) {
      forget_changed_pack(e, key);
      return OwnRead::corrupt;
    }
    const u32 crc = input_crc32.value_or(e.input_crc32());
    if (e.input_crc32() != crc ||
        !own_tag_matches({e.tag(), closed_to_others(e), tag_subject(e, key),
                          crc, e.stored_size(), e.stored_crc32()}))
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

namespace {

// A header of a plain (kMagic) or pointer (kPointerMagic) entry.
std::array<u8, kHeaderSize> entry_header(const std::array<u8, 8>& magic,
                                         u64 stored_size, u32 input_crc32,
                                         u32 stored_crc32, u64 tag) {
  std::array<u8, kHeaderSize> h{};
  std::copy(magic.begin(), magic.end(), h.begin());
  put_le(h.data() + 8, stored_size, 8);
  put_le(h.data() + 16, input_crc32, 4);
  put_le(h.data() + 20, stored_crc32, 4);
  put_le(h.data() + 24, tag, 8);
  return h;
}

}  // namespace

bool ChunkCache::ready_to_store() {
  if (unwritable_ || disabled_) return false;
  if (default_) make_default_dir();
  if (disabled_) return false;
  // Before the tag: the first one creates the tag key in this directory.
  std::error_code ec;
  fs::create_directories(options_.dir, ec);
  if (ec) {
    warn_unwritable(
        fmt::format("warning: {}: cannot create the chunk cache "
                    "directory: {}",
                    options_.dir.string(), ec.message()));
    return false;
  }
  return true;
}

void ChunkCache::store(const Key& key, u32 input_crc32,
                       std::span<const u8> bytes) {
  store_with_crc(key, input_crc32, bytes, crc32_of(bytes));
}

void ChunkCache::store_with_crc(const Key& key, u32 input_crc32,
                                std::span<const u8> bytes, u32 stored_crc32) {
  if (!ready_to_store()) return;
  const auto h =
      entry_header(kMagic, bytes.size(), input_crc32, stored_crc32,
                   tag_of(key, input_crc32, bytes.size(), stored_crc32));
  if (write_entry(key, h, bytes)) stored_ += bytes.size();
}

bool ChunkCache::write_entry(const Key& key, std::span<const u8> header,
                             std::span<const u8> payload) {
  const fs::path path = entry_path(key);
  const fs::path sub = path.parent_path();
  std::error_code ec;
  fs::create_directories(sub, ec);
  if (ec) {
    warn_unwritable(
        fmt::format("warning: {}: cannot create the chunk cache "
                    "directory: {}",
                    sub.string(), ec.message()));
    return false;
  }
  std::string tmp = (sub / (std::string(kTempPrefix) + "XXXXXX")).string();
  Fd fd(::mkostemp(tmp.data(), O_CLOEXEC));
  if (!fd) {
    warn_unwritable(
        fmt::format("warning: {}: cannot write to the chunk "
                    "cache: {}",
                    sub.string(), std::strerror(errno)));
    return false;
  }
  try {
    write_all(fd.get(), header, tmp);
    write_all(fd.get(), payload, tmp);
    // Entries are read by other users of a shared cache directory.
    if (::fchmod(fd.get(), 0644) != 0 || ::close(fd.release()) != 0 ||
        ::rename(tmp.c_str(), path.c_str()) != 0)
      throw Error(Errc::io, tmp, std::strerror(errno));
  } catch (const Error& e) {
    ::unlink(tmp.c_str());
    warn_unwritable(
        fmt::format("warning: cannot write to the chunk cache: {}", e.what()));
    return false;
  }
  return true;
}

void ChunkCache::store_packed(int fd, std::span<const PackedChunk> chunks) {
  if (chunks.empty() || !ready_to_store()) return;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;  // a device
  // A pack others may write could not be trusted by its tags: every hit
  // would be inflated. Its bytes are copied into plain entries instead.
  u64 chunk_bytes = 0;
  for (const PackedChunk& c : chunks) chunk_bytes += c.size;
  const u64 size = static_cast<u64>(st.st_size);
  std::string why;
  const std::optional<PackId> pack =
      options_.link_archives && trustable_entry_file(st.st_uid, st.st_mode) &&
              chunk_bytes >= size / 2 && size <= options_.max_bytes / 4
          ? link_pack(fd, options_.dir, why)
          : std::nullopt;
  if (!pack) {
    store_read_back(fd, chunks);
    return;
  }
  for (const PackedChunk& c : chunks) {
    const u64 tag = tag_of(pointer_subject(c.key, *pack, c.offset),
                           c.input_crc32, c.size, c.stored_crc32);
    const auto h =
        entry_header(kPointerMagic, c.size, c.input_crc32, c.stored_crc32, tag);
    std::array<u8, kPointerTrailer> trailer{};
    put_le(trailer.data(), c.offset, 8);
    std::copy(pack->begin(), pack->end(), trailer.begin() + 8);
    if (!write_entry(c.key, h, trailer)) return;
    stored_ += c.size;
  }
}

void ChunkCache::store_read_back(int fd, std::span<const PackedChunk> chunks) {
  std::vector<u8> bytes;
  for (const PackedChunk& c : chunks) {
    if (unwritable_) return;
    try {
      bytes.resize(c.size);
      // Changed since it was written (not by us): nothing to store.
      if (pread_full(fd, bytes, c.offset, "archive") != c.size ||
          crc32_of(bytes) != c.stored_crc32)
        continue;
    } catch (const Error&) {
      return;  // unreadable: the archive is in place, the cache is optional
    }
    store_with_crc(c.key, c.input_crc32, bytes, c.stored_crc32);
  }
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

namespace {

// The pack a pointer entry file names; nullopt for a plain entry (or one
// that cannot be read: it is judged when looked up).
std::optional<PackId> pointed_pack(const Item& i) {
  if (i.size != kHeaderSize + kPointerTrailer) return std::nullopt;
  Fd fd = open_entry(i.path);
  std::array<u8, kHeaderSize + kPointerTrailer> bytes{};
  try {
    if (!fd || read_full(fd.get(), bytes, i.path.string()) != bytes.size() ||
        !std::equal(kPointerMagic.begin(), kPointerMagic.end(), bytes.begin()))
      return std::nullopt;
  } catch (const Error&) {
    return std::nullopt;
  }
  PackId id{};
  std::copy(bytes.begin() + kHeaderSize + 8, bytes.end(), id.begin());
  return id;
}

// What prune() removes as one: a plain entry, or a pack with its pointers.
struct EvictionUnit {
  struct File {
    fs::path path;
    u64 size;
    bool pack;
  };
  fs::file_time_type mtime;  // a pack's: the youngest of its pointers'
  std::vector<File> files;   // a pack's pointers first, then the pack
  bool pointed = false;      // a pack with pointers
};

}  // namespace

ChunkCache::Usage ChunkCache::usage() const {
  Usage u;
  for (const Item& i : list_items(options_.dir)) {
    if (i.shape != Shape::entry) continue;
    ++u.entries;
    u.bytes += i.size;
  }
  for (const Item& p : list_packs(options_.dir)) {
    ++u.packs;
    u.bytes += p.size;
  }
  return u;
}

ChunkCache::Usage ChunkCache::prune(u64 max_bytes) {
  const auto stale = fs::file_time_type::clock::now() - kStaleTemp;
  std::vector<EvictionUnit> units;
  std::map<fs::path, std::size_t> unit_of_pack;
  for (Item& p : list_packs(options_.dir)) {
    unit_of_pack.emplace(p.path, units.size());
    units.push_back({p.mtime, {{p.path, p.size, true}}});
  }
  const std::size_t packs = units.size();
  for (Item& i : list_items(options_.dir)) {
    std::error_code ec;
    if (i.shape != Shape::entry) {
      if (i.mtime < stale) fs::remove(i.path, ec);
      continue;
    }
    const std::optional<PackId> pack = pointed_pack(i);
    if (!pack) {
      units.push_back({i.mtime, {{i.path, i.size, false}}});
      continue;
    }
    const fs::path pack_file = pack_path(options_.dir, *pack);
    auto it = unit_of_pack.find(pack_file);
    if (it == unit_of_pack.end()) {
      // Not listed above: gone (a dead pointer), or linked by another
      // writer since the listing. A writer links its pack before it writes
      // the pointers, so a pointer seen here whose pack exists now is live.
      struct stat st {};
      if (::stat(pack_file.c_str(), &st) != 0) {
        fs::remove(i.path, ec);
        continue;
      }
      it = unit_of_pack.emplace(pack_file, units.size()).first;
      units.push_back(
          {i.mtime, {{pack_file, static_cast<u64>(st.st_size), true}}});
    }
    EvictionUnit& u = units[it->second];
    u.mtime = u.pointed ? std::max(u.mtime, i.mtime) : i.mtime;
    u.pointed = true;
    u.files.insert(u.files.end() - 1, {i.path, i.size, false});
  }
  Usage kept;
  std::vector<EvictionUnit> live;
  for (std::size_t n = 0; n < units.size(); ++n) {
    EvictionUnit& u = units[n];
    // A pack without pointers is linked but not pointed at yet (a writer
    // between the two steps; its ctime is the link's) or orphaned (its
    // keys stored again since): removed once older than any writer takes.
    if (n < packs && !u.pointed && u.mtime < stale) {
      std::error_code ec;
      fs::remove(u.files.back().path, ec);
      if (!ec) continue;
    }
    for (const EvictionUnit::File& f : u.files) {
      kept.bytes += f.size;
      ++(f.pack ? kept.packs : kept.entries);
    }
    live.push_back(std::move(u));
  }
  // Least recently used first; the first path breaks ties so that two
  // prunes of the same directory agree on the order.
  std::sort(live.begin(), live.end(),
            [](const EvictionUnit& a, const EvictionUnit& b) {
              return a.mtime != b.mtime
                         ? a.mtime < b.mtime
                         : a.files.front().path < b.files.front().path;
            });
  for (const EvictionUnit& u : live) {
    if (kept.bytes <= max_bytes) break;
    // A file that could not be removed still takes its room: counting it
    // as gone would report less than the directory holds. (A file another
    // process removed meanwhile is gone: no error.)
    for (const EvictionUnit::File& f : u.files) {
      std::error_code ec;
      fs::remove(f.path, ec);
      if (ec) continue;
      kept.bytes -= f.size;
      --(f.pack ? kept.packs : kept.entries);
    }
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
  for (const Item& p : list_packs(options_.dir)) {
    std::error_code ec;
    fs::remove(p.path, ec);
  }
  ::rmdir(packs_dir(options_.dir).c_str());  // when empty
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
