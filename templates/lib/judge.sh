# The listing judge (awk, POSIX: mawk, gawk and busybox awk alike). Input:
# the names (tar -t), then the verbose listing (tar -tv), one member a line in
# the same order. Prints one reason and exits 1 to refuse. busybox shows a
# hard link as a `-` line ending in `NAME -> TARGET`, GNU tar as an `h` line
# ending in `NAME link to TARGET`; a target is read only where " NAME SEP"
# occurs exactly once in the line (owner names are the archive's too).
# shellcheck disable=SC2016 # awk code: its $0 is awk's, not the shell's
unpack_judge='
function norm(p) {
    while (substr(p, 1, 2) == "./") p = substr(p, 3)
    while (length(p) > 1 && substr(p, length(p), 1) == "/") p = substr(p, 1, length(p) - 1)
    if (p == "") p = "."
    return p
}
function refuse(msg) { print msg; bad = 1; exit 1 }
function check_path(p, what,   n, c, i) {
    if (substr(p, 1, 1) == "/") refuse(what " has an absolute name: " p)
    n = split(p, c, "/")
    for (i = 1; i <= n; i++)
        if (c[i] == "" || c[i] == "." || c[i] == "..")
            refuse(what " has an empty, . or .. name component: " p)
}
function occurrences(t, s,   n, i) {
    n = 0
    while ((i = index(t, s)) > 0) { n++; t = substr(t, i + 1) }
    return n
}
function target_of(line, raw, sep,   key) {
    key = " " raw sep
    if (occurrences(line, key) != 1) return ""
    return substr(line, index(line, key) + length(key))
}
NR == FNR { name[++n] = $0; next }
{ line[++m] = $0 }
END {
    if (bad) exit 1
    if (n != m) refuse("the name and verbose listings disagree")
    for (i = 1; i <= n; i++) {
        l = line[i]; raw = name[i]
        if (l !~ /^[-dlh][-r][-w][-xsS][-r][-w][-xsS][-r][-w][-xtT] /)
            refuse("member " raw " is not a file, directory or link (device node, FIFO, ...), or a name holds a newline")
        t = substr(l, 1, 1)
        p = norm(raw)
        if (p == ".") {
            if (t != "d") refuse("the archive root is not a directory")
            continue
        }
        check_path(p, "member")
        if (p in type) refuse("member " p " appears twice")
        if (t == "-" && substr(l, length(l) - length(raw)) != " " raw) t = "h"
        if (t == "h") {
            tg = target_of(l, raw, " link to ")
            if (tg == "") tg = target_of(l, raw, " -> ")
            if (tg == "") refuse("cannot read the target of the hard link " p)
            tg = norm(tg)
            check_path(tg, "the target of the hard link " p)
            if (!(tg in type) || (type[tg] != "-" && type[tg] != "h"))
                refuse("hard link " p " is not to a file earlier in the archive: " tg)
        }
        if (t == "l") {
            tg = target_of(l, raw, " -> ")
            if (tg == "") refuse("cannot read the target of the symlink " p)
            if (substr(tg, 1, 1) == "/") refuse("symlink " p " points to an absolute path: " tg)
            depth = split(p, c, "/") - 1
            k = split(tg, c, "/")
            for (j = 1; j <= k; j++) {
                if (c[j] == "" || c[j] == ".") continue
                if (c[j] == "..") depth--; else depth++
                if (depth < 0) refuse("symlink " p " points outside the archive: " tg)
            }
        }
        type[p] = t
    }
    for (p in type) {
        k = split(p, c, "/")
        a = c[1]
        for (j = 1; j < k; j++) {
            if (j > 1) a = a "/" c[j]
            if ((a in type) && type[a] != "d")
                refuse("member " p " lies under the " (type[a] == "l" ? "symlink " : "file ") a)
        }
    }
    print n
}'
