//! The write connection's VFS: the platform's own, except that a commit's WAL frames reach the
//! file in one `write` instead of two per frame.
//!
//! SQLite appends each frame of a commit with two writes, its 24-byte header and then its
//! page, so a commit that changes 19 pages costs 38 system calls, and on a WAL that grows each
//! header write also allocates and zeroes a page of the page cache that the page write then
//! fills. Measured on the development machine, writing one 19-frame commit as 38 writes took
//! 46 µs on a growing file and 26 µs on a reused one; as one write, 22 and 16 µs. Small
//! commits are what the store makes most (a single enqueue, a host loop's ack and claim), so
//! this is paid on nearly every call.
//!
//! The wrapper keeps the writes that continue the previous write in memory and writes them
//! out as one, at the latest with the page of the commit frame (the frame whose header carries
//! the database size, always the last frame SQLite appends for a commit). Every other call on
//! the file (a read, a sync, a size, a truncate, a lock, a file control, a close) and every
//! write that does not continue the previous one first writes out what is kept. So by the time
//! SQLite publishes a commit in the shared-memory index (which readers in this or another
//! process go by, and which it updates after the last frame without another call on the WAL
//! file), every byte of that commit is in the file, and nothing a reader can see is missing.
//! Frames of an uncommitted transaction (a spill of a large one) may stay in memory until the
//! commit; no reader looks at them, and the writer's own reads of them write them out first.
//! A write error surfaces on the call that writes the bytes out; the transaction then fails
//! as it would have on the frame's own write.
//!
//! Only the WAL file is wrapped: the database file, its shared memory and every other file get
//! the platform VFS's own methods, so locking, shared memory and memory-mapped reads are
//! exactly SQLite's. Other processes and connections (readers, the checkpointer) open the file
//! with the platform VFS; the file format is SQLite's.

use std::ffi::{c_int, c_void, CStr};
use std::sync::OnceLock;

use flexiq_core::{Error, Result};
use rusqlite::ffi;

/// The name the write connection opens its file with.
pub(crate) const NAME: &CStr = c"flexiq-wal";

/// Bytes of a WAL frame header.
const FRAME_HEADER: usize = 24;

/// Most bytes kept before they are written out anyway: the unix VFS writes at most 128 KiB
/// less one byte per call (it masks the length to 17 bits), and reports a longer write as a
/// full disk.
const MAX_KEPT: usize = 120 << 10;

/// What one WAL file keeps in memory.
#[derive(Default)]
struct Kept {
    /// The bytes not yet written; they end where the last write ended.
    bytes: Vec<u8>,
    /// Where the last write (kept or not) ended.
    last_end: i64,
    /// The last write was a commit frame's header: write out after the next one (its page).
    commit_page_next: bool,
}

/// The wrapper's file: SQLite's file header, the kept bytes, then the platform's file.
#[repr(C)]
struct Shim {
    base: ffi::sqlite3_file,
    kept: *mut Kept,
}

/// The platform VFS, found once.
fn platform() -> *mut ffi::sqlite3_vfs {
    static PLATFORM: OnceLock<usize> = OnceLock::new();
    // SAFETY: `sqlite3_vfs_find` initialises SQLite if needed and is thread-safe; a null name
    // asks for the default VFS, which lives for the process.
    *PLATFORM.get_or_init(|| unsafe { ffi::sqlite3_vfs_find(std::ptr::null()) } as usize)
        as *mut ffi::sqlite3_vfs
}

/// Registers the VFS (once) and returns its name for `open_with_flags_and_vfs`.
pub(crate) fn name() -> Result<&'static CStr> {
    static REGISTERED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            let inner = platform();
            if inner.is_null() {
                return Err("sqlite has no default VFS".to_string());
            }
            // SAFETY: `inner` is SQLite's default VFS, valid for the process. The copy keeps
            // every method and the app data of the platform VFS (so methods called with this
            // VFS behave as with it) and replaces the name, the file size and `xOpen`. It is
            // leaked: SQLite keeps a pointer to a registered VFS for the process's life.
            unsafe {
                let mut vfs = *inner;
                vfs.pNext = std::ptr::null_mut();
                vfs.zName = NAME.as_ptr();
                vfs.szOsFile = inner_offset() as c_int + (*inner).szOsFile;
                vfs.xOpen = Some(open);
                let vfs = Box::leak(Box::new(vfs));
                match ffi::sqlite3_vfs_register(vfs, 0) {
                    ffi::SQLITE_OK => Ok(()),
                    rc => Err(format!("cannot register the {NAME:?} sqlite VFS (code {rc})")),
                }
            }
        })
        .clone()
        .map(|()| NAME)
        .map_err(Error::backend)
}

