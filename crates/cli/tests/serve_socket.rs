//! `serve --socket PATH` and the file at PATH: what exists there and is not a socket
//! is refused and kept; a clean stop removes the socket file the server made.

mod common;
use common::*;

fn small_raid5(dir: &std::path::Path) -> std::path::PathBuf {
    raid5_volume(dir, "3", "4MiB")
}

// Guards finding V2 (volumes-serve finding 2, 2026-11-28): `serve --socket` on a
// member file of the served array replaced the member with a socket, so every write
// went to an unlinked inode and the array no longer opened. Proves serve now exits
// with an error naming the path, and the member and the array are unchanged.
#[test]
fn serve_refuses_a_socket_path_that_is_a_member_file() {
    let dir = scratch("serve-socket-member");
    let volume = small_raid5(&dir);
    let member = volume.join("member-0.img");
    let before = std::fs::read(&member).unwrap();
    let mut child = spinstack()
        .arg("serve")
        .arg(&volume)
        .arg("--socket")
        .arg(&member)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A server that took the path would serve until killed: bound the wait.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("serve started on a member file instead of refusing it");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "serve must refuse: {stderr}");
    assert!(
        stderr.contains(&format!("{} exists and is not a socket", member.display())),
        "{stderr}"
    );
    // Opening the array rewrites the superblock slots (the first 8 KiB, a new
    // generation); the data after them must be untouched.
    assert!(std::fs::metadata(&member).unwrap().is_file());
    let after = std::fs::read(&member).unwrap();
    assert!(after[8192..] == before[8192..], "member data changed");
    let status = volume_json(&["status", volume.to_str().unwrap()]);
    assert_eq!(status["state"], "healthy", "{status}");
    // A serve refused at its socket had already opened the array and exited without
    // closing it, so the next open resynced it (noticed after V2's fix, 2026-11-28):
    // it is now closed cleanly.
    assert_eq!(status["clean"], true, "{status}");
}

// Guards finding V7a (volumes-serve finding 7a, 2026-11-28): the NBD socket file
// stayed after a clean stop. Proves SIGTERM leaves no socket file behind.
#[test]
fn a_clean_stop_removes_the_socket_file() {
    let dir = scratch("serve-socket-removed");
    let volume = small_raid5(&dir);
    let socket = dir.join("nbd.sock");
    let server = Server::start(&volume, &socket, &[]);
    assert!(socket.exists());
    server.stop();
    assert!(!socket.exists(), "socket file left after a clean stop");
}
