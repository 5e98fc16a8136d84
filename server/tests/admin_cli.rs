//! The admin subcommands of the real binary beside a real server process
//! (docs/operations.md#admin-commands): `check` refuses the directory the
//! server holds and passes it once the server stopped; `backup` copies it
//! while the server runs.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_stowage-server"));
    cmd.env("NO_COLOR", "1").env_remove("AZURITE_ACCOUNTS");
    cmd
}

/// A server on `dir`, once it listens.
fn serve(dir: &Path) -> Child {
    let mut child = bin()
        .args(["--blobPort", "0", "--location"])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the server");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let listening = loop {
        line.clear();
        if stdout.read_line(&mut line).unwrap() == 0 {
            break false;
        }
        if line.contains("successfully listening") {
            break true;
        }
    };
    if listening {
        child
    } else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the server exited before listening");
    }
}

fn admin(args: &[&str], dir: &Path, extra: Option<&Path>) -> Output {
    let mut cmd = bin();
    cmd.args(args).arg("--location").arg(dir);
    if let Some(extra) = extra {
        cmd.arg(extra);
    }
    cmd.output().expect("run the admin command")
}

#[test]
fn check_refuses_a_served_directory_and_backup_copies_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let mut server = serve(&dir);

    let held = admin(&["check"], &dir, None);
    assert_eq!(held.status.code(), Some(2), "{held:?}");
    let err = String::from_utf8_lossy(&held.stderr);
    assert!(err.contains("in use by another Stowage server"), "{err}");

    let backup = tmp.path().join("backup");
    let copied = admin(&["backup"], &dir, Some(&backup));
    assert_eq!(copied.status.code(), Some(0), "{copied:?}");
    assert!(backup.join("metadata.sqlite").is_file());

    server.kill().unwrap();
    server.wait().unwrap();
    let free = admin(&["check"], &dir, None);
    assert_eq!(free.status.code(), Some(0), "{free:?}");
    let out = String::from_utf8_lossy(&free.stdout);
    assert!(out.contains("0 missing or corrupt, 0 orphans"), "{out}");
    let of_backup = admin(&["check"], &backup, None);
    assert_eq!(of_backup.status.code(), Some(0), "{of_backup:?}");
}
