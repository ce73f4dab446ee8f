// SPDX-License-Identifier: BSD-3-Clause
#include "archive/deflate_scan.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <memory>

namespace libpkg::archive {

namespace {

// ---------------------------------------------------------------------------
// Bit input

u64 load_le64(const u8* p) {
  u64 v = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&v, p, sizeof v);
  } else {
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  }
  return v;
}

constexpr u64 low_bits(u32 n) { return (u64{1} << n) - 1; }

// Deflate's bits, least significant first, in a 64-bit buffer that one
// unaligned 8-byte load tops up to at least 56 bits: enough for the longest
// length code with its extra bits (20) and the longest distance code with
// its extra bits (28) between two refills. Bits above `left_` are the
// start of the next unread byte (or zeros past the end), so ORing the next
// load over them is harmless.
//
// Near the end the 8 bytes come from a zero-padded copy; decoding may then
// run over zero bits past the end, which is caught at the next refill (and
// by the caller's final position check), so nothing outside the input is
// ever read and a truncated stream cannot loop forever.
class BitReader {
 public:
  BitReader() = default;
  explicit BitReader(std::span<const u8> in)
      : data_(in.data()), size_(in.size()) {}

  // False once more bits were consumed than the input holds.
  bool refill() {
    if (pos_ + 8 <= size_) [[likely]] {
      add_word(load_le64(data_ + pos_));
      return true;
    }
    return refill_tail();
  }

  u64 bits() const { return buf_; }
  u32 available() const { return left_; }
  void consume(u32 n) {
    buf_ >>= n;
    left_ -= n;
  }
  u32 take(u32 n) {
    const u32 v = static_cast<u32>(buf_ & low_bits(n));
    consume(n);
    return v;
  }
  // Bits consumed since the start of the input.
  u64 position() const { return pos_ * 8 - left_; }
  bool past_end() const { return position() > size_ * 8; }

  u64 size_bits() const { return size_ * 8; }
  u64 size_bytes() const { return size_; }
  // refill() for a caller that knows 8 bytes from loaded_bytes() are in
  // the input.
  void refill_unchecked() { add_word(load_le64(data_ + pos_)); }
  // Whole bytes loaded so far: position() is at most 8 * this.
  u64 loaded_bytes() const { return pos_; }

  // A reader of the same input from bit `bit` (before its end) on, with at
  // least 56 bits loaded.
  BitReader at_bit(u64 bit) const {
    BitReader r(std::span<const u8>(data_, size_));
    r.pos_ = bit / 8;
    r.refill();
    r.consume(static_cast<u32>(bit % 8));
    r.refill();
    return r;
  }

  // Drops the bits up to the next byte boundary, as a stored block does.
  void align_to_byte() { consume(left_ & 7); }
  // Skips `n` bytes from the current (byte-aligned) position; false if they
  // run past the end.
  bool skip_bytes(u64 n) {
    const u64 byte = position() / 8;
    if (byte > size_ || size_ - byte < n) return false;
    pos_ = byte + n;
    buf_ = 0;
    left_ = 0;
    return true;
  }

 private:
  void add_word(u64 word) {
    buf_ |= word << left_;
    pos_ += (63 - left_) >> 3;  // whole bytes now in the buffer
    left_ |= 56;                // = left_ + 8 * those bytes
  }

  bool refill_tail() {
    if (past_end()) return false;
    u8 tail[8] = {};
    if (pos_ < size_) std::memcpy(tail, data_ + pos_, size_ - pos_);
    add_word(load_le64(tail));
    return true;
  }

  const u8* data_ = nullptr;
  u64 size_ = 0;
  u64 pos_ = 0;  // bytes loaded (wholly) into buf_, may pass size_ at the end
  u64 buf_ = 0;
  u32 left_ = 0;  // valid bits in buf_
};

// ---------------------------------------------------------------------------
// Table entries
//
// One u32 per entry, so a lookup is a single load:
//   bits 0-5    bits to consume for the whole entry (codes and extra bits)
//   bits 8-12   bits before the extra bits (a length's or distance's own
//               code, plus any literal codes in front of it); the extra
//               bits' value is (bits & low_bits(total)) >> this
//   bit 13      ends with a length code: a distance code follows
//   bit 14      ends with the end-of-block code
//   bit 15      special: a subtable pointer (offset in bits 16-31, index
//               bits in 8-12) or, as the entry kInvalid, no valid code
// Literal/length entries then hold in bits 16-24 the bytes the entry
// produces apart from the extra bits (literals + length base) and in bits
// 25-28 the literals alone (those come before the match, which matters for
// the distance check). Distance entries hold the distance base in 16-31.
constexpr u32 kLength = 1u << 13;
constexpr u32 kEnd = 1u << 14;
constexpr u32 kSpecial = 1u << 15;
constexpr u32 kInvalid = kSpecial;

