#!/usr/bin/env python3
"""Host side: move a Bun single-file executable's module graph onto another
Bun binary of the same version, swapping embedded native libraries.

usage: bun_graph.py EXE BUN OUT [--swap SHA256_OLD=FILE]...
       bun_graph.py --list EXE

--list prints one line per embedded file: sha256, size, the ELF machine
(x86_64, aarch64, or - for a file that is no ELF) and the name (what a
recipe's `swap` lines are written from). Errors: one line on stderr, exit 1
(exit 2 for a usage error); OUT is written only when everything succeeded.

EXE is a program made by `bun build --compile` (its graph is the ELF
section `.bun`: a u64 length, then the graph); BUN is the plain `bun`
binary to carry it (its `.bun` section is the empty placeholder). Each
--swap replaces the embedded file whose bytes have sha256 SHA256_OLD by
FILE's bytes; every swap must match exactly one embedded file. OUT is
written with mode 755.

The graph (Bun's StandaloneModuleGraph) ends with a 48-byte trailer: a
u64 byte count (where that trailer starts), the modules table pointer, the
entry module's index, the exec-argv pointer, u32 flags and the 16-byte
marker "\\n---- Bun! ----\\n". Pointers are (u32 offset, u32 length) into
the graph; a module record is six pointers (name, contents, source map,
bytecode, module info, bytecode origin path) and four u8 fields. A swap
splices the new bytes in and shifts every pointer past the old ones,
padding so later data keeps its offset modulo 128 (bytecode alignment).

Writing follows what `bun build --compile` does on Linux: the graph goes
page-aligned (64 KiB on aarch64, 4 KiB on x86-64) at the end of the file,
mapped by a new read-only PT_LOAD made from PT_GNU_STACK; its address
goes into the first 8 bytes of the original `.bun` section (where Bun
reads it), the `.bun` section header points at the data and the section
header table moves after it. Deterministic: same inputs, same bytes.
"""

import hashlib
import os
import struct
import sys

MARKER = b"\n---- Bun! ----\n"
TRAILER = 48
RECORD = 52
ALIGN = 128
EM_AARCH64 = 183
PT_LOAD = 1
PT_GNU_STACK = 0x6474E551
PF_R = 4


def die(msg, code=1):
    sys.stderr.write("bun_graph.py: %s\n" % msg)
    sys.exit(code)


def sections(elf):
    """(name, header offset, sh_offset, sh_size) of every section."""
    shoff, = struct.unpack_from("<Q", elf, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 58)
    strtab_off, = struct.unpack_from("<Q", elf, shoff + shstrndx * shentsize + 24)
    out = []
    for i in range(shnum):
        h = shoff + i * shentsize
        name_off, = struct.unpack_from("<I", elf, h)
        end = elf.index(b"\0", strtab_off + name_off)
        name = elf[strtab_off + name_off:end].decode()
        off, size = struct.unpack_from("<QQ", elf, h + 24)
        out.append((name, h, off, size))
    return out


def bun_section(elf, what):
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        die("%s: not a 64-bit little-endian ELF file" % what)
    found = [s for s in sections(elf) if s[0] == ".bun"]
    if len(found) != 1:
        die("%s: no .bun section" % what)
    return found[0]


def read_graph(exe):
    _, _, off, size = bun_section(exe, "EXE")
    n, = struct.unpack_from("<Q", exe, off)
    if n < TRAILER or n + 8 > size:
        die("EXE: the .bun section holds no module graph")
    graph = exe[off + 8:off + 8 + n]
    if graph[-16:] != MARKER:
        die("EXE: the module graph does not end with Bun's marker")
    return bytearray(graph)


