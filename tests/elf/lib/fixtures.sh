# SPDX-License-Identifier: BSD-3-Clause
# Fixture builders for the tests/elf integration scripts (sourced after common.sh).
#
# Everything is compiled at test time from tests/elf/src into the scratch
# directory; nothing binary is checked in.
#
# A target is selected with `fx_target T`, which sets:
#   FX_T        target name (x86_64 i686 aarch64 s390x armhf)
#   FX_CC       C compiler          FX_STRIP  the target's strip
#   FX_QEMU     qemu-user binary ("" = run natively)
#   FX_SYSROOT  qemu -L prefix      FX_LDSO   the dynamic loader file on this host
#   FX_MIN_ALIGN  minimum PT_LOAD p_align the target's kernels need (0 = no rule)
# `fx_build DIR` then builds the standard set:
#   DIR/lib/libfixture.so.1   soname libfixture.so.1, versioned (FIXTURE_1.0, FIXTURE_2.0),
#                             DT_RUNPATH "$ORIGIN/../deps:/opt/libpkg-fixture/lib"
#   DIR/lib/libdep.so.1       dep_value() = 777
#   DIR/lib/libextra.so.1     extra_value() = 555 (for --add-needed)
#   DIR/bin/exe-pie           PIE, NEEDED libfixture.so.1 libdep.so.1 libc, RUNPATH $ORIGIN/../lib
#   DIR/bin/exe-nopie         ET_EXEC, same NEEDED, DT_RPATH $ORIGIN/../lib
#   DIR/bin/dlopen_driver     dlopen(argv[1]) and print fixture_value
#   DIR/obj/*.o               objects for fx_lib / fx_exe

# What the programs print when they work.
FX_OUT="fixture_value=4242"
FX_DEFAULT_LIB_RPATH='$ORIGIN/../deps:/opt/libpkg-fixture/lib'

# fx_target T: select a target; returns 1 (reason in FX_MISSING) when its
# compiler, strip, qemu or loader is not installed.
fx_target() {
  FX_T=$1
  FX_QEMU=""
  FX_SYSROOT=""
  FX_MIN_ALIGN=0
  FX_MISSING=""
  local triple=""
  case $1 in
    x86_64)
      FX_CC=gcc
      FX_STRIP=strip
      FX_LDSO=/lib64/ld-linux-x86-64.so.2
      if [[ $(uname -m) != x86_64 ]]; then
        FX_MISSING="host is $(uname -m), not x86_64"
        return 1
      fi
      ;;
    i686) triple=i686-linux-gnu FX_QEMU=qemu-i386 FX_LDSO=lib/ld-linux.so.2 ;;
    aarch64)
      triple=aarch64-linux-gnu FX_QEMU=qemu-aarch64 FX_LDSO=lib/ld-linux-aarch64.so.1
      # Kernels with 64 KiB pages (RHEL, Ampere, Graviton configs) refuse smaller alignment.
      FX_MIN_ALIGN=0x10000
      ;;
    s390x) triple=s390x-linux-gnu FX_QEMU=qemu-s390x FX_LDSO=lib/ld64.so.1 ;;
    armhf) triple=arm-linux-gnueabihf FX_QEMU=qemu-arm FX_LDSO=lib/ld-linux-armhf.so.3 ;;
    *)
      FX_MISSING="unknown target $1"
      return 1
      ;;
  esac
  if [[ -n $triple ]]; then
    FX_CC=$triple-gcc
    FX_STRIP=$triple-strip
    FX_SYSROOT=/usr/$triple
    FX_LDSO=$FX_SYSROOT/$FX_LDSO
  fi
  local t
  for t in "$FX_CC" "$FX_STRIP" ${FX_QEMU:+"$FX_QEMU"}; do
    if ! command -v "$t" >/dev/null; then
      FX_MISSING="$t not installed (scripts/setup.sh installs it)"
      return 1
    fi
  done
  if [[ ! -e $FX_LDSO ]]; then
    FX_MISSING="$FX_LDSO missing (the target's libc6 cross package)"
    return 1
  fi
  return 0
}

