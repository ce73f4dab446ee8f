// SPDX-License-Identifier: BSD-3-Clause
// Deterministic tar writer over libarchive, with the zstd output (libzstd,
// pledged size, multithreaded). bzip2: tar_bz2_write.cpp.
#include <archive.h>
#include <archive_entry.h>
#include <zstd.h>

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "archive/tar_stream.hpp"
#include "libpkg/archive/tar.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"

namespace libpkg::archive {
namespace {

constexpr std::size_t kChunk = std::size_t{1} << 20;

struct WriteFree {
  void operator()(struct archive* a) const { archive_write_free(a); }
};
struct EntryFree {
  void operator()(struct archive_entry* e) const { archive_entry_free(e); }
};
using WritePtr = std::unique_ptr<struct archive, WriteFree>;
using EntryPtr = std::unique_ptr<struct archive_entry, EntryFree>;

// Carries the sink into libarchive's C callback and an exception back out.
struct SinkContext {
  const TarSink* sink = nullptr;
  std::exception_ptr error;
};

la_ssize_t write_callback(struct archive*, void* ctx, const void* buffer,
                          size_t length) {
  auto* context = static_cast<SinkContext*>(ctx);
  try {
    (*context->sink)({static_cast<const u8*>(buffer), length});
    return static_cast<la_ssize_t>(length);
  } catch (...) {
    context->error = std::current_exception();
    return -1;
  }
}

void check(struct archive* a, int rc, SinkContext& context,
           const std::string& name, const std::string& what) {
  if (rc >= ARCHIVE_WARN) return;
  if (context.error) std::rethrow_exception(context.error);
  const char* message = archive_error_string(a);
  throw Error(
      Errc::io, name,
      what + ": " + (message != nullptr ? message : "libarchive error"));
}

EntryPtr make_header(const TarEntry& entry, const TarWriteOptions& options,
                     const std::string& name) {
  EntryPtr header(archive_entry_new());
  if (!header) throw Error(Errc::io, name, "out of memory");
  archive_entry_set_pathname(header.get(), entry.path.c_str());
  archive_entry_set_uid(header.get(), 0);
  archive_entry_set_gid(header.get(), 0);
  archive_entry_set_uname(header.get(), "");
  archive_entry_set_gname(header.get(), "");
  archive_entry_set_mtime(header.get(), options.mtime, 0);
  archive_entry_set_perm(header.get(), entry.mode & 07777);
  switch (entry.kind) {
    case TarKind::file:
      if (!entry.content) {
        throw Error(Errc::usage, name, entry.path + ": file without content");
      }
      archive_entry_set_filetype(header.get(), AE_IFREG);
      archive_entry_set_size(header.get(),
                             static_cast<la_int64_t>(entry.content->size()));
      break;
    case TarKind::directory:
      archive_entry_set_filetype(header.get(), AE_IFDIR);
      archive_entry_set_size(header.get(), 0);
      break;
    case TarKind::symlink:
      archive_entry_set_filetype(header.get(), AE_IFLNK);
      archive_entry_set_symlink(header.get(), entry.link_target.c_str());
      archive_entry_set_size(header.get(), 0);
      break;
    default:
      throw Error(Errc::usage, name,
                  entry.path + ": cannot write a " + tar_kind_name(entry.kind) +
                      " member");
  }
  return header;
}

void write_content(struct archive* a, const TarEntry& entry,
                   SinkContext& context, const std::string& name) {
  const ContentSource& source = *entry.content;
  u64 size = source.size();
  std::vector<u8> buffer(static_cast<std::size_t>(std::min<u64>(size, kChunk)));
  for (u64 offset = 0; offset < size;) {
    std::size_t n =
        static_cast<std::size_t>(std::min<u64>(kChunk, size - offset));
    source.read(offset, {buffer.data(), n});
    la_ssize_t written = archive_write_data(a, buffer.data(), n);
    if (written < 0 || static_cast<std::size_t>(written) != n) {
      check(a, ARCHIVE_FATAL, context, name, entry.path + ": writing content");
    }
    offset += n;
  }
}

// Writes all entries through an opened archive handle. Without `with_data`
// the content is left out and libarchive pads each member with zeros: the
// byte count is the same, which is how tar_size() measures.
void write_entries(struct archive* a, const std::vector<TarEntry>& entries,
                   const TarWriteOptions& options, SinkContext& context,
                   const std::string& name, bool with_data,
                   const std::function<void(u64)>* before_data) {
  for (const TarEntry& entry : entries) {
    EntryPtr header = make_header(entry, options, name);
    check(a, archive_write_header(a, header.get()), context, name,
          entry.path + ": writing header");
    if (with_data && entry.kind == TarKind::file) {
      if (before_data) (*before_data)(entry.content->size());
      write_content(a, entry, context, name);
    }
    check(a, archive_write_finish_entry(a), context, name,
          entry.path + ": finishing member");
  }
}

// Sets up a pax-restricted writer, runs the entries into `sink` and closes.
// Blocked (libarchive's default): the stream is padded to a multiple of
// 10240 bytes, the tar a .conda component holds. Unblocked: every piece
// reaches `sink` as it is written and nothing follows the two end blocks,
// which is the tar the .tar.bz2 writers have always compressed (libarchive
// pads after its compression filter, not before).
void run_writer(const std::vector<TarEntry>& entries,
                const TarWriteOptions& options, const TarSink& sink,
                const std::string& name, bool with_data, bool unblocked,
                const std::function<void(u64)>* before_data) {
  WritePtr a(archive_write_new());
  if (!a) throw Error(Errc::io, name, "out of memory");
  SinkContext context;
  context.sink = &sink;
  check(a.get(), archive_write_set_format_pax_restricted(a.get()), context,
        name, "pax format");
  if (unblocked) {
    check(a.get(), archive_write_set_bytes_per_block(a.get(), 0), context, name,
          "unblocked output");
  }
  check(a.get(),
        archive_write_open(a.get(), &context, nullptr, write_callback, nullptr),
        context, name, "opening tar writer");
  write_entries(a.get(), entries, options, context, name, with_data,
                before_data);
  check(a.get(), archive_write_close(a.get()), context, name, "closing tar");
}

struct ZstdFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};

void check_zstd(std::size_t rc, const std::string& name,
                const std::string& what) {
  if (ZSTD_isError(rc)) {
    throw Error(Errc::io, name, "zstd " + what + ": " + ZSTD_getErrorName(rc));
  }
}

}  // namespace

