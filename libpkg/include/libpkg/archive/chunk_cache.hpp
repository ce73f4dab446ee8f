// SPDX-License-Identifier: BSD-3-Clause
// A content-addressed cache of deflated chunks, shared by the zip writers of
// many processes (the jobs of a nightly) and days.
//
// The zip writer deflates a large member in fixed chunks whose boundaries
// depend only on the member size (zip_writer.hpp); a grafted CUDA library
// has the same bytes in every configuration of a nightly, so its chunks
// deflate to the same bytes again. The cache maps (SHA-256 of the chunk's
// input, level, encoder identity: libdeflate's version, a fingerprint of the
// loaded libdeflate's output and kChunkRulesVersion, whether the chunk ends its
// member) to exactly the bytes the writer would have produced, so archives are
// byte-identical with or without it and for any thread count.
//
// Layout: DIR/<2 hex>/<62 hex> per key. An entry is a 32-byte header (magic
// with the format version, stored length, CRC-32 of the chunk's input,
// CRC-32 of the stored bytes, hit tag: 0 in entries written without a key,
// as all were before tags) followed by the stored bytes. DIR/.hit-key-<uid>
// is each user's tag key.
// - Packs: the zip writer stores the chunks of an archive it committed
//   (store_packed()) as a hard link to that archive, DIR/packs/<32 hex>,
//   and one pointer entry per chunk: the same header under its own magic,
//   then the offset of the bytes in the pack and the pack's id. The bytes
//   are checked as an entry's are; the tag binds the pack and the offset
//   too. A pack is never written to, so the archive's bytes stay what the
//   user got; if the archive is changed in place later, its pointers fail
//   their CRC and are dropped. Where no link can be made (another file
//   system), the bytes are read back into plain entries.
// - Writes go to a temporary file in the entry's directory, renamed into
//   place: readers see a whole entry or none. No lock is taken, ever: two
//   processes storing one key write the same bytes, and the last rename
//   wins.
// - LRU: a hit sets the entry's mtime to now (futimens; atime is not used,
//   since relatime/noatime mounts do not maintain it). prune() removes the
//   entries with the oldest mtime first until the rest fits. A pack goes
//   as one: with all its pointers, when the youngest of them is the oldest
//   left (its mtime is the archive's, never touched).
// - An entry whose header, length or checksums do not match (truncated,
//   flipped bits) is removed with a warning through the LogFn and counted as
//   a miss: the chunk is compressed again and the entry's bytes are never
//   used.
// - A cache that cannot be written (read-only, full, not a directory) warns
//   once and stores nothing more; the archive is written as without it.
//   Lookups keep working on whatever is readable.
// The checksums guard against accidents (a crash, a full disk, bit rot).
// Against someone who can write the cache directory (a shared cache, a
// planted entry with forged CRCs), a hit is used only if it is this user's
// own entry, closed to other writers, with a valid tag, a MAC under a key
// only this user can read (archive/hit_tag.hpp, the header's last 8 bytes),
// or else if it inflates
// to exactly the chunk's input: a cache can only save time, never change
// what an archive contains.
#pragma once

#include <array>
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/base/callbacks.hpp"
#include "libpkg/base/integers.hpp"

namespace libpkg::archive {

struct ChunkEntryRead;  // an entry read whole (chunk_cache.cpp)

/// Where a ChunkCache lives, how large it may grow and where its warnings go.
struct ChunkCacheOptions {
  std::filesystem::path dir;  // empty: ChunkCache::default_dir()
  u64 max_bytes = u64{20} << 30;
  // Check every hit by decoding it, trusting no tag, memo or memoized
  // digest (also LIBPKG_CACHE_VERIFY=1): for a cache on a file system that
  // fakes ownership and permissions (some FUSE and NFS setups), where the
  // rule that makes a tag enough does not hold. Slower, never different.
  bool verify_every_hit = false;
  // Store the chunks of a committed archive as a link to it (a pack) and
  // pointers into it, where store_packed() allows; false: always as plain
  // entries with copies of their bytes.
  bool link_archives = true;
  // Warnings (a dropped corrupt entry, an unwritable directory). Called from
  // the writer's worker threads, one call at a time.
  LogFn log;
};

/// The cache of deflated chunks described above; every operation is best-effort
/// and throws nothing, failures are warnings through the LogFn.
class ChunkCache {
 public:
  /// A cache key: the SHA-256 that key() computes.
  using Key = std::array<u8, 32>;