# fx_for_each_target FUNC: call FUNC once per target of ${ELF_TARGETS:-x86_64}
# (FX_* set). A target whose toolchain is missing or cannot build and run a
# hello-world (missing libc6-dev-*-cross, broken binfmt) is a failure:
# scripts/setup.sh installs every one of them.
fx_for_each_target() {
  local fn=$1 t
  for t in ${ELF_TARGETS:-x86_64}; do
    if ! fx_target "$t"; then
      fail "target $t unavailable: $FX_MISSING (scripts/setup.sh installs it)"
      continue
    fi
    if ! fx_smoke "$SCRATCH/smoke-$t"; then
      fail "target $t cannot build and run a test program: $FX_MISSING (scripts/setup.sh installs it)"
      continue
    fi
    log "=== target $t"
    "$fn"
  done
}

fx_smoke() {
  local d=$1 out
  mkdir -p "$d"
  printf '#include <stdio.h>\nint main(void){puts("smoke");return 0;}\n' >"$d/s.c"
  if ! FX_MISSING=$("$FX_CC" "$d/s.c" -o "$d/s" 2>&1); then
    return 1
  fi
  out=$(fx_run "$d/s" 2>&1) || {
    FX_MISSING=$out
    return 1
  }
  [[ $out == smoke ]]
}

# fx_run [--ld-path=DIRS] [--env=VAR=VALUE] PROG ARGS...: run a target program,
# natively or under qemu-user (-L sysroot); DIRS becomes LD_LIBRARY_PATH of the
# program only (under qemu through -E, so qemu itself is not affected).
fx_run() {
  local ldp="" envs=()
  while [[ ${1:-} == --* ]]; do
    case $1 in
      --ld-path=*) ldp=${1#--ld-path=} ;;
      --env=*) envs+=("${1#--env=}") ;;
      *) break ;;
    esac
    shift
  done
  [[ -n $ldp ]] && envs+=("LD_LIBRARY_PATH=$ldp")
  if [[ -z $FX_QEMU ]]; then
    env "${envs[@]}" timeout 60 "$@"
  else
    local qargs=() e
    for e in "${envs[@]}"; do qargs+=(-E "$e"); done
    timeout 60 "$FX_QEMU" -L "$FX_SYSROOT" "${qargs[@]}" "$@"
  fi
}

_fx_cc() {
  local err
  if ! err=$("$FX_CC" "$@" 2>&1); then
    log "fixture build failed: $FX_CC $*"
    log "$err"
    return 1
  fi
}

# fx_build DIR: the standard fixture set for the current target (see above).
fx_build() {
  local d=$1 src=$ELFTEST_DIR/src
  mkdir -p "$d/obj" "$d/lib" "$d/bin" "$d/var"
  _fx_cc -O1 -fPIC -c "$src/fixture.c" -o "$d/obj/fixture.o"
  _fx_cc -O1 -fPIC -c "$src/dep.c" -o "$d/obj/dep.o"
  _fx_cc -O1 -fPIC -c "$src/extra.c" -o "$d/obj/extra.o"
  _fx_cc -O1 -fPIE -c "$src/main.c" -o "$d/obj/main-pie.o"
  _fx_cc -O1 -fno-pie -c "$src/main.c" -o "$d/obj/main-nopie.o"
  _fx_cc -O1 -fPIE -c "$src/dlopen_driver.c" -o "$d/obj/driver.o"
  _fx_cc -shared -Wl,-soname,libdep.so.1 "$d/obj/dep.o" -o "$d/lib/libdep.so.1"
  _fx_cc -shared -Wl,-soname,libextra.so.1 "$d/obj/extra.o" -o "$d/lib/libextra.so.1"
  fx_lib "$d" "$d/lib/libfixture.so.1"
  fx_exe "$d" "$d/bin/exe-pie" --pie --dtag=runpath --rpath='$ORIGIN/../lib'
  fx_exe "$d" "$d/bin/exe-nopie" --no-pie --dtag=rpath --rpath='$ORIGIN/../lib'
  _fx_cc -pie "$d/obj/driver.o" -ldl -o "$d/bin/dlopen_driver"
}

