#!/usr/bin/env python3
"""Host side (prepare.sh calls it): give an x86_64 or aarch64 ELF executable fixed-size
placeholders for its interpreter (PT_INTERP) and its library path (DT_RPATH)
without moving a single existing byte.

patchelf makes room by shifting the file's segments, and a Bun single-file
executable (OpenCode, Kilo) then crashes at start (SIGSEGV, measured with
patchelf 0.14.3 on OpenCode 1.17.11). Here nothing moves: one page is
appended to the file holding both placeholders, the PT_NOTE header (not
needed to run) gives its place to the PT_LOAD that maps that page
read-only (the headers after it move up by one, the new one is last), PT_INTERP
points into it, and one dynamic entry becomes DT_RPATH pointing into it (an
existing DT_RPATH/DT_RUNPATH, else DT_DEBUG, else DT_HASH when DT_GNU_HASH is
there: the loader then uses the GNU hash). Every other byte stays where it
was, so programs that read their own file by offset keep working.

usage: elf_placeholders.py FILE INTERP_MARKER RPATH_MARKER [ARCH]
ARCH (x86_64, the default, or aarch64) is the arch the caller expects: a
file of another e_machine is refused, so an x86_64 program never lands in
an aarch64 artifact (and the other way round). On aarch64 the new page is
64 KiB-aligned (offset and address): kernels with 64 KiB pages map a
PT_LOAD only at that alignment; x86_64 keeps 4 KiB.
Prints "INTERP_OFFSET INTERP_SIZE RPATH_OFFSET RPATH_SIZE" (file offsets).
"""

import struct
import sys

PT_LOAD, PT_INTERP, PT_NOTE = 1, 3, 4
DT_NULL, DT_HASH, DT_STRTAB, DT_RPATH, DT_DEBUG, DT_RUNPATH = 0, 4, 5, 15, 21, 29
DT_GNU_HASH = 0x6FFFFEF5
# e_machine and the alignment of the appended PT_LOAD, per arch.
ARCHES = {"x86_64": (62, 0x1000), "aarch64": (183, 0x10000)}


def fail(msg):
    sys.stderr.write("elf_placeholders.py: %s\n" % msg)
    sys.exit(1)


def main():
    if len(sys.argv) not in (4, 5):
        fail("usage: elf_placeholders.py FILE INTERP_MARKER RPATH_MARKER [ARCH]")
    path, interp, rpath = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
    arch = sys.argv[4] if len(sys.argv) == 5 else "x86_64"
    if arch not in ARCHES:
        fail("unknown arch %r (x86_64 or aarch64)" % arch)
    machine, page = ARCHES[arch]
    data = bytearray(open(path, "rb").read())
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        fail("%s: not a 64-bit little-endian ELF file" % path)
    e_machine = struct.unpack_from("<H", data, 18)[0]
    if e_machine != machine:
        names = {m: a for a, (m, _) in ARCHES.items()}
        fail("%s: not %s (e_machine %d%s)" % (path, arch, e_machine,
             ", an %s program" % names[e_machine] if e_machine in names else ""))
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    phdrs = []
    for i in range(phnum):
        off = phoff + i * phentsize
        phdrs.append((off,) + struct.unpack_from("<IIQQQQQQ", data, off))
    # (hdr_off, type, flags, offset, vaddr, paddr, filesz, memsz, align)
    loads = [p for p in phdrs if p[1] == PT_LOAD]
    interp_h = [p for p in phdrs if p[1] == PT_INTERP]
    notes = [p for p in phdrs if p[1] == PT_NOTE]
    dyn_h = [p for p in phdrs if p[1] == 2]
    if len(interp_h) != 1 or not notes or len(dyn_h) != 1 or not loads:
        fail("%s: needs one PT_INTERP, one PT_DYNAMIC, a PT_NOTE and PT_LOADs" % path)
    # The new PT_LOAD must come after every PT_LOAD in the table (they are
    # sorted by address) and lies above all of them: one PT_NOTE leaves its
    # place, the headers after it move up by one, the new one goes last.
    note_index = max(i for i, p in enumerate(phdrs) if p[1] == PT_NOTE)
    order = [p for i, p in enumerate(phdrs) if i != note_index]
    top = max(p[4] + p[7] for p in loads)
    vaddr = (top + page - 1) // page * page + page
    offset = (len(data) + page - 1) // page * page
    isize, rsize = len(interp) + 1, len(rpath) + 1
    block = interp + b"\0" + rpath + b"\0"
    size = len(block)

    # The dynamic entry that becomes DT_RPATH.
    d_off = dyn_h[0][3]
    entries = []
    for k in range(dyn_h[0][6] // 16):
        tag, val = struct.unpack_from("<qQ", data, d_off + 16 * k)
        entries.append((tag, val))
        if tag == DT_NULL:
            break
    tags = [t for t, _ in entries]
    strtab = next((v for t, v in entries if t == DT_STRTAB), None)
    if strtab is None:
        fail("%s: no DT_STRTAB" % path)
    for choice in (DT_RPATH, DT_RUNPATH, DT_DEBUG):
        if choice in tags:
            slot = tags.index(choice)
            break
    else:
        if DT_HASH in tags and DT_GNU_HASH in tags:
            slot = tags.index(DT_HASH)
        else:
            fail("%s: no dynamic entry to turn into DT_RPATH" % path)
    if DT_RUNPATH in tags and tags.index(DT_RUNPATH) != slot:
        fail("%s: has DT_RUNPATH besides another slot" % path)

    data.extend(b"\0" * (offset - len(data)))
    data.extend(block)
    for i, p in enumerate(order):
        struct.pack_into("<II6Q", data, phoff + i * phentsize, *p[1:])
    last = phoff + (phnum - 1) * phentsize
    struct.pack_into("<II6Q", data, last, PT_LOAD, 4, offset, vaddr, vaddr, size, size, page)
    # Where the PT_INTERP header is now.
    interp_pos = phoff + order.index(interp_h[0]) * phentsize
    ih = interp_h[0]
    struct.pack_into("<II6Q", data, interp_pos, PT_INTERP, ih[2], offset, vaddr, vaddr, isize, isize, 1)
    struct.pack_into("<qQ", data, d_off + 16 * slot, DT_RPATH, vaddr + isize - strtab)
    with open(path, "wb") as f:
        f.write(data)
    print(offset, isize, offset + isize, rsize)


main()
