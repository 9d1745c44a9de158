//! The Unix socket file: `bind_unix` replaces only a stale socket and refuses
//! anything else at the path; a stopped server removes the socket file it made.

use spinstack_nbd::server::bind_unix;
use spinstack_nbd::{start, Address, Backend, Command, Reply, ServerConfig};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::sync::Arc;

/// An empty export; these tests never send a request.
struct Nothing;
impl Backend for Nothing {
    fn size_bytes(&self) -> u64 {
        4096
    }
    fn rotational(&self) -> bool {
        false
    }
    fn submit(&self, _: Command, reply: Reply) {
        reply.ok()
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("spinstack-nbd-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// Guards finding V2 (volumes-serve finding 2, 2026-11-28): `serve --socket PATH`
// deleted whatever was at PATH, even a member file of the served array. Proves a
// regular file, a directory and a symbolic link at the path are refused with an
// error that names the path and says it is not a socket, and are left as they were.
#[test]
fn what_is_not_a_socket_is_refused_and_kept() {
    let dir = scratch("notsocket");
    let file = dir.join("member-0.img");
    std::fs::write(&file, b"precious").unwrap();
    let directory = dir.join("a-dir");
    std::fs::create_dir(&directory).unwrap();
    let link = dir.join("link");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    for path in [&file, &directory, &link] {
        let error = bind_unix(path).expect_err("must refuse");
        assert_eq!(error.kind(), std::io::ErrorKind::AlreadyExists, "{error}");
        let text = error.to_string();
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains("exists and is not a socket"), "{text}");
        let error = start(
            &Address::Unix(path.clone()),
            Arc::new(Nothing),
            ServerConfig::default(),
        )
        .err()
        .expect("the server must refuse too");
        assert!(error.to_string().contains("not a socket"), "{error}");
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"precious");
    assert!(directory.is_dir());
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
}

/// A socket file nobody listens on (a killed server's) is replaced; one with a
/// listener is refused as in use.
#[test]
fn only_a_stale_socket_is_replaced() {
    let dir = scratch("stale");
    let path = dir.join("s.sock");
    drop(UnixListener::bind(&path).unwrap()); // leaves the file, with no listener
    let listener = bind_unix(&path).expect("a stale socket is replaced");
    let error = bind_unix(&path).expect_err("a live socket is in use");
    assert_eq!(error.kind(), std::io::ErrorKind::AddrInUse, "{error}");
    drop(listener);
}

// Guards finding V7a (volumes-serve finding 7a, 2026-11-28): the listening socket
// file stayed after a clean stop. Proves `stop` and dropping the handle both remove
// it.
#[test]
fn a_stopped_server_removes_its_socket_file() {
    let dir = scratch("removed");
    let path = dir.join("s.sock");
    let server = start(
        &Address::Unix(path.clone()),
        Arc::new(Nothing),
        ServerConfig::default(),
    )
    .unwrap();
    assert!(path.exists());
    server.stop();
    assert!(!path.exists(), "stop must remove the socket file");
    let server = start(
        &Address::Unix(path.clone()),
        Arc::new(Nothing),
        ServerConfig::default(),
    )
    .unwrap();
    drop(server);
    assert!(!path.exists(), "drop must remove the socket file");
}
