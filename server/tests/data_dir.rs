//! The data directory with the real binary (issue 16, finding 6): a second
//! server on a directory in use refuses to start and names the directory
//! and the holder's pid; a read-only directory is refused at start-up.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

struct Server {
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn command(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_stowage-server"));
    command
        .args(["--blobPort", "0", "--silent", "--location"])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Starts the server and waits for its listening line.
fn start(dir: &Path) -> Server {
    let mut child = command(dir).spawn().expect("start the server binary");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the listening line");
    assert!(line.contains("listening"), "unexpected first line {line:?}");
    Server { child }
}

/// Runs the server and expects it to exit by itself; returns its output.
fn run_to_exit(dir: &Path) -> Output {
    let mut child = command(dir).spawn().expect("start the server binary");
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().expect("try_wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the server started instead of refusing");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

#[test]
fn a_second_server_on_the_same_directory_refuses_to_start() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("data");
    let first = start(&dir);
    let second = run_to_exit(&dir);
    assert!(!second.status.success(), "{:?}", second.status);
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains(&format!("the data directory {}", dir.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "in use by another Stowage server (pid {})",
            first.child.id()
        )),
        "{stderr}"
    );
    // The first one still serves; once it is gone the directory is free.
    drop(first);
    let third = start(&dir);
    drop(third);
}

/// A read-only tmpfs mounted for one test; unmounted when dropped.
struct ReadOnlyMount {
    dir: tempfile::TempDir,
}

impl ReadOnlyMount {
    /// `None` (with the reason) where this process cannot mount: it needs
    /// root, or CAP_SYS_ADMIN in a container. (Permission bits would not
    /// do: root writes to a directory whatever its mode.)
    fn new() -> Result<ReadOnlyMount, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mount = |args: &[&str]| -> Result<(), String> {
            let out = Command::new("mount")
                .args(args)
                .arg(dir.path())
                .output()
                .map_err(|e| format!("running mount: {e}"))?;
            if out.status.success() {
                Ok(())
            } else {
                Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
            }
        };
        mount(&["-t", "tmpfs", "-o", "size=1m,ro", "tmpfs"])?;
        Ok(ReadOnlyMount { dir })
    }
}

impl Drop for ReadOnlyMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn a_read_only_data_directory_is_refused_at_start_up() {
    let mount = match ReadOnlyMount::new() {
        Ok(m) => m,
        Err(reason) => {
            eprintln!("skipped: cannot mount a read-only tmpfs here: {reason}");
            return;
        }
    };
    let out = run_to_exit(mount.dir.path());
    assert!(!out.status.success(), "{:?}", out.status);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "the data directory {} is not writable",
            mount.dir.path().display()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("Read-only file system"), "{stderr}");
}