  /// A cache over `options.dir`; creates nothing. When `options.dir` is
  /// empty: default_dir(), created with mode 0700 by the first store() (so
  /// that stats, prune, clear and lookups leave no directory behind); if it
  /// is not a directory owned by this user or others may write it, warns
  /// and is not used.
  explicit ChunkCache(ChunkCacheOptions options);

  /// $XDG_CACHE_HOME/libpkg/chunks when XDG_CACHE_HOME is an absolute path,
  /// else $HOME/.cache/libpkg/chunks (the XDG base directory rule).
  /// When HOME is unset too, <temp dir>/libpkg-chunks (/tmp when the temp
  /// dir is missing or relative: the result is always absolute). Never throws.
  static std::filesystem::path default_dir();
  /// LIBPKG_NO_CACHE set to anything but "" or "0".
  /// Never throws.
  static bool disabled_by_environment();
  /// LIBPKG_CACHE_VERIFY set to anything but "" or "0" (see
  /// ChunkCacheOptions::verify_every_hit). Never throws.
  static bool verify_by_environment();
  /// The cache a frontend asked for: none with `no_cache` or
  /// LIBPKG_NO_CACHE, else one over `dir` (default_dir() when unset).
  /// Never throws.
  static std::shared_ptr<ChunkCache> open(
      bool no_cache, const std::optional<std::filesystem::path>& dir,
      std::optional<u64> max_bytes, LogFn log);

  /// The cache directory.
  const std::filesystem::path& dir() const { return options_.dir; }
  /// The size prune_if_stored() prunes to.
  u64 max_bytes() const { return options_.max_bytes; }

  /// The key of a chunk: SHA-256 over the encoder identity (libdeflate version,
  /// encoder_fingerprint(level), the fingerprint of the igzip that deflates
  /// nearly random runs, chunk rules version), `level`, `final`, the size and
  /// `input`; never throws.
  static Key key(std::span<const u8> input, int level, bool final);
  /// key() with the given encoder fingerprint (for tests).
  static Key key(std::span<const u8> input, int level, bool final,
                 std::string_view fingerprint);
  /// What key() hashes before the input (the encoder identity, `level`,
  /// `final`, the input's `size`): for a caller that hashes the input in a
  /// pass of its own (the zip writer, together with the RECORD hash); a
  /// SHA-256 over this prefix and then the input is key(). Never throws.
  static std::string key_prefix(u64 size, int level, bool final);
  /// key_prefix() with the given encoder fingerprint.
  static std::string key_prefix(u64 size, int level, bool final,
                                std::string_view fingerprint);
  /// The key of a chunk another codec compresses (the .tar.bz2 writer's
  /// blocks): SHA-256 over `identity`, the size and `input`. `identity` must
  /// name the codec, its version and what else decides its bytes (level,
  /// rules); it must not start with "libpkg chunk;", the deflate keys'
  /// prefix, so no key of one codec can be another's. Never throws.
  static Key key_for(std::string_view identity, std::span<const u8> input);
  /// SHA-256 (hex) of what the libdeflate loaded in this process emits for a
  /// fixed probe buffer at `level`: a changed libdeflate build changes every
  /// key. Computed once per level and process; thread-safe, never throws.
  static std::string encoder_fingerprint(int level);

