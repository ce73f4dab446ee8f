// SPDX-License-Identifier: BSD-3-Clause
#include "archive/deflate_chunk.hpp"

#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <new>

#include "archive/deflate_scan.hpp"
#include "archive/incompressible.hpp"
#include "libpkg/base/error.hpp"

namespace libpkg::archive {

CompressorPool::~CompressorPool() {
  for (const Idle& idle : idle_) libdeflate_free_compressor(idle.compressor);
}

CompressorPool::Lease::Lease(CompressorPool& pool, int level)
    : pool_(pool), level_(level), compressor_(nullptr) {
  {
    std::lock_guard lock(pool_.mutex_);
    for (auto it = pool_.idle_.begin(); it != pool_.idle_.end(); ++it) {
      if (it->level == level) {
        compressor_ = it->compressor;
        pool_.idle_.erase(it);
        return;
      }
    }
  }
  compressor_ = libdeflate_alloc_compressor(level);
  if (compressor_ == nullptr) throw std::bad_alloc();
}

CompressorPool::Lease::~Lease() {
  std::lock_guard lock(pool_.mutex_);
  try {
    pool_.idle_.push_back({level_, compressor_});
  } catch (...) {
    libdeflate_free_compressor(compressor_);
  }
}

namespace {

constexpr u64 kMaxStoredBlock = 65535;

// Size of `n` bytes written as stored blocks: a 5-byte header per block of
// at most 65535 bytes, and one block for no bytes at all.
u64 stored_blocks_size(u64 n) {
  return n + 5 * std::max<u64>(1, (n + kMaxStoredBlock - 1) / kMaxStoredBlock);
}

// Stored blocks (RFC 1951 3.2.4), starting on a byte boundary as every chunk
// does: one header byte (BFINAL in bit 0 on the last block of the final
// chunk, BTYPE 00, padding zeros), LEN and its complement, the bytes;
// appended to `out`.
void write_stored_blocks(std::span<const u8> input, bool final,
                         std::vector<u8>& out) {
  out.reserve(out.size() + stored_blocks_size(input.size()));
  u64 pos = 0;
  do {
    const u64 len = std::min<u64>(kMaxStoredBlock, input.size() - pos);
    const bool last = pos + len == input.size();
    out.push_back(final && last ? 1 : 0);
    out.push_back(static_cast<u8>(len & 0xff));
    out.push_back(static_cast<u8>(len >> 8));
    out.push_back(static_cast<u8>(~len & 0xff));
    out.push_back(static_cast<u8>((~len >> 8) & 0xff));
    out.insert(out.end(), input.begin() + static_cast<std::ptrdiff_t>(pos),
               input.begin() + static_cast<std::ptrdiff_t>(pos + len));
    pos += len;
  } while (pos < input.size());
}

}  // namespace

void deflate_chunk(CompressorPool& pool, int level, std::span<const u8> input,
                   bool final, const std::string& name, std::vector<u8>& out) {
  // Packed device code and compressed sections: store without trying (see
  // incompressible.hpp), which also spares the join pass.
  const std::vector<ChunkRun> plan = plan_chunk(input);
  if (stores_whole_chunk(plan))
    store_chunk(input, final, out);
  else
    compress_chunk(pool, level, input, plan, final, name, out);
}

void store_chunk(std::span<const u8> input, bool final, std::vector<u8>& out) {
  out.clear();
  write_stored_blocks(input, final, out);
}

namespace {

// Appends `input` deflated by libdeflate, or as stored blocks when that is
// not smaller, made non-final unless `final`.
void append_compressed(libdeflate_compressor* compressor,
                       std::span<const u8> input, bool final,
                       const std::string& name, std::vector<u8>& out) {
  const u64 start = out.size();
  // +6: room for the empty stored block make_non_final() appends.
  out.resize(start +
             libdeflate_deflate_compress_bound(compressor, input.size()) + 6);
  const size_t n =
      libdeflate_deflate_compress(compressor, input.data(), input.size(),
                                  out.data() + start, out.size() - start);
  if (n == 0) throw Error(Errc::io, name, "deflate output exceeded its bound");
  // A stretch deflate does not shrink (already-compressed data, packed
  // device code) is emitted as stored blocks instead: no larger, and no
  // inflate pass is needed to make it non-final, since we write its block
  // headers.
  if (!input.empty() && stored_blocks_size(input.size()) <= n) {
    out.resize(start);
    write_stored_blocks(input, final, out);
    return;
  }
  out.resize(start + n);
  if (!final) make_non_final(out, start, name, input.size());
}

}  // namespace

void compress_chunk(CompressorPool& pool, int level, std::span<const u8> input,
                    const std::vector<ChunkRun>& plan, bool final,
                    const std::string& name, std::vector<u8>& out) {
  out.clear();
  for (const ChunkRun& run : plan) {
    const std::span<const u8> bytes =
        input.subspan(run.begin, run.end - run.begin);
    // Only the chunk's last run may end the member's stream.
    const bool last = final && run.end == input.size();
    if (run.stored) {
      write_stored_blocks(bytes, last, out);
    } else if (run.fast && level > 0) {
      // Already non-final unless `last`: no scan to join it.
      FastDeflaterPool::Lease lease(pool.fast());
      if (!lease.get().append(bytes, last, stored_blocks_size(bytes.size()),
                              out))
        write_stored_blocks(bytes, last, out);
    } else {
      CompressorPool::Lease lease(pool, level);
      append_compressed(lease.get(), bytes, last, name, out);
    }
  }
}

u64 deflate_chunk_capacity(u64 input_size) {
  const u64 stored = stored_blocks_size(input_size);
  // NULL: the bound over every compressor this libdeflate can allocate.
  const u64 deflated =
      libdeflate_deflate_compress_bound(nullptr, input_size) + 6;
  // Per run: a deflated run is at most its stored size plus the 5-byte
  // empty block that ends it, and splitting the stored blocks at a run's
  // end adds at most one more header. Also covers the compressor's bound of
  // the run being compressed on top of the runs before it.
  const u64 runs = input_size / kIncompressiblePiece + 1;
  return std::max(stored, deflated) + 16 * runs;
}

ChunkBuffers ChunkSlots::take(bool sized) {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      ChunkBuffers buffers = std::move(idle_.back());
      idle_.pop_back();
      if (!sized) {
        buffers.input.clear();
        buffers.output.clear();
      }
      return buffers;
    }
  }
  ChunkBuffers buffers;
  buffers.input.reserve(chunk_size_);
  buffers.output.reserve(deflate_chunk_capacity(chunk_size_));
  return buffers;
}