constexpr u32 entry_total(u32 e) { return e & 63; }
constexpr u32 entry_code_bits(u32 e) { return (e >> 8) & 31; }
constexpr u32 entry_produced(u32 e) { return (e >> 16) & 0x1ff; }
constexpr u32 entry_literals(u32 e) { return (e >> 25) & 15; }
constexpr u32 entry_payload(u32 e) { return e >> 16; }

constexpr u32 make_entry(u32 total, u32 code_bits, u32 flags, u32 payload) {
  return total | code_bits << 8 | flags | payload << 16;
}
constexpr u32 literal_run_entry(u32 bits, u32 literals, u32 flags, u32 extra,
                                u32 length_base) {
  return make_entry(bits + extra, bits, flags,
                    (literals + length_base) | literals << 9);
}

// RFC 1951 3.2.5: lengths 257..285 and distances 0..29 as a base value
// plus a number of extra bits.
constexpr u32 kFirstLengthSymbol = 257;
constexpr u32 kLengthSymbols = 29;
constexpr u32 kDistanceSymbols = 30;

constexpr u32 length_extra_bits(u32 i) {
  return i < 8 || i == 28 ? 0 : (i - 4) / 4;
}
constexpr u32 length_base(u32 i) {
  if (i == 28) return 258;
  u32 base = 3;
  for (u32 j = 0; j < i; ++j) base += 1u << length_extra_bits(j);
  return base;
}
constexpr u32 distance_extra_bits(u32 i) { return i < 4 ? 0 : i / 2 - 1; }
constexpr u32 distance_base(u32 i) {
  u32 base = 1;
  for (u32 j = 0; j < i; ++j) base += 1u << distance_extra_bits(j);
  return base;
}
static_assert(length_base(8) == 11 && length_base(27) == 227);
static_assert(distance_base(29) == 24577 && distance_extra_bits(29) == 13);

// The single-symbol entries of every literal/length and distance symbol,
// less their code length (added by with_code_length()), computed once:
// the tables of a block are built from these.
constexpr std::array<u32, 288> kLitlenEntries = [] {
  std::array<u32, 288> entries{};
  for (u32 symbol = 0; symbol < 288; ++symbol) {
    const u32 i = symbol - kFirstLengthSymbol;
    if (symbol < 256)
      entries[symbol] = literal_run_entry(0, 1, 0, 0, 0);
    else if (symbol == 256)
      entries[symbol] = literal_run_entry(0, 0, kEnd, 0, 0);
    else if (i < kLengthSymbols)
      entries[symbol] = literal_run_entry(0, 0, kLength, length_extra_bits(i),
                                          length_base(i));
    else
      entries[symbol] = kInvalid;  // 286, 287: fixed code only
  }
  return entries;
}();
constexpr std::array<u32, 32> kDistanceEntries = [] {
  std::array<u32, 32> entries{};
  for (u32 symbol = 0; symbol < 32; ++symbol)
    entries[symbol] = symbol < kDistanceSymbols
                          ? make_entry(distance_extra_bits(symbol), 0, 0,
                                       distance_base(symbol))
                          : kInvalid;  // 30, 31: fixed code only
  return entries;
}();

// A symbol's entry for a code of `len` bits: the code's bits added to the
// total and to the bits before the extra bits.
constexpr u32 with_code_length(u32 entry, u32 len) {
  return entry == kInvalid ? kInvalid : entry + (len | len << 8);
}

// ---------------------------------------------------------------------------
// Canonical Huffman codes

constexpr u32 kMaxCodeBits = 15;

struct CodeShape {
  std::array<u32, kMaxCodeBits + 1> count{};  // codes per length
  u32 max_len = 0;
  bool over_subscribed = false;
  bool complete = false;
};

CodeShape shape_of(std::span<const u8> lengths) {
  CodeShape shape;
  for (u8 len : lengths) ++shape.count[len];
  shape.count[0] = 0;
  i32 left = 1;  // code space not yet used, in units of the current length
  for (u32 len = 1; len <= kMaxCodeBits; ++len) {
    left = 2 * left - static_cast<i32>(shape.count[len]);
    if (left < 0) shape.over_subscribed = true;
    if (shape.count[len] != 0) shape.max_len = len;
  }
  shape.complete = left == 0;
  return shape;
}

