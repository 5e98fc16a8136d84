//! Start-up of the real binary with the emulator's command line: flags
//! Stowage does not act on start it with one warning line each, and an
//! `AZURITE_ACCOUNTS` that cannot be read stops it with a message naming the
//! bad entry; `--oauth` without a certificate stops it too.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

/// Starts the binary with `args`, waits for the listening line, stops it and
/// returns what it wrote to stderr.
fn stderr_of_a_started_server(args: &[&str]) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_stowage-server"))
        .args(["--inMemoryPersistence", "--blobPort", "0"])
        .args(args)
        .env_remove("AZURITE_ACCOUNTS")
        .env_remove("AZURITE_DB")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the server");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        let n = stdout.read_line(&mut line).unwrap();
        assert!(n > 0, "the server exited before listening");
        if line.contains("successfully listening") {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    err
}

#[test]
fn emulator_flags_stowage_ignores_start_it_with_one_warning_each() {
    let err = stderr_of_a_started_server(&[
        "--queuePort",
        "10001",
        "--disableTelemetry",
        "--tableHost=0.0.0.0",
        "--loose",
    ]);
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("WARN")).collect();
    assert_eq!(warnings.len(), 3, "{err}");
    for flag in ["--queuePort", "--disableTelemetry", "--tableHost"] {
        assert_eq!(
            warnings.iter().filter(|l| l.contains(flag)).count(),
            1,
            "{flag}: {err}"
        );
    }
}

#[test]
fn an_unreadable_azurite_accounts_stops_the_server_naming_the_entry() {
    let out = Command::new(env!("CARGO_BIN_EXE_stowage-server"))
        .args(["--inMemoryPersistence", "--blobPort", "0"])
        .env("AZURITE_ACCOUNTS", "acct1:a2V5MQ==;broken-entry")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("run the server");
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("listening"), "{stdout}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("AZURITE_ACCOUNTS"), "{err}");
    assert!(err.contains("\"broken-entry\""), "{err}");
}

#[test]
fn oauth_without_a_certificate_stops_the_server() {
    let out = Command::new(env!("CARGO_BIN_EXE_stowage-server"))
        .args([
            "--inMemoryPersistence",
            "--blobPort",
            "0",
            "--oauth",
            "basic",
        ])
        .env_remove("AZURITE_ACCOUNTS")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("run the server");
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("listening"), "{stdout}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--oauth needs HTTPS"), "{err}");
}