def pointers(graph):
    """Offsets (in graph) of every (u32 offset, u32 length) pointer."""
    t = len(graph) - TRAILER
    mods_off, mods_len = struct.unpack_from("<II", graph, t + 8)
    if mods_len % RECORD or mods_off + mods_len > t:
        die("EXE: unexpected module table (%d bytes)" % mods_len)
    ptrs = [t + 8, t + 20]
    for i in range(mods_len // RECORD):
        ptrs.extend(mods_off + i * RECORD + 8 * k for k in range(6))
    return ptrs


def swap(graph, old_sha, new):
    t = len(graph) - TRAILER
    mods_off, mods_len = struct.unpack_from("<II", graph, t + 8)
    hits = []
    for i in range(mods_len // RECORD):
        o, n = struct.unpack_from("<II", graph, mods_off + i * RECORD + 8)
        if hashlib.sha256(graph[o:o + n]).hexdigest() == old_sha:
            hits.append((o, n))
    if len(hits) != 1:
        die("--swap %s: %d embedded files have that sha256, not 1" % (old_sha, len(hits)))
    o, n = hits[0]
    pad = (-(len(new) - n)) % ALIGN
    delta = len(new) + pad - n
    for p in pointers(graph):
        po, pn = struct.unpack_from("<II", graph, p)
        if po == o and pn == n:
            struct.pack_into("<II", graph, p, o, len(new))
        elif po >= o + n:
            struct.pack_into("<II", graph, p, po + delta, pn)
        elif pn and po + pn > o:
            die("--swap %s: another pointer overlaps the swapped file" % old_sha)
    count, = struct.unpack_from("<Q", graph, t)
    struct.pack_into("<Q", graph, t, count + delta)
    graph[o:o + n] = new + b"\0" * pad
    if len(graph) >= 2**32:
        die("the graph outgrew Bun's 32-bit offsets")


def list_files(graph):
    t = len(graph) - TRAILER
    mods_off, mods_len = struct.unpack_from("<II", graph, t + 8)
    machines = {62: "x86_64", 183: "aarch64"}
    for i in range(mods_len // RECORD):
        no, nn, co, cn = struct.unpack_from("<IIII", graph, mods_off + i * RECORD)
        body = bytes(graph[co:co + cn])
        machine = "-"
        if body[:4] == b"\x7fELF" and len(body) > 20:
            code, = struct.unpack_from("<H", body, 18)
            machine = machines.get(code, "elf-%d" % code)
        name = bytes(graph[no:no + nn]).decode("utf-8", "replace")
        print("%s %d %s %s" % (hashlib.sha256(body).hexdigest(), cn, machine, name))


def align(v, a):
    return (v + a - 1) // a * a


def write_graph(bun, graph):
    _, bun_hdr, bun_off, bun_size = bun_section(bun, "BUN")
    if bun_size < 8 or any(bun[bun_off:bun_off + 8]):
        die("BUN: its .bun section is not the empty placeholder")
    machine, = struct.unpack_from("<H", bun, 18)
    page = 0x10000 if machine == EM_AARCH64 else 0x1000
    phoff, = struct.unpack_from("<Q", bun, 32)
    phentsize, phnum = struct.unpack_from("<HH", bun, 54)
    shoff, = struct.unpack_from("<Q", bun, 40)
    shentsize, shnum = struct.unpack_from("<HH", bun, 58)
    vend, stack = 0, None
    for i in range(phnum):
        h = phoff + i * phentsize
        ptype, = struct.unpack_from("<I", bun, h)
        vaddr, = struct.unpack_from("<Q", bun, h + 16)
        memsz, = struct.unpack_from("<Q", bun, h + 40)
        if ptype == PT_LOAD:
            vend = max(vend, vaddr + memsz)
        elif ptype == PT_GNU_STACK and stack is None:
            stack = h
    if stack is None:
        die("BUN: no PT_GNU_STACK header to turn into the graph's PT_LOAD")
    content = struct.pack("<Q", len(graph)) + bytes(graph)
    size = align(len(content), page)
    vaddr = align(vend, page)
    at = align(len(bun), page)
    table = bytes(bun[shoff:shoff + shnum * shentsize])
    out = bytearray(bun)
    out += b"\0" * (at - len(out))
    out += content + b"\0" * (size - len(content))
    new_shoff = len(out)
    out += table
    struct.pack_into("<Q", out, 40, new_shoff)
    struct.pack_into("<Q", out, bun_off, vaddr)
    struct.pack_into("<IIQQQQQQ", out, stack, PT_LOAD, PF_R, at, vaddr, vaddr, size, size, page)
    bun_hdr += new_shoff - shoff
    struct.pack_into("<QQQ", out, bun_hdr + 16, vaddr, at, len(content))
    return out


def main(argv):
    if len(argv) == 2 and argv[0] == "--list":
        with open(argv[1], "rb") as f:
            list_files(read_graph(f.read()))
        return
    if len(argv) < 3:
        die("usage: bun_graph.py EXE BUN OUT [--swap SHA256_OLD=FILE]...", 2)
    exe_path, bun_path, out_path = argv[:3]
    swaps = []
    rest = argv[3:]
    while rest:
        if rest[0] != "--swap" or len(rest) < 2 or "=" not in rest[1]:
            die("expected --swap SHA256_OLD=FILE, got %r" % rest[0], 2)
        swaps.append(rest[1].split("=", 1))
        rest = rest[2:]
    with open(exe_path, "rb") as f:
        graph = read_graph(f.read())
    for old, path in swaps:
        with open(path, "rb") as f:
            swap(graph, old, f.read())
    with open(bun_path, "rb") as f:
        out = write_graph(f.read(), graph)
    tmp = out_path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(out)
    os.chmod(tmp, 0o755)
    os.rename(tmp, out_path)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except OSError as e:
        die("%s: %s" % (e.filename or "", e.strerror or e))
    except (struct.error, IndexError, ValueError) as e:
        die("malformed ELF file or module graph (%s)" % e)