constexpr std::array<u8, 256> kReversedBytes = [] {
  std::array<u8, 256> table{};
  for (u32 b = 0; b < 256; ++b)
    for (u32 i = 0; i < 8; ++i)
      table[b] = static_cast<u8>(table[b] | ((b >> i) & 1) << (7 - i));
  return table;
}();

// The low `len` bits of `code` (len <= 16) in reverse order.
u32 reverse_bits(u32 code, u32 len) {
  const u32 reversed16 = static_cast<u32>(kReversedBytes[code & 0xff]) << 8 |
                         kReversedBytes[(code >> 8) & 0xff];
  return reversed16 >> (16 - len);
}

// Calls visit(symbol, code, len) for every coded symbol, with its canonical
// code (RFC 1951 3.2.2) bit-reversed, as deflate sends codes most
// significant bit first into a least-significant-first bit stream.
template <class Visit>
void for_each_code(std::span<const u8> lengths, const CodeShape& shape,
                   Visit visit) {
  std::array<u32, kMaxCodeBits + 1> next{};
  u32 code = 0;
  for (u32 len = 1; len <= kMaxCodeBits; ++len) {
    code = (code + shape.count[len - 1]) << 1;
    next[len] = code;
  }
  for (u32 symbol = 0; symbol < lengths.size(); ++symbol) {
    const u32 len = lengths[symbol];
    if (len != 0) visit(symbol, reverse_bits(next[len]++, len), len);
  }
}

// Room for a table indexed by `root_bits` with a subtable of
// 2^(15 - root_bits) entries per code longer than root_bits (at most one
// subtable per code, since each holds at least one).
constexpr u32 table_size(u32 root_bits, u32 symbols) {
  return (1u << root_bits) + symbols * (1u << (kMaxCodeBits - root_bits));
}

// Fills `table` so that table[bits & low_bits(root_bits)] is the entry of
// the code the next bits start with (entry_of(symbol, len)), or a pointer
// to a subtable indexed by the bits after the root ones for longer codes.
// Slots no code reaches (an incomplete code) hold kInvalid. The code must
// not be over-subscribed.
template <class EntryOf>
void fill_table(std::span<const u8> lengths, const CodeShape& shape,
                u32 root_bits, std::span<u32> table, EntryOf entry_of) {
  const u32 root_size = 1u << root_bits;
  const u32 sub_bits =
      shape.max_len > root_bits ? shape.max_len - root_bits : 0;
  // A complete code without subtables writes every root slot.
  if (!shape.complete || sub_bits != 0)
    std::fill_n(table.begin(), root_size, kInvalid);
  u32 next_sub = root_size;
  for_each_code(lengths, shape, [&](u32 symbol, u32 code, u32 len) {
    const u32 e = entry_of(symbol, len);
    if (len <= root_bits) {
      for (u32 i = code; i < root_size; i += 1u << len) table[i] = e;
      return;
    }
    u32& root = table[code & (root_size - 1)];
    if (root == kInvalid) {
      root = make_entry(0, sub_bits, kSpecial, next_sub);
      std::fill_n(table.begin() + next_sub, 1u << sub_bits, kInvalid);
      next_sub += 1u << sub_bits;
    }
    const u32 sub = entry_payload(root);
    for (u32 i = code >> root_bits; i < (1u << sub_bits);
         i += 1u << (len - root_bits))
      table[sub + i] = e;
  });
}

// ---------------------------------------------------------------------------
// Literal/length and distance tables of one block

constexpr u32 kLitRootBits = 11;
constexpr u32 kDistRootBits = 8;
constexpr u32 kLitTableSize = table_size(kLitRootBits, 288);
constexpr u32 kDistTableSize = table_size(kDistRootBits, 32);

struct BlockTables {
  std::array<u32, kLitTableSize> litlen;
  std::array<u32, kDistTableSize> distance;
};

