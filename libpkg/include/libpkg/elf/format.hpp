// SPDX-License-Identifier: BSD-3-Clause
// ELF on-disk layouts and constants (System V gABI, "Object Files" chapter,
// and the GNU extensions for symbol versioning and property notes).
//
// Only layouts and numbers live here; reading is in view.hpp, editing in
// editor.hpp. Structs are templates over a traits type `E` that fixes class
// (32/64) and byte order; every field is an `Integer<>`, so a struct can be
// viewed in place over mmap'd bytes at any alignment and patched in place.
#pragma once

#include <type_traits>

#include "libpkg/base/integers.hpp"

namespace libpkg::elf {

// ---- traits ---------------------------------------------------------------

/// Trait for 32-bit little-endian ELF (ELFCLASS32, ELFDATA2LSB).
struct Elf32LE {
  static constexpr bool is_64 = false, is_le = true;
};
/// Trait for 32-bit big-endian ELF (ELFCLASS32, ELFDATA2MSB).
struct Elf32BE {
  static constexpr bool is_64 = false, is_le = false;
};
/// Trait for 64-bit little-endian ELF (ELFCLASS64, ELFDATA2LSB).
struct Elf64LE {
  static constexpr bool is_64 = true, is_le = true;
};
/// Trait for 64-bit big-endian ELF (ELFCLASS64, ELFDATA2MSB).
struct Elf64BE {
  static constexpr bool is_64 = true, is_le = false;
};

/// Elf_Half in the byte order of `E`.
template <typename E>
using U16 = Integer<u16, E::is_le>;
/// Elf_Word in the byte order of `E`.
template <typename E>
using U32 = Integer<u32, E::is_le>;
/// A 64-bit unsigned field in the byte order of `E`.
template <typename E>
using U64 = Integer<u64, E::is_le>;
/// Elf_Sword in the byte order of `E`.
template <typename E>
using I32 = Integer<i32, E::is_le>;
/// A 64-bit signed field in the byte order of `E`.
template <typename E>
using I64 = Integer<i64, E::is_le>;
/// Elf_Addr / Elf_Off / Elf_Xword: 4 bytes on ELFCLASS32, 8 on ELFCLASS64.
template <typename E>
using Word = std::conditional_t<E::is_64, U64<E>, U32<E>>;
/// Elf_Sword / Elf_Sxword (d_tag): 4 bytes on ELFCLASS32, 8 on ELFCLASS64.
template <typename E>
using SWord = std::conditional_t<E::is_64, I64<E>, I32<E>>;

// ---- e_ident --------------------------------------------------------------

inline constexpr u8 kElfMagic[4] = {0x7f, 'E', 'L', 'F'};
enum : u8 {
  EI_CLASS = 4,
  EI_DATA = 5,
  EI_VERSION = 6,
  EI_OSABI = 7,
  EI_NIDENT = 16
};
enum : u8 { ELFCLASS32 = 1, ELFCLASS64 = 2 };
enum : u8 { ELFDATA2LSB = 1, ELFDATA2MSB = 2 };
enum : u8 {
  ELFOSABI_SYSV = 0,
  ELFOSABI_HPUX = 1,
  ELFOSABI_NETBSD = 2,
  ELFOSABI_GNU = 3,
  ELFOSABI_SOLARIS = 6,
  ELFOSABI_FREEBSD = 9,
  ELFOSABI_ARM = 97,
};

enum : u16 { ET_NONE = 0, ET_REL = 1, ET_EXEC = 2, ET_DYN = 3, ET_CORE = 4 };

enum : u16 {
  EM_NONE = 0,
  EM_SPARC = 2,
  EM_386 = 3,
  EM_68K = 4,
  EM_MIPS = 8,
  EM_PARISC = 15,
  EM_SPARC32PLUS = 18,
  EM_PPC = 20,
  EM_PPC64 = 21,
  EM_S390 = 22,
  EM_ARM = 40,
  EM_SH = 42,
  EM_SPARCV9 = 43,
  EM_IA_64 = 50,
  EM_X86_64 = 62,
  EM_AARCH64 = 183,
  EM_TILEGX = 191,
  EM_RISCV = 243,
  EM_LOONGARCH = 258,
  EM_ALPHA = 0x9026,
};

// ---- program headers ------------------------------------------------------

enum : u32 {
  PT_NULL = 0,
  PT_LOAD = 1,
  PT_DYNAMIC = 2,
  PT_INTERP = 3,
  PT_NOTE = 4,
  PT_SHLIB = 5,
  PT_PHDR = 6,
  PT_TLS = 7,
  PT_GNU_EH_FRAME = 0x6474e550,
  PT_GNU_STACK = 0x6474e551,
  PT_GNU_RELRO = 0x6474e552,
  PT_GNU_PROPERTY = 0x6474e553,
  PT_MIPS_ABIFLAGS = 0x70000003,
};
enum : u32 { PF_X = 1, PF_W = 2, PF_R = 4 };

// ---- section headers ------------------------------------------------------

enum : u32 {
  SHT_NULL = 0,
  SHT_PROGBITS = 1,
  SHT_SYMTAB = 2,
  SHT_STRTAB = 3,
  SHT_RELA = 4,
  SHT_HASH = 5,
  SHT_DYNAMIC = 6,
  SHT_NOTE = 7,
  SHT_NOBITS = 8,
  SHT_REL = 9,
  SHT_DYNSYM = 11,
  SHT_INIT_ARRAY = 14,
  SHT_FINI_ARRAY = 15,
  SHT_GNU_HASH = 0x6ffffff6,
  SHT_GNU_verdef = 0x6ffffffd,
  SHT_GNU_verneed = 0x6ffffffe,
  SHT_GNU_versym = 0x6fffffff,
};
enum : u64 { SHF_WRITE = 1, SHF_ALLOC = 2, SHF_EXECINSTR = 4 };
enum : u16 {
  SHN_UNDEF = 0,
  SHN_LORESERVE = 0xff00,
  SHN_ABS = 0xfff1,
  SHN_COMMON = 0xfff2,
  SHN_XINDEX = 0xffff
};

// ---- dynamic section ------------------------------------------------------

enum : i64 {
  DT_NULL = 0,
  DT_NEEDED = 1,
  DT_PLTRELSZ = 2,
  DT_PLTGOT = 3,
  DT_HASH = 4,
  DT_STRTAB = 5,
  DT_SYMTAB = 6,
  DT_RELA = 7,
  DT_RELASZ = 8,
  DT_RELAENT = 9,
  DT_STRSZ = 10,
  DT_SYMENT = 11,
  DT_INIT = 12,
  DT_FINI = 13,
  DT_SONAME = 14,
  DT_RPATH = 15,
  DT_SYMBOLIC = 16,
  DT_REL = 17,
  DT_RELSZ = 18,
  DT_RELENT = 19,
  DT_PLTREL = 20,
  DT_DEBUG = 21,
  DT_TEXTREL = 22,
  DT_JMPREL = 23,
  DT_BIND_NOW = 24,
  DT_INIT_ARRAY = 25,
  DT_FINI_ARRAY = 26,
  DT_INIT_ARRAYSZ = 27,
  DT_FINI_ARRAYSZ = 28,
  DT_RUNPATH = 29,
  DT_FLAGS = 30,
  DT_PREINIT_ARRAY = 32,
  DT_PREINIT_ARRAYSZ = 33,
  DT_SYMTAB_SHNDX = 34,
  DT_RELRSZ = 35,
  DT_RELR = 36,
  DT_RELRENT = 37,
  DT_GNU_HASH = 0x6ffffef5,
  DT_CONFIG = 0x6ffffefa,
  DT_DEPAUDIT = 0x6ffffefb,
  DT_AUDIT = 0x6ffffefc,
  DT_VERSYM = 0x6ffffff0,
  DT_RELACOUNT = 0x6ffffff9,
  DT_RELCOUNT = 0x6ffffffa,
  DT_FLAGS_1 = 0x6ffffffb,
  DT_VERDEF = 0x6ffffffc,
  DT_VERDEFNUM = 0x6ffffffd,
  DT_VERNEED = 0x6ffffffe,
  DT_VERNEEDNUM = 0x6fffffff,
  DT_AUXILIARY = 0x7ffffffd,
  DT_FILTER = 0x7fffffff,
};

// DT_FLAGS bits.
enum : u64 {
  DF_ORIGIN = 0x1,
  DF_SYMBOLIC = 0x2,
  DF_TEXTREL = 0x4,
  DF_BIND_NOW = 0x8,
  DF_STATIC_TLS = 0x10,
};
// DT_FLAGS_1 bits.
enum : u64 {
  DF_1_NOW = 0x1,
  DF_1_GLOBAL = 0x2,
  DF_1_GROUP = 0x4,
  DF_1_NODELETE = 0x8,
  DF_1_LOADFLTR = 0x10,
  DF_1_INITFIRST = 0x20,
  DF_1_NOOPEN = 0x40,
  DF_1_ORIGIN = 0x80,
  DF_1_DIRECT = 0x100,
  DF_1_INTERPOSE = 0x400,
  DF_1_NODEFLIB = 0x800,
  DF_1_NODUMP = 0x1000,
  DF_1_CONFALT = 0x2000,
  DF_1_ENDFILTEE = 0x4000,
  DF_1_DISPRELDNE = 0x8000,
  DF_1_DISPRELPND = 0x10000,
  DF_1_NODIRECT = 0x20000,
  DF_1_NOHDR = 0x100000,
  DF_1_EDITED = 0x200000,
  DF_1_NORELOC = 0x400000,
  DF_1_SYMINTPOSE = 0x800000,
  DF_1_GLOBAUDIT = 0x1000000,
  DF_1_SINGLETON = 0x2000000,
  DF_1_PIE = 0x8000000,
};

// ---- symbols --------------------------------------------------------------

enum : u8 { STB_LOCAL = 0, STB_GLOBAL = 1, STB_WEAK = 2, STB_GNU_UNIQUE = 10 };
enum : u8 {
  STT_NOTYPE = 0,
  STT_OBJECT = 1,
  STT_FUNC = 2,
  STT_SECTION = 3,
  STT_FILE = 4,
  STT_COMMON = 5,
  STT_TLS = 6,
  STT_GNU_IFUNC = 10,
};
enum : u8 {
  STV_DEFAULT = 0,
  STV_INTERNAL = 1,
  STV_HIDDEN = 2,
  STV_PROTECTED = 3
};

// Symbol versioning (GNU): .gnu.version entries.
enum : u16 {
  VER_NDX_LOCAL = 0,
  VER_NDX_GLOBAL = 1,
  VERSYM_HIDDEN = 0x8000,
  VERSYM_VERSION = 0x7fff
};
enum : u16 { VER_FLG_BASE = 1, VER_FLG_WEAK = 2 };

// ---- notes ----------------------------------------------------------------

enum : u32 {
  NT_GNU_ABI_TAG = 1,
  NT_GNU_BUILD_ID = 3,
  NT_GNU_PROPERTY_TYPE_0 = 5
};
enum : u32 {
  GNU_PROPERTY_X86_FEATURE_1_AND = 0xc0000002,
  GNU_PROPERTY_X86_ISA_1_NEEDED = 0xc0008002,
  GNU_PROPERTY_X86_ISA_1_USED = 0xc0010002,
};
enum : u32 {
  GNU_PROPERTY_X86_ISA_1_BASELINE = 1,
  GNU_PROPERTY_X86_ISA_1_V2 = 2,
  GNU_PROPERTY_X86_ISA_1_V3 = 4,
  GNU_PROPERTY_X86_ISA_1_V4 = 8,
};

// ---- structs --------------------------------------------------------------

/// The ELF file header (Elf32_Ehdr / Elf64_Ehdr).
template <typename E>
struct Ehdr {
  u8 e_ident[EI_NIDENT];
  U16<E> e_type;
  U16<E> e_machine;
  U32<E> e_version;
  Word<E> e_entry;
  Word<E> e_phoff;
  Word<E> e_shoff;
  U32<E> e_flags;
  U16<E> e_ehsize;
  U16<E> e_phentsize;
  U16<E> e_phnum;
  U16<E> e_shentsize;
  U16<E> e_shnum;
  U16<E> e_shstrndx;
};

template <typename E>
struct Phdr;
/// Elf32_Phdr, a program header (field order differs from the 64-bit one).
template <typename E>
requires(!E::is_64) struct Phdr<E> {
  U32<E> p_type;
  U32<E> p_offset;
  U32<E> p_vaddr;
  U32<E> p_paddr;
  U32<E> p_filesz;
  U32<E> p_memsz;
  U32<E> p_flags;
  U32<E> p_align;
};
/// Elf64_Phdr, a program header.
template <typename E>
requires(E::is_64) struct Phdr<E> {
  U32<E> p_type;
  U32<E> p_flags;
  U64<E> p_offset;
  U64<E> p_vaddr;
  U64<E> p_paddr;
  U64<E> p_filesz;
  U64<E> p_memsz;
  U64<E> p_align;
};

/// A section header (Elf32_Shdr / Elf64_Shdr).
template <typename E>
struct Shdr {
  U32<E> sh_name;
  U32<E> sh_type;
  Word<E> sh_flags;
  Word<E> sh_addr;
  Word<E> sh_offset;
  Word<E> sh_size;
  U32<E> sh_link;
  U32<E> sh_info;
  Word<E> sh_addralign;
  Word<E> sh_entsize;
};

/// A dynamic section entry (Elf32_Dyn / Elf64_Dyn).
template <typename E>
struct Dyn {
  SWord<E> d_tag;
  Word<E> d_val;
};

template <typename E>
struct Sym;
/// Elf32_Sym, a symbol table entry.
template <typename E>
requires(!E::is_64) struct Sym<E> {
  U32<E> st_name;
  U32<E> st_value;
  U32<E> st_size;
  u8 st_info;
  u8 st_other;
  U16<E> st_shndx;
};
/// Elf64_Sym, a symbol table entry (field order differs from the 32-bit one).
template <typename E>
requires(E::is_64) struct Sym<E> {
  U32<E> st_name;
  u8 st_info;
  u8 st_other;
  U16<E> st_shndx;
  U64<E> st_value;
  U64<E> st_size;
};

/// GNU symbol versioning records; identical for both classes.
template <typename E>
struct Verneed {
  U16<E> vn_version;
  U16<E> vn_cnt;
  U32<E> vn_file;
  U32<E> vn_aux;
  U32<E> vn_next;
};
/// An auxiliary version need entry (Elf_Vernaux): one version needed from a
/// file.
template <typename E>
struct Vernaux {
  U32<E> vna_hash;
  U16<E> vna_flags;
  U16<E> vna_other;
  U32<E> vna_name;
  U32<E> vna_next;
};
/// A version definition (Elf_Verdef).
template <typename E>
struct Verdef {
  U16<E> vd_version;
  U16<E> vd_flags;
  U16<E> vd_ndx;
  U16<E> vd_cnt;
  U32<E> vd_hash;
  U32<E> vd_aux;
  U32<E> vd_next;
};
/// An auxiliary version definition entry (Elf_Verdaux): a version name.
template <typename E>
struct Verdaux {
  U32<E> vda_name;
  U32<E> vda_next;
};

/// A note header (Elf_Nhdr); name and descriptor follow, 4-byte aligned.
template <typename E>
struct Nhdr {
  U32<E> n_namesz;
  U32<E> n_descsz;
  U32<E> n_type;
};

static_assert(sizeof(Ehdr<Elf64LE>) == 64 && sizeof(Ehdr<Elf32BE>) == 52);
static_assert(sizeof(Phdr<Elf64LE>) == 56 && sizeof(Phdr<Elf32LE>) == 32);
static_assert(sizeof(Shdr<Elf64BE>) == 64 && sizeof(Shdr<Elf32LE>) == 40);
static_assert(sizeof(Dyn<Elf64LE>) == 16 && sizeof(Dyn<Elf32LE>) == 8);
static_assert(sizeof(Sym<Elf64LE>) == 24 && sizeof(Sym<Elf32BE>) == 16);
static_assert(sizeof(Verneed<Elf64LE>) == 16 && sizeof(Vernaux<Elf64LE>) == 16);
static_assert(sizeof(Verdef<Elf32LE>) == 20 && sizeof(Verdaux<Elf32LE>) == 8);

/// Names for diagnostics and `inspect`.
const char* machine_name(u16 e_machine);
/// "SYSV", "GNU", ... for EI_OSABI; "unknown" when not known.
const char* osabi_name(u8 osabi);
/// "EXEC", "DYN", ... for e_type; "unknown" when not known.
const char* type_name(u16 e_type);
/// "NEEDED", "RUNPATH", ... for a d_tag; "unknown" when not known.
const char* dynamic_tag_name(i64 tag);
/// "LOAD", "DYNAMIC", ... for p_type; "unknown" when not known.
const char* segment_type_name(u32 p_type);

/// The page size the loader of this machine may use: the largest one, because
/// a segment aligned for 64 KiB pages also works on 4 KiB pages but not the
/// other way round (aarch64/ppc64 kernels configured for 64 KiB pages).
u64 max_page_size(u16 e_machine);

}  // namespace libpkg::elf
