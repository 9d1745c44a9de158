#![allow(dead_code)] // each test binary uses a subset of the helpers
//! Shared helpers of the CLI tests that run `spinstack serve` with real clients.

pub mod nbd_client;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn spinstack() -> Command {
    Command::new(env!("CARGO_BIN_EXE_spinstack"))
}

/// True when `tool` is installed; otherwise says that the test skips.
pub fn have(tool: &str) -> bool {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .output()
        .map(|out| out.status.success())
        .unwrap_or(false);
    if !found {
        assert!(
            std::env::var_os("SPINSTACK_REQUIRE_TOOLS").is_none(),
            "{tool} is required here (SPINSTACK_REQUIRE_TOOLS is set) but not installed"
        );
        eprintln!(
            "SKIP: {tool} is not installed (.ci/run installs libnbd-bin fio qemu-utils fuse3)"
        );
    }
    found
}

/// A fresh directory under the system temp dir (tmpfs on most machines).
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("spinstack-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs a command; panics with its output when it fails. Returns stdout.
pub fn run(command: &mut Command) -> String {
    let out = command.output().expect("command starts");
    assert!(
        out.status.success(),
        "{command:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// Creates a volume in `dir/vol`.
pub fn create(dir: &Path, args: &[&str]) -> PathBuf {
    let volume = dir.join("vol");
    run(spinstack()
        .arg("volume")
        .arg("create")
        .arg(&volume)
        .args(args));
    volume
}

/// A RAID-5 of `members` members of `member_size` (a size as `volume create`
/// takes it) with 64 KiB chunks, created in `dir`.
pub fn raid5_volume(dir: &Path, members: &str, member_size: &str) -> PathBuf {
    create(
        dir,
        &[
            "--level",
            "raid5",
            "--members",
            members,
            "--member-size",
            member_size,
            "--chunk",
            "64KiB",
        ],
    )
}

/// A `spinstack serve` child process, killed when dropped.
pub struct Server {
    pub child: Child,
    pub socket: PathBuf,
}

impl Server {
    pub fn start(volume: &Path, socket: &Path, extra: &[&str]) -> Server {
        let _ = std::fs::remove_file(socket);
        let child = spinstack()
            .arg("serve")
            .arg(volume)
            .arg("--socket")
            .arg(socket)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("serve starts");
        let server = Server {
            child,
            socket: socket.to_path_buf(),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while nbd_client::NbdClient::connect(socket).is_err() {
            assert!(
                Instant::now() < deadline,
                "server did not come up on {}",
                socket.display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    pub fn uri(&self) -> String {
        format!("nbd+unix:///?socket={}", self.socket.display())
    }

    /// SIGKILL: no flush, no clean mark.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM and wait: the clean shutdown.
    pub fn stop(mut self) {
        // SAFETY: plain kill(2) on our own child's pid.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let status = self.child.wait().unwrap();
        assert!(status.success(), "serve exited with {status}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `spinstack volume ARGS... --json` parsed.
pub fn volume_json(args: &[&str]) -> serde_json::Value {
    json(&run(spinstack().arg("volume").args(args).arg("--json")))
}

/// fio with the nbd engine against `uri`.
pub fn fio(uri: &str, args: &[&str]) -> Command {
    let mut command = Command::new("fio");
    command
        .arg("--name=job")
        .arg("--ioengine=nbd")
        .arg(format!("--uri={uri}"))
        // fio would leave a verify-state file in the working directory (the crate).
        .arg("--verify_state_save=0")
        .args(args);
    command
}
