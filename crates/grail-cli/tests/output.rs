//! Output that behaves like other Unix tools: `-o -`, compressed results, and an interrupted
//! write that leaves nothing behind.

mod common;

use std::process::Command;

use common::grail;

#[test]
fn dash_is_standard_output() {
    let out = grail(&["gen", "grid", "--rows", "2", "--cols", "2", "--format", "el", "-o", "-"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 8);
    let dir = tempfile::tempdir().unwrap();
    let el = dir.path().join("g.el");
    std::fs::write(&el, "0 1\n1 2\n").unwrap();
    let levels = grail(&["run", "bfs", "-g", el.to_str().unwrap(), "-o", "-"]);
    assert!(levels.status.success());
    assert_eq!(String::from_utf8(levels.stdout).unwrap(), "0\n1\n2\n");
    let both = grail(&["run", "bfs", "-g", el.to_str().unwrap(), "-o", "-", "--json"]);
    assert_eq!(both.status.code(), Some(2));
    let gz = dir.path().join("levels.txt.gz");
    assert!(grail(&["run", "bfs", "-g", el.to_str().unwrap(), "-o", gz.to_str().unwrap()]).status.success());
    assert_eq!(&std::fs::read(&gz).unwrap()[..2], &[0x1f, 0x8b]);
}

#[cfg(unix)]
#[test]
fn an_interrupted_write_leaves_no_temporary_and_the_old_file_intact() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("big.el");
    std::fs::write(&out, "old contents\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(["-q", "gen", "rmat", "--scale", "22", "-o", out.to_str().unwrap()])
        .spawn()
        .unwrap();
    // Wait until the temporary file appears (the graph is generated first), then interrupt.
    let started = std::time::Instant::now();
    let temporary =
        || std::fs::read_dir(dir.path()).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".tmp"));
    while !temporary() && started.elapsed().as_secs() < 120 {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(temporary(), "the write never started within two minutes");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(names, ["big.el"], "a temporary file was left behind");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old contents\n");
}