// Rewrites every root entry that starts with a literal into one that covers
// as many whole literal codes as fit in the root bits, plus a following
// length or end-of-block code if it fits too. The scanner never needs a
// literal's value, only its code's length, so one lookup skips the whole
// run. Entry i is built from the single-symbol entry at i >> (bits taken so
// far): those bits hold only the codes that fit in what is left of the
// root, which is all we look at. Going downwards, that entry (at a smaller
// index) is still a single-symbol one.
// `shortest` is the code's shortest length: most entries of a code of 7 to
// 9-bit literals cannot take a second one, and that test spares the look.
void merge_literal_runs(std::span<u32> root, u32 shortest) {
  for (u32 i = static_cast<u32>(root.size()); i-- > 0;) {
    const u32 first = root[i];
    if ((first & (kSpecial | kLength | kEnd)) != 0) continue;
    u32 bits = entry_total(first);
    u32 literals = 1;
    u32 merged = first;
    while (bits + shortest <= kLitRootBits) {
      const u32 next = root[i >> bits];
      const u32 next_len = entry_code_bits(next);
      if ((next & kSpecial) != 0 || bits + next_len > kLitRootBits) break;
      if ((next & (kLength | kEnd)) != 0) {
        const u32 extra = entry_total(next) - next_len;
        merged = literal_run_entry(bits + next_len, literals,
                                   next & (kLength | kEnd), extra,
                                   entry_produced(next));
        break;
      }
      bits += next_len;
      ++literals;
      merged = literal_run_entry(bits, literals, 0, 0, 0);
    }
    root[i] = merged;
  }
}

// Below this chance of a merge (in 2^-22) merge_literal_runs() is skipped.
constexpr u64 kMergeWorthChance = u64{1} << (2 * kLitRootBits - 3);

// Whether merge_literal_runs() is worth its cost (about as much as
// walking a few thousand codes): the chance that the bits at a random
// entry start with a literal and one more code within the root bits, from
// the code lengths (a code of length l starts 2^-l of all bit patterns).
// Text has many codes of 4 to 6 bits and merges often; the literals of
// machine code and device code take 7 to 9 bits and almost never do.
bool merging_pays(std::span<const u8> lengths, const CodeShape& shape) {
  std::array<u64, kMaxCodeBits + 1> literals{};
  for (u32 symbol = 0; symbol < 256; ++symbol) ++literals[lengths[symbol]];
  // In units of 2^-(2 * kLitRootBits).
  u64 chance = 0;
  for (u32 first = 1; first < kLitRootBits; ++first)
    for (u32 second = 1; first + second <= kLitRootBits; ++second)
      chance += literals[first] * shape.count[second]
                << (2 * kLitRootBits - first - second);
  return chance >= kMergeWorthChance;
}

bool build_litlen_table(std::span<const u8> lengths, std::span<u32> table) {
  const CodeShape shape = shape_of(lengths);
  // zlib accepts an incomplete literal/length code only when it is a single
  // one-bit code (an end-of-block alone).
  if (shape.over_subscribed || (!shape.complete && shape.max_len != 1))
    return false;
  fill_table(lengths, shape, kLitRootBits, table, [](u32 symbol, u32 len) {
    return with_code_length(kLitlenEntries[symbol], len);
  });
  if (merging_pays(lengths, shape)) {
    u32 shortest = 1;
    while (shape.count[shortest] == 0) ++shortest;
    merge_literal_runs(table.first(1u << kLitRootBits), shortest);
  }
  return true;
}

bool build_distance_table(std::span<const u8> lengths, std::span<u32> table) {
  const CodeShape shape = shape_of(lengths);
  // zlib accepts an empty distance code (a block of literals only: any
  // distance code in it is invalid) and a single one-bit code.
  if (shape.over_subscribed ||
      (!shape.complete && shape.max_len != 1 && shape.max_len != 0))
    return false;
  fill_table(lengths, shape, kDistRootBits, table, [](u32 symbol, u32 len) {
    return with_code_length(kDistanceEntries[symbol], len);
  });
  return true;
}

const BlockTables& fixed_tables() {
  static const std::unique_ptr<BlockTables> tables = [] {
    auto t = std::make_unique<BlockTables>();
    std::array<u8, 288> litlen{};
    std::fill(litlen.begin(), litlen.begin() + 144, 8);
    std::fill(litlen.begin() + 144, litlen.begin() + 256, 9);
    std::fill(litlen.begin() + 256, litlen.begin() + 280, 7);
    std::fill(litlen.begin() + 280, litlen.end(), 8);
    std::array<u8, 32> distance{};
    distance.fill(5);
    build_litlen_table(litlen, t->litlen);
    build_distance_table(distance, t->distance);
    return t;
  }();
  return *tables;
}

// ---------------------------------------------------------------------------
// Block bodies

// Resolves a special entry: its subtable's entry for the bits after the
// root ones, or kInvalid.
inline u32 follow_subtable(const u32* table, u32 e, u64 bits, u32 root_bits) {
  if (e == kInvalid) return kInvalid;
  return table[entry_payload(e) +
               ((bits >> root_bits) & low_bits(entry_code_bits(e)))];
}

