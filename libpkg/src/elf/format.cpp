// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/elf/format.hpp"

namespace libpkg::elf {

const char* machine_name(u16 m) {
  switch (m) {
    case EM_386:
      return "i386";
    case EM_X86_64:
      return "x86_64";
    case EM_AARCH64:
      return "aarch64";
    case EM_ARM:
      return "arm";
    case EM_PPC:
      return "ppc";
    case EM_PPC64:
      return "ppc64";
    case EM_S390:
      return "s390";
    case EM_MIPS:
      return "mips";
    case EM_RISCV:
      return "riscv";
    case EM_LOONGARCH:
      return "loongarch";
    case EM_SPARC:
      return "sparc";
    case EM_SPARCV9:
      return "sparcv9";
    case EM_IA_64:
      return "ia64";
    case EM_68K:
      return "m68k";
    case EM_SH:
      return "sh";
    case EM_PARISC:
      return "parisc";
    case EM_ALPHA:
      return "alpha";
    case EM_TILEGX:
      return "tilegx";
    default:
      return "unknown";
  }
}

const char* osabi_name(u8 osabi) {
  switch (osabi) {
    case ELFOSABI_SYSV:
      return "SYSV";
    case ELFOSABI_HPUX:
      return "HPUX";
    case ELFOSABI_NETBSD:
      return "NetBSD";
    case ELFOSABI_GNU:
      return "GNU";
    case ELFOSABI_SOLARIS:
      return "Solaris";
    case ELFOSABI_FREEBSD:
      return "FreeBSD";
    case ELFOSABI_ARM:
      return "ARM";
    default:
      return "unknown";
  }
}

const char* type_name(u16 t) {
  switch (t) {
    case ET_NONE:
      return "NONE";
    case ET_REL:
      return "REL";
    case ET_EXEC:
      return "EXEC";
    case ET_DYN:
      return "DYN";
    case ET_CORE:
      return "CORE";
    default:
      return "unknown";
  }
}

const char* dynamic_tag_name(i64 tag) {
  switch (tag) {
    case DT_NULL:
      return "NULL";
    case DT_NEEDED:
      return "NEEDED";
    case DT_PLTRELSZ:
      return "PLTRELSZ";
    case DT_PLTGOT:
      return "PLTGOT";
    case DT_HASH:
      return "HASH";
    case DT_STRTAB:
      return "STRTAB";
    case DT_SYMTAB:
      return "SYMTAB";
    case DT_RELA:
      return "RELA";
    case DT_RELASZ:
      return "RELASZ";
    case DT_RELAENT:
      return "RELAENT";
    case DT_STRSZ:
      return "STRSZ";
    case DT_SYMENT:
      return "SYMENT";
    case DT_INIT:
      return "INIT";
    case DT_FINI:
      return "FINI";
    case DT_SONAME:
      return "SONAME";
    case DT_RPATH:
      return "RPATH";
    case DT_SYMBOLIC:
      return "SYMBOLIC";
    case DT_REL:
      return "REL";
    case DT_RELSZ:
      return "RELSZ";
    case DT_RELENT:
      return "RELENT";
    case DT_PLTREL:
      return "PLTREL";
    case DT_DEBUG:
      return "DEBUG";
    case DT_TEXTREL:
      return "TEXTREL";
    case DT_JMPREL:
      return "JMPREL";
    case DT_BIND_NOW:
      return "BIND_NOW";
    case DT_INIT_ARRAY:
      return "INIT_ARRAY";
    case DT_FINI_ARRAY:
      return "FINI_ARRAY";
    case DT_INIT_ARRAYSZ:
      return "INIT_ARRAYSZ";
    case DT_FINI_ARRAYSZ:
      return "FINI_ARRAYSZ";
    case DT_RUNPATH:
      return "RUNPATH";
    case DT_FLAGS:
      return "FLAGS";
    case DT_PREINIT_ARRAY:
      return "PREINIT_ARRAY";
    case DT_PREINIT_ARRAYSZ:
      return "PREINIT_ARRAYSZ";
    case DT_RELR:
      return "RELR";
    case DT_RELRSZ:
      return "RELRSZ";
    case DT_RELRENT:
      return "RELRENT";
    case DT_GNU_HASH:
      return "GNU_HASH";
    case DT_VERSYM:
      return "VERSYM";
    case DT_RELACOUNT:
      return "RELACOUNT";
    case DT_RELCOUNT:
      return "RELCOUNT";
    case DT_FLAGS_1:
      return "FLAGS_1";
    case DT_VERDEF:
      return "VERDEF";
    case DT_VERDEFNUM:
      return "VERDEFNUM";
    case DT_VERNEED:
      return "VERNEED";
    case DT_VERNEEDNUM:
      return "VERNEEDNUM";
    case DT_AUXILIARY:
      return "AUXILIARY";
    case DT_FILTER:
      return "FILTER";
    case DT_CONFIG:
      return "CONFIG";
    case DT_DEPAUDIT:
      return "DEPAUDIT";
    case DT_AUDIT:
      return "AUDIT";
    default:
      return "unknown";
  }
}

const char* segment_type_name(u32 t) {
  switch (t) {
    case PT_NULL:
      return "NULL";
    case PT_LOAD:
      return "LOAD";
    case PT_DYNAMIC:
      return "DYNAMIC";
    case PT_INTERP:
      return "INTERP";
    case PT_NOTE:
      return "NOTE";
    case PT_SHLIB:
      return "SHLIB";
    case PT_PHDR:
      return "PHDR";
    case PT_TLS:
      return "TLS";
    case PT_GNU_EH_FRAME:
      return "GNU_EH_FRAME";
    case PT_GNU_STACK:
      return "GNU_STACK";
    case PT_GNU_RELRO:
      return "GNU_RELRO";
    case PT_GNU_PROPERTY:
      return "GNU_PROPERTY";
    default:
      return "unknown";
  }
}

u64 max_page_size(u16 m) {
  switch (m) {
    case EM_AARCH64:
    case EM_PPC:
    case EM_PPC64:
    case EM_MIPS:
    case EM_IA_64:
    case EM_ALPHA:
    case EM_TILEGX:
    case EM_LOONGARCH:
      return 0x10000;
    case EM_SPARC:
    case EM_SPARCV9:
    case EM_SPARC32PLUS:
      return 0x2000;
    default:
      return 0x1000;
  }
}

}  // namespace libpkg::elf
