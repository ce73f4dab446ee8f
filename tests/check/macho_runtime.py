#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_binary's runtime checks on a macOS libtorch zip, on this Linux host.

The zip's dylibs are linked at test time with clang-14/ld64.lld
(lib/macho_fixtures.py). Loading or linking them needs macOS, so import,
link, link-wrong-abi and gpu must be "not applicable" with that reason in
the report — not a failure, and not a pass either:
  - by default (runtime checks on) and with a --client C++ program;
  - also when the zip carries a Linux tool (an ELF file) beside the dylibs:
    the package is then not "Mach-O only", but a host compiler linking a
    client that needs nothing would "pass" without touching one dylib;
  - `--require link` fails (exit 1), the problem saying why it can't run.
The ELF file's presence is confirmed with readelf, the dylibs' with
llvm-objdump-14, so the fixture really is mixed.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

sys.dont_write_bytecode = True
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "lib"))
import macho_fixtures as mf  # noqa: E402
from checkrun import Case  # noqa: E402

RUNTIME = ("import", "link", "link-wrong-abi", "gpu")
WHY = "not applicable: Mach-O binaries load only on macOS"


def expect_not_applicable(c: Case, r) -> None:
    for cid in RUNTIME:
        summary = r.check(cid).get("summary", "")
        c.expect(r.status(cid) == "skip" and WHY in summary,
                 f"{cid}: skip, {WHY!r}; got {r.status(cid)} {summary!r}\n{r.describe()}")


def expect_required_link_fails(c: Case, r) -> None:
    c.expect(r.rc == 1, f"exit 1 with --require link, got {r.rc}\n{r.describe()}")
    c.expect(r.status("link") == "fail", f"link fails: {r.check('link')}")
    c.expect(any("required (--require link) but skipped: " + WHY in p.get("message", "")
                 for p in r.check("link").get("problems", [])),
             f"the problem says why: {r.check('link')}")


def main() -> None:
    c = Case("macho-runtime")
    missing = mf.missing_tools()
    if missing:
        c.fail(f"not installed (scripts/setup.sh installs them): {', '.join(missing)}")
        c.finish()
    try:
        files = mf.build_files(c.scratch / "lt", archs=("arm64",))
    except mf.FixtureError as e:
        c.fail(f"fixture: {e}")
        c.finish()
    lib = {k: v for k, v in files.items() if k.startswith("macpkg/lib/")}
    zip_macos = mf.pack_libtorch(c.scratch / "lt", lib)

    # A C++ client needing nothing from the package: any host compiler links
    # and runs it, so only "not applicable" keeps it from passing.
    client = c.scratch / "client.cpp"
    client.write_text("int main() { return 0; }\n")

    c.begin("macOS libtorch zip")
    for args in ((), ("--client", client)):
        r = c.run(zip_macos, *args)
        c.expect(r.rc == 0, f"exit 0: {r.describe()}")
        expect_not_applicable(c, r)
    expect_required_link_fails(c, c.run(zip_macos, "--require", "link"))

    c.begin("macOS libtorch zip with a Linux tool in bin/")
    tool = c.scratch / "tool"
    src = c.scratch / "tool.c"
    src.write_text("int main(void) { return 0; }\n")
    mf.run(["gcc", "-o", tool, src])
    mixed = c.scratch / "mixed" / zip_macos.name
    mixed.parent.mkdir()
    mixed.write_bytes(zip_macos.read_bytes())
    with zipfile.ZipFile(mixed, "a", zipfile.ZIP_DEFLATED) as z:
        info = zipfile.ZipInfo("libtorch/bin/tool")
        info.external_attr = 0o100755 << 16
        z.writestr(info, tool.read_bytes())
    # Independent confirmation that the fixture is mixed.
    unpacked = c.scratch / "mixed-unpacked"
    zipfile.ZipFile(mixed).extractall(unpacked)
    elf = subprocess.run(["readelf", "-h", unpacked / "libtorch/bin/tool"], capture_output=True,
                         text=True)
    c.expect(elf.returncode == 0 and "ELF64" in elf.stdout, f"bin/tool is ELF: {elf.stderr}")
    dylibs = sorted((unpacked / "libtorch/lib").glob("*.dylib"))
    macho = subprocess.run(["llvm-objdump-14", "--macho", "--private-header", *dylibs],
                           capture_output=True, text=True)
    c.expect(dylibs and macho.returncode == 0 and "MH_MAGIC_64" in macho.stdout,
             f"lib/*.dylib are Mach-O: {macho.stderr[:300]}")
    for args in ((), ("--client", client)):
        r = c.run(mixed, *args)
        c.expect(r.rc in (0, 1) and r.report is not None, f"a report: {r.describe()}")
        expect_not_applicable(c, r)
    expect_required_link_fails(c, c.run(mixed, "--client", client, "--require", "link"))
    c.finish()


if __name__ == "__main__":
    main()