# fx_lib FXDIR OUT [options]: a fixture library from FXDIR/obj.
#   --dtag=runpath|rpath   (default runpath)   --rpath=VALUE (default $FX_DEFAULT_LIB_RPATH; empty = none)
#   --soname=NAME (default libfixture.so.1)    --no-soname
#   --unversioned          no version script   --many   3000 extra exported functions (long .dynstr)
#   --ld=FLAG              extra linker flag (repeatable), e.g. --ld=-zmax-page-size=0x10000
fx_lib() {
  local d=$1 out=$2
  shift 2
  local dtag=runpath rpath=$FX_DEFAULT_LIB_RPATH soname=libfixture.so.1 versioned=1 many=0
  local ldflags=() objs=("$d/obj/fixture.o")
  local o
  for o in "$@"; do
    case $o in
      --dtag=*) dtag=${o#--dtag=} ;;
      --rpath=*) rpath=${o#--rpath=} ;;
      --soname=*) soname=${o#--soname=} ;;
      --no-soname) soname="" ;;
      --unversioned) versioned=0 ;;
      --many) many=1 ;;
      --ld=*) ldflags+=("-Wl,${o#--ld=}") ;;
      *)
        log "fx_lib: unknown option $o"
        return 1
        ;;
    esac
  done
  if ((many)); then
    if [[ ! -e $d/obj/many.o ]]; then
      # ~3000 exported functions with long names: a .dynstr of ~180 KB and a
      # big .dynsym/.gnu.hash, so nothing fits by accident.
      awk 'BEGIN { for (i = 0; i < 3000; i++)
        printf "int fixture_generated_function_with_a_fairly_long_name_%04d(void) { return %d; }\n", i, i }' \
        >"$d/obj/many.c"
      _fx_cc -O0 -fPIC -c "$d/obj/many.c" -o "$d/obj/many.o"
    fi
    objs+=("$d/obj/many.o")
  fi
  [[ -n $soname ]] && ldflags+=("-Wl,-soname,$soname")
  ((versioned)) && ldflags+=("-Wl,--version-script,$ELFTEST_DIR/src/fixture.map")
  if [[ -n $rpath ]]; then
    if [[ $dtag == rpath ]]; then
      ldflags+=(-Wl,--disable-new-dtags)
    else
      ldflags+=(-Wl,--enable-new-dtags)
    fi
    ldflags+=("-Wl,-rpath,$rpath")
  fi
  # --no-as-needed: Debian's gcc passes --as-needed, which would drop libc.so.6
  # (nothing in the fixture calls it) and leave no DT_NEEDED to edit or check.
  _fx_cc -shared "${objs[@]}" -Wl,--no-as-needed "${ldflags[@]}" -o "$out"
}

# fx_exe FXDIR OUT [--pie|--no-pie] [--dtag=runpath|rpath] [--rpath=VALUE]
#        [--lib=PATH] [--no-dep] [--ld=FLAG]...
# Links main.c against FXDIR/lib/libfixture.so.1 (or --lib) and libdep.so.1
# (kept as an unused DT_NEEDED with --no-as-needed, for --remove-needed).
fx_exe() {
  local d=$1 out=$2
  shift 2
  local pie=1 dtag=runpath rpath="" lib=$d/lib/libfixture.so.1 dep=1 ldflags=() o
  for o in "$@"; do
    case $o in
      --pie) pie=1 ;;
      --no-pie) pie=0 ;;
      --dtag=*) dtag=${o#--dtag=} ;;
      --rpath=*) rpath=${o#--rpath=} ;;
      --lib=*) lib=${o#--lib=} ;;
      --no-dep) dep=0 ;;
      --ld=*) ldflags+=("-Wl,${o#--ld=}") ;;
      *)
        log "fx_exe: unknown option $o"
        return 1
        ;;
    esac
  done
  local args=()
  if ((pie)); then
    args+=(-pie "$d/obj/main-pie.o")
  else
    args+=(-no-pie "$d/obj/main-nopie.o")
  fi
  args+=(-Wl,--no-as-needed "$lib")
  ((dep)) && args+=("$d/lib/libdep.so.1")
  if [[ -n $rpath ]]; then
    [[ $dtag == rpath ]] && args+=(-Wl,--disable-new-dtags) || args+=(-Wl,--enable-new-dtags)
    args+=("-Wl,-rpath,$rpath")
  fi
  _fx_cc "${args[@]}" "${ldflags[@]}" -ldl -o "$out"
}