void ChunkSlots::give(ChunkBuffers&& buffers) {
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(buffers));
}

namespace {

// inflateEnd on every path.
struct RawInflater {
  z_stream strm{};
  RawInflater() {
    if (inflateInit2(&strm, -MAX_WBITS) != Z_OK) throw std::bad_alloc();
  }
  ~RawInflater() { inflateEnd(&strm); }
  RawInflater(const RawInflater&) = delete;
  RawInflater& operator=(const RawInflater&) = delete;
};

}  // namespace

// zlib's inflate with Z_BLOCK returns at every block boundary and reports in
// strm.data_type how many bits of the last consumed byte are still unused
// (bits 0-2), whether the last block read was marked final (64), and
// whether it stopped right after a block's end-of-block code (128). The bit
// position at such a stop is consumed_bytes * 8 - unused: before a final
// block it is that block's header, after the final block it is the end of
// the stream's data (zlib discards the padding bits before reporting
// Z_STREAM_END, so that is the only place to learn how many there are).
//
// This decodes the whole stream into a scratch buffer that is thrown away;
// make_non_final() runs it only when scan_deflate() (about twice as fast)
// rejects the stream, so that a bad stream fails with zlib's verdict.
DeflateScan scan_deflate_with_zlib(std::span<const u8> stream,
                                   const std::string& name) {
  RawInflater inflater;
  z_stream& strm = inflater.strm;
  // zlib never writes through next_in.
  strm.next_in = const_cast<u8*>(stream.data());
  strm.avail_in = static_cast<uInt>(stream.size());
  if (strm.avail_in != stream.size())
    throw Error(Errc::usage, name, "deflate chunk too large");
  std::vector<u8> scratch(256 * 1024);
  DeflateScan scan;  // a raw stream starts with a block header
  bool end_seen = false;
  for (;;) {
    strm.next_out = scratch.data();
    strm.avail_out = static_cast<uInt>(scratch.size());
    int ret = inflate(&strm, Z_BLOCK);
    if (ret == Z_STREAM_END) break;
    if (ret != Z_OK)
      throw Error(Errc::format, name,
                  "internal deflate chunk does not inflate (zlib error " +
                      std::to_string(ret) + ")");
    if ((strm.data_type & 128) != 0) {
      const u64 consumed = stream.size() - strm.avail_in;
      const u64 bit = consumed * 8 - static_cast<u64>(strm.data_type & 7);
      if ((strm.data_type & 64) == 0) {
        scan.last_header_bit = bit;
      } else {
        scan.end_bit = bit;
        end_seen = true;
      }
    }
  }
  if (strm.avail_in != 0 || !end_seen ||
      (scan.end_bit + 7) / 8 != stream.size())
    throw Error(Errc::format, name,
                "internal deflate chunk does not end with its final block");
  scan.output_size = strm.total_out;
  return scan;
}

void make_non_final(std::vector<u8>& out, u64 start, const std::string& name,
                    std::optional<u64> inflated_size) {
  const std::span<u8> stream(out.data() + start, out.size() - start);
  std::optional<DeflateScan> scan = scan_deflate(stream, inflated_size);
  if (!scan) scan = scan_deflate_with_zlib(stream, name);
  const u64 last_header_bit = scan->last_header_bit;
  const u64 end_bit = scan->end_bit;
  const unsigned unused = static_cast<unsigned>((8 - end_bit % 8) % 8);
  u8& header = stream[last_header_bit / 8];
  const u8 bfinal = static_cast<u8>(1u << (last_header_bit % 8));
  if ((header & bfinal) == 0)
    throw Error(Errc::format, name,
                "internal deflate chunk: final block header not found");
  header = static_cast<u8>(header & ~bfinal);
  // Pad bits of the last byte must be zero: they become the 3-bit header
  // (BFINAL=0, BTYPE=00 stored) and the alignment of the empty stored block.
  stream.back() = static_cast<u8>(stream.back() & (0xffu >> unused));
  if (unused < 3) out.push_back(0);  // the header does not fit: new byte
  for (u8 b : {u8{0x00}, u8{0x00}, u8{0xff}, u8{0xff}}) out.push_back(b);
}

}  // namespace libpkg::archive