/// Where the platform's file starts inside a [`Shim`] (8-byte aligned, as SQLite aligns).
const fn inner_offset() -> usize {
    std::mem::size_of::<Shim>().div_ceil(8) * 8
}

/// # Safety
/// `f` points at a file of this VFS's size.
unsafe fn inner_of(f: *mut ffi::sqlite3_file) -> *mut ffi::sqlite3_file {
    // SAFETY: the caller's file is `szOsFile` bytes, the platform's file starts at the offset.
    unsafe { f.cast::<u8>().add(inner_offset()).cast() }
}

/// # Safety
/// `f` is an open WAL file of this VFS.
unsafe fn kept_of<'a>(f: *mut ffi::sqlite3_file) -> &'a mut Kept {
    // SAFETY: `open` set `kept` to a live box for a WAL file, freed only by `close`, and
    // SQLite never calls one file's methods from two threads at once.
    unsafe { &mut *(*f.cast::<Shim>()).kept }
}

/// Opens `name`; a WAL file gets the wrapper's methods, every other file the platform's.
unsafe extern "C" fn open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    f: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let inner_vfs = platform();
    // SAFETY: SQLite passes a file of this VFS's size; the platform VFS is valid.
    unsafe {
        let Some(inner_open) = (*inner_vfs).xOpen else { return ffi::SQLITE_CANTOPEN };
        if flags & ffi::SQLITE_OPEN_WAL == 0 {
            // The platform's file in the whole space: SQLite then calls its methods directly.
            return inner_open(inner_vfs, name, f, flags, out_flags);
        }
        (*f).pMethods = std::ptr::null();
        let rc = inner_open(inner_vfs, name, inner_of(f), flags, out_flags);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        (*f.cast::<Shim>()).kept = Box::into_raw(Box::default());
        (*f).pMethods = &METHODS;
    }
    ffi::SQLITE_OK
}

/// Writes out what `f` keeps; the kept bytes are gone either way.
///
/// # Safety
/// `f` is an open WAL file of this VFS.
unsafe fn write_out(f: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: per the caller.
    let kept = unsafe { kept_of(f) };
    kept.commit_page_next = false;
    // SAFETY: per the caller.
    unsafe { write_out_kept(kept, inner_of(f)) }
}

/// Writes `kept`'s bytes to the platform file `inner`; they are gone either way.
///
/// # Safety
/// `inner` is the open platform file `kept` belongs to.
unsafe fn write_out_kept(kept: &mut Kept, inner: *mut ffi::sqlite3_file) -> c_int {
    if kept.bytes.is_empty() {
        return ffi::SQLITE_OK;
    }
    let n = c_int::try_from(kept.bytes.len());
    let start = kept.last_end - kept.bytes.len() as i64;
    // SAFETY: the platform file is open; the buffer outlives the call.
    let rc = match n {
        Ok(n) => unsafe { raw_write(inner, kept.bytes.as_ptr().cast(), n, start) },
        Err(_) => ffi::SQLITE_IOERR_WRITE,
    };
    kept.bytes.clear();
    rc
}

/// The platform file's own write.
///
/// # Safety
/// `inner` is an open platform file and `data` holds `amt` bytes.
unsafe fn raw_write(inner: *mut ffi::sqlite3_file, data: *const c_void, amt: c_int, off: i64) -> c_int {
    // SAFETY: per the caller; the platform's methods are static.
    unsafe { (*(*inner).pMethods).xWrite.map_or(ffi::SQLITE_IOERR_WRITE, |w| w(inner, data, amt, off)) }
}