  /// On a hit replaces `out` with the entry's bytes (at most `max_size`,
  /// else the entry is corrupt) and returns true. `input_crc32` is the
  /// CRC-32 of `input`, checked against the entry's; then, unless the entry
  /// is this user's (closed to other writers) with a valid tag, it is
  /// inflated (as a whole stream when
  /// `final`, else as a non-final chunk) and must give exactly `input`.
  /// Thread-safe.
  /// A corrupt or mismatching entry is removed with a warning and counted as
  /// a miss; never throws. Without `count_absent`, a lookup that finds no
  /// usable entry counts no miss (a dropped entry still counts as corrupt):
  /// the zip writer looks up before its incompressible test when the key
  /// cost it nothing, and counts the miss with count_miss() only for a
  /// chunk it then compresses.
  bool load(const Key& key, std::span<const u8> input, u32 input_crc32,
            bool final, u64 max_size, std::vector<u8>& out,
            bool count_absent = true);
  /// Whether an entry's bytes decode to exactly the chunk's input (the
  /// codec's own check of a hit; called on the loading thread).
  using DecodeCheck = std::function<bool(std::span<const u8> stored,
                                         std::span<const u8> input)>;
  /// load() for a key_for() key: the same checks, with `decodes_to_input`
  /// in place of the inflate. Thread-safe; a corrupt or mismatching entry
  /// is removed with a warning and counted as a miss; never throws.
  bool load(const Key& key, std::span<const u8> input, u32 input_crc32,
            u64 max_size, const DecodeCheck& decodes_to_input,
            std::vector<u8>& out);
  /// load() for a caller that has not read the chunk (the zip writer
  /// following a member memo, member_memo.hpp): a hit only if the entry is
  /// this user's own, closed to other writers, with a valid tag and the
  /// input CRC-32 `input_crc32`, since nothing else can be checked without
  /// the input. Otherwise false and nothing counted: the caller reads the
  /// chunk and calls load(), which checks anyone's entry by inflating it.
  /// A corrupt entry is removed with a warning, as by load(). Thread-safe,
  /// never throws.
  bool load_tagged(const Key& key, u32 input_crc32, u64 max_size,
                   std::vector<u8>& out);
  /// The bytes stored under `key` (at most `max_size`) if the entry is this
  /// user's own with a valid tag, for values nothing else can check (the
  /// memoized file digests of file_digest.hpp); nullopt otherwise (absent,
  /// corrupt, another user's, untagged): the caller computes the value and
  /// stores it again. Not counted; thread-safe, never throws.
  std::optional<std::vector<u8>> load_own(const Key& key, u64 max_size);
  /// Stores `bytes` under `key`; failures warn once and are otherwise
  /// ignored. Thread-safe.
  void store(const Key& key, u32 input_crc32, std::span<const u8> bytes);
  /// A chunk whose stored bytes lie in an archive (store_packed()).
  struct PackedChunk {
    Key key{};
    u32 input_crc32 = 0;
    u64 offset = 0;  // of the stored bytes in the archive
    u64 size = 0;
    u32 stored_crc32 = 0;  // of those bytes
  };
  /// Stores `chunks`, whose bytes the archive open on `fd` holds (a zip the
  /// writer committed): links the archive into DIR/packs and writes one
  /// pointer entry per chunk. The chunks' bytes are read back and stored as
  /// plain entries instead when the archive is not a regular file of this
  /// user closed to other writers, cannot be linked (another file system),
  /// is mostly other bytes (the chunks are less than half of it: a pack
  /// would keep the rest too) or large for the cap (over a quarter of
  /// max_bytes: prune() removes a pack whole, so a cache smaller than a few
  /// archives would keep nothing); one that cannot be read (a device)
  /// stores nothing. Failures warn once, as store()'s do. Thread-safe.
  void store_packed(int fd, std::span<const PackedChunk> chunks);
  /// store_packed() without a pack: the bytes read back from `fd` into plain
  /// entries (for a writer about to truncate them away). Bytes that no
  /// longer match their CRC-32 are skipped. Thread-safe.
  void store_read_back(int fd, std::span<const PackedChunk> chunks);
  /// Input bytes whose compression a hit spared (for the counters).
  void count_saved(u64 input_bytes) { saved_ += input_bytes; }
  /// A lookup that load(..., false) did not count.
  void count_miss() { ++misses_; }
  /// A member written from its memo (member_memo.hpp).
  void count_memo_hit() { ++memo_hits_; }

  /// The entries in the cache directory and their total size.
  struct Usage {
    u64 entries = 0;
    u64 bytes = 0;  // file sizes, headers included, each pack once
    u64 packs = 0;  // of the entries' bytes
  };
  /// Counts the entries and their bytes (temporary files not included); what
  /// cannot be listed is skipped, never throws.
  Usage usage() const;
  /// Removes temporary files older than an hour (their writer died), then
  /// the least recently used entries (a pack with all its pointers) until
  /// the rest totals at most `max_bytes`. Returns what is left. Pointers
  /// whose pack is gone and packs an hour without pointers go too.
  /// Failures to list or remove are skipped (not reported; an entry that
  /// could not be removed is counted as left); never throws.
  Usage prune(u64 max_bytes);
  /// prune(max_bytes()) when this object stored anything: writers call it
  /// after commit.
  void prune_if_stored();
  /// Removes every entry, pack and temporary file, and this user's tag key (the
  /// next store makes a new one).
  /// Removes empty two-hex-digit subdirectories too; failures are skipped,
  /// never throws.
  void clear();