# Library layout variants (name -> fx_lib options); "noshdr" is the default
# library with its section headers removed (fx_variant builds it).
declare -A FX_VARIANTS=(
  [runpath]=""
  [rpath]="--dtag=rpath"
  [norpath]="--rpath="
  [nosoname]="--no-soname"
  [unversioned]="--unversioned"
  [many]="--many"
  [page64k]="--ld=-zmax-page-size=0x10000"
  [sepcode]="--ld=-zseparate-code"
  [nosepcode]="--ld=-znoseparate-code"
  [norelro]="--ld=-znorelro"
  [relronow]="--ld=-zrelro --ld=-znow"
)
FX_VARIANT_NAMES="runpath rpath norpath nosoname unversioned many page64k sepcode nosepcode norelro relronow noshdr"

# fx_variant FXDIR NAME: build (once) and print the path of a library variant.
fx_variant() {
  local d=$1 name=$2 out=$1/var/libfixture-$2.so
  if [[ ! -e $out ]]; then
    if [[ $name == noshdr ]]; then
      "${ELFCHECK[@]}" strip-shdrs "$d/lib/libfixture.so.1" "$out"
    else
      # shellcheck disable=SC2086  # the option list is split on purpose
      fx_lib "$d" "$out" ${FX_VARIANTS[$name]}
    fi
  fi
  printf '%s\n' "$out"
}

# fx_scene FXDIR NAME: a fresh copy of FXDIR/{bin,lib} to edit; prints its path.
fx_scene() {
  local s=$SCRATCH/scenes/$FX_T-$2
  rm -rf "$s"
  mkdir -p "$s"
  cp -a "$1/bin" "$1/lib" "$s/"
  printf '%s\n' "$s"
}

# fx_ldso_interp: the PT_INTERP string the target's programs carry.
fx_interp_of() {
  readelf -lW "$1" | sed -n 's/.*\[Requesting program interpreter: \(.*\)\]/\1/p'
}

# fx_big_lib FXDIR OUT MB: a shared library carrying an MB-megabyte payload
# in .rodata (objcopy -I binary), for the kill-mid-write test.
fx_big_lib() {
  local d=$1 out=$2 mb=$3 bfd arch
  case $FX_T in
    x86_64) bfd=elf64-x86-64 arch=i386:x86-64 ;;
    i686) bfd=elf32-i386 arch=i386 ;;
    aarch64) bfd=elf64-littleaarch64 arch=aarch64 ;;
    s390x) bfd=elf64-s390 arch=s390:64-bit ;;
    armhf) bfd=elf32-littlearm arch=arm ;;
  esac
  (
    cd "$d/obj" || exit 1
    # Random-ish but cheap content: a repeated 1 MiB random block, so the
    # file is not sparse-friendly and a truncated copy cannot match by luck.
    head -c 1048576 /dev/urandom >block.bin
    rm -f payload.bin
    local i
    for ((i = 0; i < mb; i++)); do cat block.bin; done >payload.bin
    objcopy -I binary -O "$bfd" -B "$arch" \
      --rename-section .data=.rodata,alloc,load,readonly,data,contents \
      payload.bin payload.o
    rm -f payload.bin block.bin
  )
  _fx_cc -O1 -fPIC -c "$ELFTEST_DIR/src/big.c" -o "$d/obj/big.o"
  _fx_cc -shared -Wl,-soname,libbig.so.1 -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/../lib:/opt/libpkg/big' \
    "$d/obj/big.o" "$d/obj/payload.o" -o "$out"
  rm -f "$d/obj/payload.o"
}
