//! Whether a `-wal` may be applied to the main file beside it.
//!
//! SQLite records nothing in the main file that names its WAL, and it
//! applies any well-formed `-wal` it finds. A WAL copied from another
//! database (or a main file copied at another moment) would then be read as
//! pages of this one: rows of two databases mixed, or a b-tree that points
//! into pages of another file. So before SQLite sees the copy, the WAL is
//! read as SQLite reads it (header, salts, the running checksum, the last
//! commit) and refused unless:
//!
//! * its header is a WAL header (magic `0x377f0682`/`0x377f0683`, format
//!   3007000, a page size SQLite allows, a header checksum that holds);
//! * its page size is the main file's (bytes 16–17 of the main header);
//! * its first frame carries the header's salts (a WAL that is not a
//!   continuation of its own header is a torn copy);
//! * every page the last committed state needs comes from the WAL or from
//!   the main file: a WAL that needs pages the main file does not have
//!   belongs to a bigger database.
//!
//! When the committed WAL rewrites every page of the database (a fresh
//! run: the main file a bare header), the result is made of the WAL alone
//! and nothing is mixed. When it needs pages of the main file, the two are
//! mixed, and the copy is checked by SQLite (`PRAGMA quick_check`, see
//! `sqlite.rs`) before it is read: a WAL of another database rewrites that
//! database's b-tree pages and leaves pointers into pages of this one that
//! are not what they point to.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use super::SnapshotError;

const WAL_HEADER: usize = 32;
const FRAME_HEADER: usize = 24;
const FORMAT: u32 = 3_007_000;

/// What the committed part of a WAL says about the database it rebuilds.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// No committed frame: the main file is read as it is.
    Empty,
    /// Every page of the committed state is in the WAL.
    SelfContained,
    /// Some pages of the committed state come from the main file.
    Mixed,
}

/// Check `wal` (the private copy of `FILE-wal`) against `main` (the copy of
/// `FILE`); `shown` is the user's path of the WAL, for messages.
pub(super) fn check(main: &Path, wal: &Path, shown: &Path) -> Result<Verdict, SnapshotError> {
    let refuse =
        |why: String| SnapshotError::BadInput(format!("{}: {why}: refused", shown.display()));
    let io = |source| SnapshotError::Unreadable {
        path: shown.to_owned(),
        source,
    };
    let main_header = read_prefix(main, 100).map_err(io)?;
    let mut r = BufReader::with_capacity(1 << 16, File::open(wal).map_err(io)?);
    let mut head = [0u8; WAL_HEADER];
    let got = read_full(&mut r, &mut head).map_err(io)?;
    if got == 0 {
        // An empty -wal is what a checkpoint with truncation leaves.
        return Ok(Verdict::Empty);
    }
    if got < WAL_HEADER {
        return Err(refuse(format!("{got} bytes, shorter than a WAL header")));
    }
    let magic = be(&head[0..4]);
    if magic != 0x377f_0682 && magic != 0x377f_0683 {
        return Err(refuse("not a SQLite WAL (bad magic number)".into()));
    }
    let big_endian = magic & 1 == 1;
    if be(&head[4..8]) != FORMAT {
        return Err(refuse(format!(
            "WAL format {} is not 3007000",
            be(&head[4..8])
        )));
    }
    let page_size = be(&head[8..12]);
    if !(512..=65536).contains(&page_size) || !page_size.is_power_of_two() {
        return Err(refuse(format!(
            "page size {page_size} is not one SQLite uses"
        )));
    }
    let salts = [be(&head[16..20]), be(&head[20..24])];
    let mut sum = checksum(big_endian, [0, 0], &head[..24]);
    if sum != [be(&head[24..28]), be(&head[28..32])] {
        return Err(refuse("the WAL header's checksum does not hold".into()));
    }
    if main_header.len() >= 100 {
        let main_page = match u32::from(u16::from_be_bytes([main_header[16], main_header[17]])) {
            1 => 65536,
            n => n,
        };
        if main_page != page_size {
            return Err(refuse(format!(
                "its page size {page_size} is not the page size {main_page} of the database beside it: a WAL of another database"
            )));
        }
    }
    let main_pages = std::fs::metadata(main).map_err(io)?.len() / u64::from(page_size);

    // Walk the frames as SQLite's recovery does: a frame belongs to this
    // WAL while its salts are the header's and the running checksum holds;
    // pages count once a commit frame (database size ≠ 0) follows them.
    let mut page = vec![0u8; page_size as usize];
    let mut pending: Vec<u32> = Vec::new();
    let mut committed: HashSet<u32> = HashSet::new();
    let mut db_pages = 0u32;
    let mut index = 0u64;
    loop {
        let mut fh = [0u8; FRAME_HEADER];
        if read_full(&mut r, &mut fh).map_err(io)? < FRAME_HEADER
            || read_full(&mut r, &mut page).map_err(io)? < page.len()
        {
            break;
        }
        let frame_salts = [be(&fh[8..12]), be(&fh[12..16])];
        if frame_salts != salts {
            if index == 0 {
                return Err(refuse(
                    "its first frame's salts are not its header's (a WAL restarted or copied mid-write)"
                        .into(),
                ));
            }
            break;
        }
        let next = checksum(big_endian, checksum(big_endian, sum, &fh[..8]), &page);
        let pgno = be(&fh[0..4]);
        if next != [be(&fh[16..20]), be(&fh[20..24])] || pgno == 0 {
            break;
        }
        sum = next;
        index += 1;
        pending.push(pgno);
        let size = be(&fh[4..8]);
        if size != 0 {
            committed.extend(pending.drain(..));
            db_pages = size;
        }
    }
    if db_pages == 0 {
        return Ok(Verdict::Empty);
    }
    let mut mixed = false;
    for p in 1..=db_pages {
        if committed.contains(&p) {
            continue;
        }
        if u64::from(p) > main_pages {
            return Err(refuse(format!(
                "its database has {db_pages} pages and page {p} is neither in it nor in the {main_pages}-page database beside it: a WAL of another database"
            )));
        }
        mixed = true;
    }
    Ok(if mixed {
        Verdict::Mixed
    } else {
        Verdict::SelfContained
    })
}

fn be(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// SQLite's WAL checksum (`walChecksumBytes`): pairs of 32-bit words, in the
/// byte order the magic number chose, summed into two accumulators.
fn checksum(big_endian: bool, [mut s1, mut s2]: [u32; 2], bytes: &[u8]) -> [u32; 2] {
    let word = |b: &[u8]| {
        let a = [b[0], b[1], b[2], b[3]];
        if big_endian {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        }
    };
    for pair in bytes.chunks_exact(8) {
        s1 = s1.wrapping_add(word(&pair[0..4])).wrapping_add(s2);
        s2 = s2.wrapping_add(word(&pair[4..8])).wrapping_add(s1);
    }
    [s1, s2]
}

/// Fill `buf` as far as the reader goes; the count read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

fn read_prefix(path: &Path, len: u64) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    File::open(path)?.take(len).read_to_end(&mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixtures' WALs are little-endian-checksummed, as SQLite writes
    /// them on x86_64 and arm64.
    #[test]
    fn the_checksum_is_sqlites() {
        let wal = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/snapshot/opencode/opencode.db-wal"
        ))
        .unwrap();
        assert_eq!(be(&wal[0..4]), 0x377f_0682);
        assert_eq!(
            checksum(false, [0, 0], &wal[..24]),
            [be(&wal[24..28]), be(&wal[28..32])]
        );
    }
}
