//! Writing files as command-line tools do: through special files, along symbolic links, never
//! leaving half a file or a temporary one behind.

use grail_graph::io::{write_atomically, write_text_file};

fn names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    names
}

#[cfg(unix)]
#[test]
fn a_fifo_is_written_through_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid, NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    write_atomically(&fifo, |out| out.write_all(b"through the pipe\n")).unwrap();
    assert_eq!(reader.join().unwrap(), "through the pipe\n");
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "still a FIFO");
    assert_eq!(names(dir.path()), ["pipe"]);
}

#[cfg(unix)]
#[test]
fn a_symlink_is_followed_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("data").join("result.txt");
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::write(&target, "old\n").unwrap();
    let link = dir.path().join("link.txt");
    std::os::unix::fs::symlink("data/result.txt", &link).unwrap();
    write_atomically(&link, |out| out.write_all(b"new\n")).unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "new\n");
    // A link to a file that does not exist yet makes it.
    std::os::unix::fs::symlink("data/fresh.txt", dir.path().join("dangling")).unwrap();
    write_atomically(&dir.path().join("dangling"), |out| out.write_all(b"made\n")).unwrap();
    assert_eq!(std::fs::read_to_string(dir.path().join("data/fresh.txt")).unwrap(), "made\n");
}

#[test]
fn a_failed_write_leaves_the_old_file_and_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.txt");
    std::fs::write(&path, "old\n").unwrap();
    let error = write_atomically(&path, |out| {
        out.write_all(b"half")?;
        Err(std::io::Error::other("the disk filled up"))
    })
    .unwrap_err();
    assert!(error.to_string().contains("out.txt") && error.to_string().contains("disk filled up"), "{error}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "old\n");
    assert_eq!(names(dir.path()), ["out.txt"]);
}

#[test]
fn gz_result_files_are_compressed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("levels.txt.gz");
    write_text_file(&path, |out| out.write_all(b"0\n1\n")).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..2], &[0x1f, 0x8b]);
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text).unwrap();
    assert_eq!(text, "0\n1\n");
}