/// Keeps a write that continues the previous one, writes any other through.
unsafe extern "C" fn write(f: *mut ffi::sqlite3_file, data: *const c_void, amt: c_int, off: i64) -> c_int {
    let Ok(len) = usize::try_from(amt) else { return ffi::SQLITE_IOERR_WRITE };
    // SAFETY: SQLite passes `amt` readable bytes at `data` and an open WAL file of this VFS.
    let (bytes, kept, inner) =
        unsafe { (std::slice::from_raw_parts(data.cast::<u8>(), len), kept_of(f), inner_of(f)) };
    let commit_header = len == FRAME_HEADER && bytes[4..8] != [0; 4];
    let follows = off == kept.last_end;
    if !follows || kept.bytes.len() + len > MAX_KEPT {
        // SAFETY: `inner` is `kept`'s open platform file.
        let rc = unsafe { write_out_kept(kept, inner) };
        if rc != ffi::SQLITE_OK {
            return rc;
        }
    }
    kept.last_end = off + i64::from(amt);
    let page_of_commit = std::mem::replace(&mut kept.commit_page_next, commit_header);
    if !follows {
        // SAFETY: as above.
        return unsafe { raw_write(inner, data, amt, off) };
    }
    kept.bytes.extend_from_slice(bytes);
    if page_of_commit {
        // SAFETY: as above.
        return unsafe { write_out_kept(kept, inner) };
    }
    ffi::SQLITE_OK
}

/// The platform file's methods of `f`.
///
/// # Safety
/// `f` is an open WAL file of this VFS.
unsafe fn methods(f: *mut ffi::sqlite3_file) -> (&'static ffi::sqlite3_io_methods, *mut ffi::sqlite3_file) {
    // SAFETY: the platform's open set its methods, static for the process.
    unsafe {
        let inner = inner_of(f);
        (&*(*inner).pMethods, inner)
    }
}

/// Runs `call` on the platform file after writing out what is kept.
///
/// # Safety
/// `f` is an open WAL file of this VFS.
unsafe fn after_write_out(
    f: *mut ffi::sqlite3_file,
    call: impl FnOnce(&ffi::sqlite3_io_methods, *mut ffi::sqlite3_file) -> c_int,
) -> c_int {
    // SAFETY: per the caller.
    unsafe {
        let rc = write_out(f);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        let (m, inner) = methods(f);
        call(m, inner)
    }
}

unsafe extern "C" fn close(f: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: SQLite closes an open file once; the box is freed here only.
    unsafe {
        let written = write_out(f);
        let (m, inner) = methods(f);
        let closed = m.xClose.map_or(ffi::SQLITE_OK, |c| c(inner));
        drop(Box::from_raw((*f.cast::<Shim>()).kept));
        (*f.cast::<Shim>()).kept = std::ptr::null_mut();
        if written != ffi::SQLITE_OK {
            written
        } else {
            closed
        }
    }
}

unsafe extern "C" fn read(f: *mut ffi::sqlite3_file, buf: *mut c_void, amt: c_int, off: i64) -> c_int {
    // SAFETY: the arguments are SQLite's, passed on.
    unsafe {
        after_write_out(f, |m, inner| m.xRead.map_or(ffi::SQLITE_IOERR_READ, |x| x(inner, buf, amt, off)))
    }
}

unsafe extern "C" fn truncate(f: *mut ffi::sqlite3_file, size: i64) -> c_int {
    // SAFETY: as for `read`.
    unsafe {
        after_write_out(f, |m, inner| m.xTruncate.map_or(ffi::SQLITE_IOERR_TRUNCATE, |x| x(inner, size)))
    }
}

unsafe extern "C" fn sync(f: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    // SAFETY: as for `read`.
    unsafe { after_write_out(f, |m, inner| m.xSync.map_or(ffi::SQLITE_IOERR_FSYNC, |x| x(inner, flags))) }
}

unsafe extern "C" fn file_size(f: *mut ffi::sqlite3_file, size: *mut i64) -> c_int {
    // SAFETY: as for `read`.
    unsafe { after_write_out(f, |m, inner| m.xFileSize.map_or(ffi::SQLITE_IOERR_FSTAT, |x| x(inner, size))) }
}

