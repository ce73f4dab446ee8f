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

  const u8* data_;
  u64 size_;
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

// The entry of one literal/length symbol whose code has `len` bits.
u32 litlen_entry(u32 symbol, u32 len) {
  if (symbol < 256) return literal_run_entry(len, 1, 0, 0, 0);
  if (symbol == 256) return literal_run_entry(len, 0, kEnd, 0, 0);
  const u32 i = symbol - kFirstLengthSymbol;
  if (i >= kLengthSymbols) return kInvalid;  // 286, 287: fixed code only
  return literal_run_entry(len, 0, kLength, length_extra_bits(i),
                           length_base(i));
}

u32 distance_entry(u32 symbol, u32 len) {
  if (symbol >= kDistanceSymbols) return kInvalid;  // 30, 31: fixed only
  return make_entry(len + distance_extra_bits(symbol), len, 0,
                    distance_base(symbol));
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

u32 reverse_bits(u32 code, u32 len) {
  u32 r = 0;
  for (u32 i = 0; i < len; ++i) r |= ((code >> i) & 1) << (len - 1 - i);
  return r;
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

constexpr u32 kLitRootBits = 12;
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
void merge_literal_runs(std::span<u32> root) {
  for (u32 i = static_cast<u32>(root.size()); i-- > 0;) {
    const u32 first = root[i];
    if ((first & (kSpecial | kLength | kEnd)) != 0) continue;
    u32 bits = entry_total(first);
    u32 literals = 1;
    u32 merged = first;
    for (;;) {
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

bool build_litlen_table(std::span<const u8> lengths, std::span<u32> table) {
  const CodeShape shape = shape_of(lengths);
  // zlib accepts an incomplete literal/length code only when it is a single
  // one-bit code (an end-of-block alone).
  if (shape.over_subscribed || (!shape.complete && shape.max_len != 1))
    return false;
  fill_table(lengths, shape, kLitRootBits, table, litlen_entry);
  merge_literal_runs(table.first(1u << kLitRootBits));
  return true;
}

bool build_distance_table(std::span<const u8> lengths, std::span<u32> table) {
  const CodeShape shape = shape_of(lengths);
  // zlib accepts an empty distance code (a block of literals only: any
  // distance code in it is invalid) and a single one-bit code.
  if (shape.over_subscribed ||
      (!shape.complete && shape.max_len != 1 && shape.max_len != 0))
    return false;
  fill_table(lengths, shape, kDistRootBits, table, distance_entry);
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

// Walks a Huffman block's codes through its end-of-block code, adding the
// bytes they stand for to `produced`. False on an invalid code or a
// distance reaching before the start of the output.
bool scan_codes(BitReader& reader, const BlockTables& tables, u64& produced) {
  const u32* litlen = tables.litlen.data();
  const u32* distance = tables.distance.data();
  BitReader r = reader;  // a local copy stays in registers
  u64 out = produced;
  for (;;) {
    if (!r.refill()) [[unlikely]]
      return false;
    u64 bits = r.bits();
    u32 e = litlen[bits & low_bits(kLitRootBits)];
    if ((e & kSpecial) != 0) [[unlikely]] {
      e = follow_subtable(litlen, e, bits, kLitRootBits);
      if ((e & kSpecial) != 0) return false;
    }
    const u64 before = out;
    const u32 total = entry_total(e);
    out += entry_produced(e) + ((bits & low_bits(total)) >> entry_code_bits(e));
    r.consume(total);
    if ((e & (kLength | kEnd)) == 0) continue;
    if ((e & kEnd) != 0) break;
    bits = r.bits();
    u32 d = distance[bits & low_bits(kDistRootBits)];
    if ((d & kSpecial) != 0) [[unlikely]] {
      d = follow_subtable(distance, d, bits, kDistRootBits);
      if ((d & kSpecial) != 0) return false;
    }
    const u32 dtotal = entry_total(d);
    const u64 dist =
        entry_payload(d) + ((bits & low_bits(dtotal)) >> entry_code_bits(d));
    r.consume(dtotal);
    // zlib's "invalid distance too far back": the match starts after the
    // entry's literals.
    if (dist > before + entry_literals(e)) [[unlikely]]
      return false;
  }
  reader = r;
  produced = out;
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
  std::unique_ptr<BlockTables> dynamic;
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
        ok = scan_codes(r, fixed, scan.output_size);
        break;
      case 2:
        if (!dynamic) dynamic = std::make_unique<BlockTables>();
        ok = read_dynamic_tables(r, *dynamic) &&
             scan_codes(r, *dynamic, scan.output_size);
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