// True for an entry of literal codes only (no subtable, length or
// end-of-block code): at most kLitRootBits long.
inline bool is_literal_run(u32 e) {
  return (e & (kSpecial | kLength | kEnd)) == 0;
}

struct Codes {
  const u32* litlen;
  const u32* distance;
};

// A walk through a Huffman block: the bits, the entry of the next ones and
// the bytes produced so far. `e` is the entry of the first bits of `r`,
// which holds enough of them for the next literal run and the lookup after
// it; take_other() needs 48 (a length with its extra bits and a distance
// with its), so its callers refill first.
struct Lane {
  BitReader r;
  u32 e = 0;
  u64 out = 0;
};

enum class Step { kMore, kDone, kBad };

inline u32 litlen_entry_of(const Codes& codes, const BitReader& r) {
  return codes.litlen[r.bits() & low_bits(kLitRootBits)];
}

// Takes the literal run in lane.e and looks up the next entry. That lookup
// comes before any refill: what limits the walk is the chain from one
// entry's bit count to the next lookup, and a refill (whose load address
// depends on the bits consumed) would put another load on it. The callers
// refill after at most three runs (33 bits of the 56 a refill leaves),
// keeping more than kLitRootBits for the lookup.
[[gnu::always_inline]] inline void take_literal_run(Lane& lane,
                                                    const Codes& codes) {
  lane.out += entry_literals(lane.e);
  lane.r.consume(entry_total(lane.e));
  lane.e = litlen_entry_of(codes, lane.r);
}

// Takes lane.e when it is not a literal run: a long code's subtable entry,
// a length code with its distance, or the end of the block; then refills.
// With kCheckDistance, rejects distances before the start of the output as
// zlib does ("invalid distance too far back").
template <bool kCheckDistance>
[[gnu::always_inline]] inline Step take_other(Lane& lane, const Codes& codes) {
  const u64 bits = lane.r.bits();
  u32 e = lane.e;
  if ((e & kSpecial) != 0) {
    e = follow_subtable(codes.litlen, e, bits, kLitRootBits);
    if ((e & kSpecial) != 0) return Step::kBad;
  }
  const u64 before = lane.out;
  const u32 total = entry_total(e);
  lane.out +=
      entry_produced(e) + ((bits & low_bits(total)) >> entry_code_bits(e));
  lane.r.consume(total);
  if ((e & kLength) != 0) {
    const u64 dbits = lane.r.bits();
    u32 d = codes.distance[dbits & low_bits(kDistRootBits)];
    if ((d & kSpecial) != 0) [[unlikely]] {
      d = follow_subtable(codes.distance, d, dbits, kDistRootBits);
      if ((d & kSpecial) != 0) return Step::kBad;
    }
    const u32 dtotal = entry_total(d);
    lane.r.consume(dtotal);
    if constexpr (kCheckDistance) {
      const u64 dist =
          entry_payload(d) + ((dbits & low_bits(dtotal)) >> entry_code_bits(d));
      // The match starts after the entry's literals.
      if (dist > before + entry_literals(e)) return Step::kBad;
    }
  } else if ((e & kEnd) != 0) {
    return Step::kDone;
  }
  if (!lane.r.refill()) return Step::kBad;
  lane.e = litlen_entry_of(codes, lane.r);
  return Step::kMore;
}

// Output from which no distance (at most 32 KiB) can reach before the
// start of the stream.
constexpr u64 kWindowSize = u64{1} << 15;

// Walks `lane` with zlib's distance check until the block ends (kDone),
// something is invalid (kBad) or the output reaches kWindowSize (kMore).
Step walk_checked(Lane& lane, const Codes& codes) {
  for (;;) {
    if (is_literal_run(lane.e)) {
      take_literal_run(lane, codes);
      if (is_literal_run(lane.e)) {
        take_literal_run(lane, codes);
        if (is_literal_run(lane.e)) take_literal_run(lane, codes);
      }
      if (!lane.r.refill()) [[unlikely]]
        return Step::kBad;
      if (is_literal_run(lane.e)) continue;
    }
    const Step step = take_other<true>(lane, codes);
    if (step != Step::kMore) return step;
    if (lane.out >= kWindowSize) return Step::kMore;
  }
}