  /// This object's lookups since it was created.
  struct Counters {
    u64 hits = 0;
    u64 misses = 0;        // including corrupt entries
    u64 corrupt = 0;       // entries dropped
    u64 bytes_saved = 0;   // input bytes not compressed thanks to hits
    u64 bytes_stored = 0;  // compressed bytes written to the cache
    u64 tagged_hits = 0;   // hits trusted by their tag, not inflated
    u64 memo_hits = 0;     // members written from their memo, unhashed
  };
  /// A snapshot of this object's counters; never throws.
  Counters counters() const;

 private:
  std::filesystem::path entry_path(const Key& key) const;
  // Both load()s: `verb` names the check in the warning ("inflate").
  bool load_checked(const Key& key, std::span<const u8> input, u32 input_crc32,
                    u64 max_size, const DecodeCheck& decodes_to_input,
                    std::string_view verb, std::vector<u8>& out,
                    bool count_absent = true);
  void warn(const std::string& message);
  void warn_unwritable(const std::string& message);
  void drop(const std::filesystem::path& path, bool count_miss,
            const std::string& why);
  // The default directory's safety rule (owned by us, closed to others);
  // false, with a warning, when it is not safe to use.
  bool default_dir_is_safe();
  // Creates the default directory (0700) once, for the first store().
  void make_default_dir();
  // This user's tag key (hit_tag.hpp), read at the first call, created by
  // the first store() (`create`) when missing; none when refused or not
  // creatable (entries are then stored with tag 0, hits inflated).
  std::optional<std::array<u8, 32>> tag_key(bool create);
  // What own_tag_matches() needs of an entry's files and header (the
  // stored CRC already checked against the stored bytes).
  struct ReadEntryView {
    u64 tag;
    bool closed;  // its file (and pack) this user's, closed to other writers
    Key subject;  // what the tag binds: the key, or pointer_subject()
    u32 input_crc32;
    u64 stored_size;
    u32 stored_crc32;
  };
  // Whether the entry (closed, tag not 0) carries its tag under this
  // user's key; never throws.
  bool own_tag_matches(const ReadEntryView& e);
  // Removes the pack of a pointer entry read whole whose bytes there
  // failed their CRC, when the pointer itself is intact and ours.
  void forget_changed_pack(const ChunkEntryRead& e, const Key& key);
  // store() of bytes whose CRC-32 the caller has just checked.
  void store_with_crc(const Key& key, u32 input_crc32,
                      std::span<const u8> bytes, u32 stored_crc32);
  // Writes an entry file for `key` (temp file + rename): `header` (a
  // plain or pointer header, tag included), then `payload`. False after a
  // warning when the cache cannot be written.
  bool write_entry(const Key& key, std::span<const u8> header,
                   std::span<const u8> payload);
  // Whether anything can be stored: the directory is there (created when
  // missing) and usable; warns once when not.
  bool ready_to_store();

  // What read_own() found under a key.
  enum class OwnRead { absent, corrupt, not_vouched, vouched };
  // load_tagged() and load_own(): reads the entry of `key` into `out` (at
  // most `max_size` bytes) and checks that it is this user's own, tagged
  // for `input_crc32` (for the entry's own input CRC-32 when nullopt); a
  // vouched entry becomes young (LRU). `why` says what is wrong with a
  // corrupt one (a read error included). Counts nothing, never throws.
  OwnRead read_own(const Key& key, u64 max_size, std::optional<u32> input_crc32,
                   std::vector<u8>& out, std::string& why);
  // The tag store() writes for stored bytes of this size and CRC: 0 without
  // a key.
  u64 tag_of(const Key& key, u32 input_crc32, u64 stored_size,
             u32 stored_crc32);

  ChunkCacheOptions options_;
  std::mutex log_mutex_;
  std::atomic<bool> unwritable_{false};
  bool default_ = false;               // options_.dir is default_dir()
  bool verify_ = false;                // trust no tag (verify_every_hit)
  std::once_flag made_;                // make_default_dir() ran
  std::atomic<bool> disabled_{false};  // the default directory is unsafe
  std::atomic<u64> hits_{0}, misses_{0}, corrupt_{0}, saved_{0}, stored_{0},
      tagged_hits_{0}, memo_hits_{0};
  // tag_key()'s state: not read yet, no file (yet), a key, refused or not
  // creatable (final: no more attempts in this run).
  enum class KeyState { unread, absent, present, unavailable };
  std::mutex key_mutex_;
  KeyState key_state_ = KeyState::unread;
  std::array<u8, 32> key_{};
};

}  // namespace libpkg::archive