unsafe extern "C" fn lock(f: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    // SAFETY: as for `read`.
    unsafe { after_write_out(f, |m, inner| m.xLock.map_or(ffi::SQLITE_OK, |x| x(inner, level))) }
}

unsafe extern "C" fn unlock(f: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    // SAFETY: as for `read`.
    unsafe { after_write_out(f, |m, inner| m.xUnlock.map_or(ffi::SQLITE_OK, |x| x(inner, level))) }
}

unsafe extern "C" fn check_reserved_lock(f: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    // SAFETY: as for `read`.
    unsafe {
        after_write_out(f, |m, inner| {
            m.xCheckReservedLock.map_or_else(
                || {
                    *out = 0;
                    ffi::SQLITE_OK
                },
                |x| x(inner, out),
            )
        })
    }
}

unsafe extern "C" fn file_control(f: *mut ffi::sqlite3_file, op: c_int, arg: *mut c_void) -> c_int {
    // SAFETY: as for `read`.
    unsafe {
        after_write_out(f, |m, inner| m.xFileControl.map_or(ffi::SQLITE_NOTFOUND, |x| x(inner, op, arg)))
    }
}

unsafe extern "C" fn sector_size(f: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: the platform file is open.
    unsafe {
        let (m, inner) = methods(f);
        m.xSectorSize.map_or(4096, |x| x(inner))
    }
}

unsafe extern "C" fn device_characteristics(f: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: the platform file is open.
    unsafe {
        let (m, inner) = methods(f);
        m.xDeviceCharacteristics.map_or(0, |x| x(inner))
    }
}

/// The WAL file's methods. Version 1: SQLite uses shared memory and memory mapping on the
/// database file only, never on the WAL.
static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 1,
    xClose: Some(close),
    xRead: Some(read),
    xWrite: Some(write),
    xTruncate: Some(truncate),
    xSync: Some(sync),
    xFileSize: Some(file_size),
    xLock: Some(lock),
    xUnlock: Some(unlock),
    xCheckReservedLock: Some(check_reserved_lock),
    xFileControl: Some(file_control),
    xSectorSize: Some(sector_size),
    xDeviceCharacteristics: Some(device_characteristics),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use rusqlite::{Connection, OpenFlags};

    /// Write system calls this thread has made.
    fn writes() -> u64 {
        let io = std::fs::read_to_string("/proc/thread-self/io").unwrap();
        io.lines().find_map(|l| l.strip_prefix("syscw: ")).unwrap().trim().parse().unwrap()
    }

    /// Write calls of one commit changing `rows` rows spread over many pages, and the WAL
    /// frames it added, on a file opened with `vfs` (the platform's when `None`).
    fn commit_writes(vfs: Option<&std::ffi::CStr>, rows: i64) -> (u64, i64) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db");
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
        let conn = match vfs {
            Some(v) => Connection::open_with_flags_and_vfs(&path, flags, v).unwrap(),
            None => Connection::open_with_flags(&path, flags).unwrap(),
        };
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 0;
             CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT);
             CREATE INDEX t_v ON t (v);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
             INSERT INTO t SELECT i, printf('%08d', (i * 7919) % 20000) FROM n;",
        )
        .unwrap();
        let wal = path.with_extension("db-wal");
        let frames = || (std::fs::metadata(&wal).unwrap().len() as i64 - 32) / (4096 + 24);
        let before_frames = frames();
        let before = writes();
        conn.execute("UPDATE t SET v = v || 'x' WHERE k % (20000 / ?1) = 0", [rows]).unwrap();
        let after = writes();
        (after - before, frames() - before_frames)
    }

    #[test]
    fn a_commit_is_written_in_as_few_writes_as_its_size_allows() {
        let name = super::name().unwrap();
        for rows in [10, 40] {
            let (ours, frames) = commit_writes(Some(name), rows);
            assert!(frames >= 10, "the commit should span many pages, wrote {frames} frames");
            let least = (frames as usize * (4096 + 24)).div_ceil(super::MAX_KEPT) as u64;
            assert_eq!(ours, least, "{frames} frames took {ours} writes");
            let (platform, frames) = commit_writes(None, rows);
            assert!(
                platform >= 2 * frames as u64,
                "the platform VFS wrote {frames} frames in {platform} writes"
            );
        }
    }
}