// One entry of `lane`, without the distance check. Refills before
// take_other(): run_pair() refills only every second entry.
[[gnu::always_inline]] inline Step step(Lane& lane, const Codes& codes) {
  if (is_literal_run(lane.e)) [[likely]] {
    take_literal_run(lane, codes);
    return lane.r.refill() ? Step::kMore : Step::kBad;
  }
  if (!lane.r.refill()) return Step::kBad;
  return take_other<false>(lane, codes);
}

// How far ahead of the main lane the scout lane starts (a compromise
// between the entries walked twice while the lanes look for each other,
// about a hundred on CUDA libraries, and the scout's walk wasted past a
// block's end), and how many of its entries it records (more than it takes
// in kLeapBits of literals, plus that search).
constexpr u64 kLeapBits = 16384;
constexpr u32 kScoutLog = 4096;

// Where a scout lane's entries started, and its output there.
struct ScoutRecord {
  std::array<u64, kScoutLog> position;
  std::array<u64, kScoutLog> out;
  u32 size = 0;
};

// One entry of `lane` with no refill after a literal run (at most
// kLitRootBits): the caller refills after every second entry.
[[gnu::always_inline]] inline Step step_without_refill(Lane& lane,
                                                       const Codes& codes) {
  if (is_literal_run(lane.e)) [[likely]] {
    take_literal_run(lane, codes);
    return Step::kMore;
  }
  if (!lane.r.refill()) return Step::kBad;
  return take_other<false>(lane, codes);
}

[[gnu::always_inline]] inline void record(ScoutRecord& rec, u32& logged,
                                          const Lane& scout) {
  if (logged < kScoutLog) {
    rec.position[logged] = scout.r.position();
    rec.out[logged] = scout.out;
    ++logged;
  }
}

// Bytes a lane may advance in one run_pair() round (two entries through
// take_other(), two refills each, and the round's own refill) with room
// left for that refill's 8-byte load.
constexpr u64 kRoundBytes = 64;

// Steps the main lane and the scout (recording its entries) side by side
// until the main lane has loaded `until_byte` bytes, either is near the
// end of the stream, or a lane stops: the scout first (`scout_stop`) or
// the main lane (returned). The lanes are copied into locals so that both
// stay in registers through the loop, which is bound by instructions: so
// each lane takes two entries per refill, and the refills skip their
// bounds check, done once per round instead.
Step run_pair(Lane& main_lane, Lane& scout_lane, Step& scout_stop,
              ScoutRecord& rec, u64 until_byte, const Codes& codes) {
  Lane main = main_lane;
  Lane scout = scout_lane;
  u32 logged = rec.size;
  const u64 safe_bytes =
      main.r.size_bytes() - std::min<u64>(main.r.size_bytes(), kRoundBytes);
  Step outcome = Step::kMore;
  scout_stop = Step::kMore;
  while (main.r.loaded_bytes() < until_byte &&
         scout.r.loaded_bytes() <= safe_bytes &&
         main.r.loaded_bytes() <= safe_bytes) {
    record(rec, logged, scout);
    scout_stop = step_without_refill(scout, codes);
    if (scout_stop != Step::kMore) [[unlikely]]
      break;
    outcome = step_without_refill(main, codes);
    if (outcome != Step::kMore) [[unlikely]]
      break;
    record(rec, logged, scout);
    scout_stop = step_without_refill(scout, codes);
    if (scout_stop != Step::kMore) [[unlikely]]
      break;
    outcome = step_without_refill(main, codes);
    if (outcome != Step::kMore) [[unlikely]]
      break;
    scout.r.refill_unchecked();
    main.r.refill_unchecked();
  }
  rec.size = logged;
  main_lane = main;
  scout_lane = scout;
  if (outcome != Step::kMore || scout_stop != Step::kMore) return outcome;
  // Refilled when the loop ended, as step() expects.
  if (!main.r.refill()) return Step::kBad;
  if (!scout.r.refill()) scout_stop = Step::kBad;
  main_lane = main;
  scout_lane = scout;
  return outcome;
}

// Steps the main lane alone until it has loaded `until_byte` bytes or it
// stops (the outcome, else kMore).
Step run_alone(Lane& lane, u64 until_byte, const Codes& codes) {
  Lane main = lane;
  Step outcome = Step::kMore;
  while (main.r.loaded_bytes() < until_byte) {
    outcome = step(main, codes);
    if (outcome != Step::kMore) break;
  }
  lane = main;
  return outcome;
}

