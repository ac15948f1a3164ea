#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write a clang compile database for the module from kbuild's own command files.

kbuild records how it compiled each object in kmod/.<object>.o.cmd, with the kernel's gcc
flags. This reads those records (as the kernel's gen_compile_commands.py does), drops the flags
clang rejects, and writes compile_commands.json, so that clangd and clang-tidy can read the
module's sources.

When the module was built inside a Debian environment (tests/debian/in-env.sh), its paths are
the environment's: --root maps the kernel's paths into the environment's directory, and
--src-map FROM=TO maps the copy of the sources back to the work tree.

Usage: kmod-compdb.py --kmod DIR --kdir KDIR [--root ROOT] [--src-map FROM=TO] -o OUT
"""

import argparse
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

# Flags that take a separate argument, which must travel with them.
WITH_ARG = {"-include", "-I", "-isystem", "-D", "-U", "-o", "-x", "-MF", "-MT", "-MQ"}

# gcc-only flags of kernel builds, dropped when no clang is at hand to ask.
KNOWN_GCC_ONLY = re.compile(
    r"^-(fconserve-stack|fno-allow-store-data-races|mindirect-branch=.*|"
    r"mindirect-branch-register|mindirect-branch-cs-prefix|mfunction-return=.*|"
    r"mharden-sls=.*|mrecord-mcount|mskip-rax-setup|fmin-function-alignment=.*|"
    r"fno-ipa-sra|fsanitize=bounds-strict|fzero-call-used-regs=.*|mpreferred-stack-boundary=.*|"
    r"Wimplicit-fallthrough=.*|Wno-alloc-size-larger-than|Wno-maybe-uninitialized|"
    r"Wpacked-not-aligned|Wno-dangling-pointer|Wno-stringop-.*|Wno-array-bounds|"
    r"Wno-restrict|Wno-format-overflow.*|Wno-format-truncation.*|Wno-packed-not-aligned|"
    r"Wno-unterminated-string-initialization|fno-var-tracking-assignments|"
    r"falign-jumps=.*|falign-loops=.*|fno-jump-table|ftrivial-auto-var-init=.*|"
    r"fpatchable-function-entry=.*|Wp,.*)$")


def clang_accepts(clang, flag, cache):
    """Whether clang compiles an empty file with flag, without a warning about it."""
    if flag not in cache:
        cmd = [clang, "-Werror=unknown-warning-option", "-Werror=unused-command-line-argument",
               "-Werror=ignored-optimization-argument", "-x", "c", "-c", "-o", os.devnull,
               flag, os.devnull]
        cache[flag] = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL).returncode == 0
    return cache[flag]


def read_cmd(path):
    """The compile command saved in a .o.cmd file, or None."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"^(?:saved)?cmd_\S+\.o\s*:=\s*(.*)$", line)
            if m:
                return m.group(1)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kmod", required=True, help="directory of the built module")
    ap.add_argument("--kdir", required=True, help="kernel build directory the module used")
    ap.add_argument("--root", default="", help="directory the build's absolute paths live in")
    ap.add_argument("--src-map", default="", help="FROM=TO: sources built at FROM are at TO")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()

    src_from, _, src_to = args.src_map.partition("=")
    clang = shutil.which("clang")
    cache = {}

    def host_path(p):
        if src_from and (p == src_from or p.startswith(src_from + "/")):
            return src_to + p[len(src_from):]
        if args.root and p.startswith("/"):
            return args.root + p
        return p

    entries = []
    for cmdfile in sorted(glob.glob(os.path.join(args.kmod, ".*.o.cmd"))):
        if cmdfile.endswith(".mod.o.cmd"):
            continue
        cmd = read_cmd(cmdfile)
        if not cmd or " -c " not in cmd:
            continue  # a link or objtool step, not a compilation
        words = shlex.split(cmd)
        out, source, i = ["clang"], None, 1
        while i < len(words):
            w = words[i]
            if w in WITH_ARG and i + 1 < len(words):
                arg = words[i + 1]
                if w != "-o":
                    out += [w, host_path(arg) if w in ("-include", "-I", "-isystem") else arg]
                i += 2
                continue
            if w.startswith("-I"):
                out.append("-I" + host_path(w[2:]))
            elif w.startswith("-"):
                keep = clang_accepts(clang, w, cache) if clang else not KNOWN_GCC_ONLY.match(w)
                if keep and not w.startswith("-Wp,"):
                    out.append(w)
            elif w.endswith(".c"):
                source = host_path(w)
            i += 1
        if source and src_from and not source.startswith(src_to + "/"):
            continue  # compiled for the module, not part of it (scripts/module-common.c)
        if source:
            out.append(source)
            entries.append({"directory": host_path(args.kdir), "file": source,
                            "arguments": out})

    if not entries:
        sys.exit(f"kmod-compdb: no .o.cmd files in {args.kmod}: build the module first")
    with open(args.output, "w", encoding="utf-8") as f:
        json.dump(entries, f, indent=1)
        f.write("\n")
    dropped = sorted(k for k, v in cache.items() if not v)
    print(f"kmod-compdb: {len(entries)} files, dropped {len(dropped)} gcc-only flags"
          f"{': ' + ' '.join(dropped) if dropped else ''}")


if __name__ == "__main__":
    main()