const char* tar_kind_name(TarKind kind) {
  switch (kind) {
    case TarKind::file:
      return "file";
    case TarKind::directory:
      return "directory";
    case TarKind::symlink:
      return "symlink";
    case TarKind::hardlink:
      return "hardlink";
    case TarKind::other:
      break;
  }
  return "special file";
}

u64 tar_size(const std::vector<TarEntry>& entries,
             const TarWriteOptions& options) {
  u64 total = 0;
  TarSink count = [&total](std::span<const u8> bytes) {
    total += bytes.size();
  };
  run_writer(entries, options, count, "<tar>", false, false, nullptr);
  return total;
}

void write_tar(const std::vector<TarEntry>& entries,
               const TarWriteOptions& options, const TarSink& sink,
               const std::string& name) {
  run_writer(entries, options, sink, name, true, false, nullptr);
}

void write_tar_unblocked(const std::vector<TarEntry>& entries,
                         const TarWriteOptions& options, const TarSink& sink,
                         const std::string& name,
                         const std::function<void(u64)>& before_data) {
  run_writer(entries, options, sink, name, true, true, &before_data);
}

u64 zstd_bound(u64 bytes) {
  return static_cast<u64>(ZSTD_compressBound(static_cast<std::size_t>(bytes)));
}

void write_tar_zst(const std::vector<TarEntry>& entries,
                   const TarWriteOptions& options, const ZstdOptions& zstd,
                   u64 tar_bytes, const TarSink& out, const std::string& name) {
  if (zstd.level < 1 || zstd.level > ZSTD_maxCLevel()) {
    throw Error(Errc::usage, name,
                "zstd level must be 1.." + std::to_string(ZSTD_maxCLevel()) +
                    ", got " + std::to_string(zstd.level));
  }
  if (zstd.overlap_log < 0 || zstd.overlap_log > 9) {
    throw Error(Errc::usage, name,
                "zstd overlap log must be 0..9, got " +
                    std::to_string(zstd.overlap_log));
  }
  if (zstd.independent_frames) {
    write_tar_zst_frames(entries, options, zstd, tar_bytes, out, name);
    return;
  }
  const u64 total = tar_bytes;

  std::unique_ptr<ZSTD_CCtx, ZstdFree> cctx(ZSTD_createCCtx());
  if (!cctx) throw Error(Errc::io, name, "zstd: out of memory");
  ZSTD_CCtx* c = cctx.get();
  check_zstd(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, zstd.level),
             name, "level");
  check_zstd(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1), name,
             "content size flag");
  check_zstd(
      ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, zstd.checksum ? 1 : 0),
      name, "checksum flag");
  // Always the multithreaded code path (see the header): its output does not
  // depend on the number of workers.
  int workers = static_cast<int>(std::max(1u, zstd.threads));
  check_zstd(ZSTD_CCtx_setParameter(c, ZSTD_c_nbWorkers, workers), name,
             "workers");
  check_zstd(ZSTD_CCtx_setParameter(c, ZSTD_c_overlapLog, zstd.overlap_log),
             name, "overlap log");
  check_zstd(ZSTD_CCtx_setPledgedSrcSize(c, total), name, "pledged size");

  std::vector<u8> buffer(ZSTD_CStreamOutSize());
  u64 consumed = 0;
  auto pump = [&](std::span<const u8> bytes, ZSTD_EndDirective mode) {
    ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
    for (;;) {
      ZSTD_outBuffer o{buffer.data(), buffer.size(), 0};
      std::size_t remaining = ZSTD_compressStream2(c, &o, &in, mode);
      check_zstd(remaining, name, "compression");
      if (o.pos > 0) out({buffer.data(), o.pos});
      bool done = mode == ZSTD_e_end ? remaining == 0 : in.pos == in.size;
      if (done) break;
    }
  };
  constexpr u64 kProgressStep = u64{4} << 20;
  u64 reported = 0;
  TarSink sink = [&](std::span<const u8> bytes) {
    consumed += bytes.size();
    pump(bytes, ZSTD_e_continue);
    if (zstd.progress && consumed - reported >= kProgressStep) {
      reported = consumed;
      zstd.progress(consumed, total);
    }
  };
  write_tar(entries, options, sink, name);
  if (consumed != total) {
    throw Error(Errc::io, name,
                "tar size changed between passes: expected " +
                    std::to_string(total) + ", wrote " +
                    std::to_string(consumed));
  }
  pump({}, ZSTD_e_end);
  if (zstd.progress) zstd.progress(consumed, total);
}

u64 write_tar_zst(const std::filesystem::path& target,
                  const std::vector<TarEntry>& entries,
                  const TarWriteOptions& options, const ZstdOptions& zstd) {
  AtomicFile out = AtomicFile::create(target);
  TarSink sink = [&out](std::span<const u8> bytes) { out.write(bytes); };
  const u64 total = tar_size(entries, options);
  write_tar_zst(entries, options, zstd, total, sink, target.string());
  out.commit();
  return total;
}

}  // namespace libpkg::archive