// The main lane, from near the scout's start, looks for each of its entry
// starts in the record while the scout goes on (if it has not stopped).
// Returns the record index where they met, or kScoutLog if the main lane
// passed the whole record (the scout stopped or filled it) or stopped
// (`main_stop`).
u32 run_join(Lane& main_lane, Lane& scout_lane, Step& scout_stop,
             Step& main_stop, ScoutRecord& rec, const Codes& codes) {
  Lane main = main_lane;
  Lane scout = scout_lane;
  u32 logged = rec.size;
  u32 checked = 0;
  u32 met = kScoutLog;
  for (;;) {
    const u64 at = main.r.position();
    while (checked < logged && rec.position[checked] < at) ++checked;
    if (checked < logged && rec.position[checked] == at) {
      met = checked;
      break;
    }
    if (checked == logged && (scout_stop != Step::kMore || logged == kScoutLog))
      break;
    if (scout_stop == Step::kMore) {
      record(rec, logged, scout);
      scout_stop = step(scout, codes);
    }
    main_stop = step(main, codes);
    if (main_stop != Step::kMore) break;
  }
  rec.size = logged;
  main_lane = main;
  scout_lane = scout;
  return met;
}

// Walks the rest of a block two places at once, to run two of the
// dependency chains that bound a single walk side by side.
//
// Huffman codes resynchronize: decoding from a wrong bit position soon
// falls onto the true code boundaries, and from a common boundary two
// walks are the same walk. So a scout lane starts at a guessed position
// kLeapBits ahead of the main lane and records where its entries start.
// Once the main lane (always on the true path) is past the scout's start,
// it looks for each of its own entry starts in that record; at the first
// one found the walks coincide, so the main lane takes over the scout's
// state (with the output counted from that point on) and a new scout leaps
// ahead. If the main lane passes the whole record (the scout stopped, or
// filled it) without a match, the scout was off the path (or past the
// block's end) and is replaced. A scout that hit an invalid code or the
// end of a block stops; that outcome counts only once the main lane has
// joined its path.
//
// Only used once the output is at least kWindowSize, so neither lane needs
// zlib's distance check, which depends on the output before the scout's
// start.
Step walk_leapfrog(Lane& main, const Codes& codes, u64 stream_bits,
                   ScoutRecord* scout_record) {
  for (;;) {
    const u64 start = main.r.position() + kLeapBits;
    if (start + 64 > stream_bits || scout_record == nullptr)
      return run_alone(main, ~u64{0}, codes);  // no room for a scout
    ScoutRecord& rec = *scout_record;
    Lane scout{main.r.at_bit(start), 0, 0};
    scout.e = litlen_entry_of(codes, scout.r);
    rec.size = 0;
    Step scout_stop = Step::kMore;
    Step main_stop = run_pair(main, scout, scout_stop, rec, start / 8, codes);
    if (main_stop != Step::kMore) return main_stop;
    // The scout stopped or the pair came near the end of the stream.
    main_stop = run_alone(main, start / 8, codes);
    if (main_stop != Step::kMore) return main_stop;
    const u32 met = run_join(main, scout, scout_stop, main_stop, rec, codes);
    if (main_stop != Step::kMore) return main_stop;
    if (met == kScoutLog) continue;  // the scout never met the true path
    // Joined: the rest of the main lane's walk is the scout's.
    if (scout_stop == Step::kBad) return Step::kBad;
    main.out = main.out - rec.out[met] + scout.out;
    main.r = scout.r;
    main.e = scout.e;
    if (scout_stop == Step::kDone) return Step::kDone;
  }
}

// Walks a Huffman block's codes through its end-of-block code, adding the
// bytes they stand for to `produced`. False on an invalid code or a
// distance reaching before the start of the output. `scout_record`: room
// for walk_leapfrog(), null for a stream too short for its leaps.
bool scan_codes(BitReader& reader, const BlockTables& tables,
                ScoutRecord* scout_record, u64& produced) {
  const Codes codes{tables.litlen.data(), tables.distance.data()};
  Lane lane{reader, 0, produced};
  if (!lane.r.refill()) return false;
  lane.e = litlen_entry_of(codes, lane.r);
  Step step = Step::kMore;
  if (lane.out < kWindowSize) step = walk_checked(lane, codes);
  if (step == Step::kMore)
    step = walk_leapfrog(lane, codes, reader.size_bits(), scout_record);
  if (step != Step::kDone) return false;
  reader = lane.r;
  produced = lane.out;
  return true;
}

bool skip_stored(BitReader& r, u64& produced) {
  r.align_to_byte();
  if (!r.refill()) return false;
  const u32 len = r.take(16);
  const u32 nlen = r.take(16);
  if (len != (~nlen & 0xffff)) return false;
  produced += len;
  return r.skip_bytes(len);
}

// RFC 1951 3.2.7: the order code length code lengths are sent in.
constexpr std::array<u8, 19> kCodeLengthOrder = {
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

constexpr u32 kCodeLengthRootBits = 7;

// Reads a dynamic block's code lengths and builds its tables.
bool read_dynamic_tables(BitReader& r, BlockTables& tables) {
  if (!r.refill()) return false;
  const u32 nlitlen = r.take(5) + 257;
  const u32 ndistance = r.take(5) + 1;
  const u32 ncodelen = r.take(4) + 4;
  if (nlitlen > 286 || ndistance > 30) return false;

  std::array<u8, 19> codelen_lengths{};
  for (u32 i = 0; i < ncodelen; ++i) {
    if (r.available() < 3 && !r.refill()) return false;
    codelen_lengths[kCodeLengthOrder[i]] = static_cast<u8>(r.take(3));
  }
  // zlib requires the code length code to be complete (an empty one only
  // yields zero lengths, which the end-of-block check below rejects).
  const CodeShape shape = shape_of(codelen_lengths);
  if (!shape.complete) return false;
  std::array<u32, 1u << kCodeLengthRootBits> codelen_table{};
  fill_table(codelen_lengths, shape, kCodeLengthRootBits, codelen_table,
             [](u32 symbol, u32 len) { return symbol | len << 8; });

  std::array<u8, 286 + 30> lengths{};
  const u32 count = nlitlen + ndistance;
  u32 have = 0;
  while (have < count) {
    // A code (7 bits at most) and its repeat count (7 at most).
    if (r.available() < 14 && !r.refill()) return false;
    const u32 e = codelen_table[r.bits() & low_bits(kCodeLengthRootBits)];
    r.consume(e >> 8);
    const u32 symbol = e & 0xff;
    if (symbol < 16) {
      lengths[have++] = static_cast<u8>(symbol);
      continue;
    }
    u8 value = 0;
    u32 repeat = 0;
    if (symbol == 16) {
      if (have == 0) return false;
      value = lengths[have - 1];
      repeat = 3 + r.take(2);
    } else if (symbol == 17) {
      repeat = 3 + r.take(3);
    } else {
      repeat = 11 + r.take(7);
    }
    if (repeat > count - have) return false;
    std::fill_n(lengths.begin() + have, repeat, value);
    have += repeat;
  }
  if (lengths[256] == 0) return false;  // no end-of-block code
  const std::span<const u8> all(lengths.data(), count);
  return build_litlen_table(all.first(nlitlen), tables.litlen) &&
         build_distance_table(all.subspan(nlitlen), tables.distance);
}

}  // namespace

std::optional<DeflateScan> scan_deflate(
    std::span<const u8> stream, std::optional<u64> expected_output_size) {
  const BlockTables& fixed = fixed_tables();
  // Both uninitialized (for_overwrite): every slot read is written first.
  std::unique_ptr<BlockTables> dynamic;
  // Only a stream longer than a leap ever launches a scout.
  std::unique_ptr<ScoutRecord> rec;
  if (stream.size() > kLeapBits / 8)
    rec = std::make_unique_for_overwrite<ScoutRecord>();
  BitReader r(stream);
  DeflateScan scan;
  for (;;) {
    if (!r.refill()) return std::nullopt;
    const u64 header = r.position();
    const bool final = r.take(1) != 0;
    bool ok = false;
    switch (r.take(2)) {
      case 0:
        ok = skip_stored(r, scan.output_size);
        break;
      case 1:
        ok = scan_codes(r, fixed, rec.get(), scan.output_size);
        break;
      case 2:
        if (!dynamic) dynamic = std::make_unique_for_overwrite<BlockTables>();
        ok = read_dynamic_tables(r, *dynamic) &&
             scan_codes(r, *dynamic, rec.get(), scan.output_size);
        break;
      default:  // reserved block type
        break;
    }
    if (!ok) return std::nullopt;
    if (final) {
      scan.last_header_bit = header;
      break;
    }
  }
  scan.end_bit = r.position();
  // Decoding may have run over the zeros the reader supplies past the end.
  if (r.past_end() || (scan.end_bit + 7) / 8 != stream.size())
    return std::nullopt;
  if (expected_output_size && *expected_output_size != scan.output_size)
    return std::nullopt;
  return scan;
}

}  // namespace libpkg::archive
