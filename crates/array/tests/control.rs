//! The control protocol: no server (no socket, or a stale one) is `Ok(None)`; a
//! server's value and error come back as such; request lines round-trip.

use spinstack_array::control::{
    self, parse_request, response_line, ControlRequest, ControlResponse,
};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("spinstack-control-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// Proves an absent socket and a stale one (its listener gone) both mean "no server".
#[test]
fn no_server_is_none() {
    let dir = temp_dir("none");
    assert!(control::send(&dir, &ControlRequest::Status)
        .unwrap()
        .is_none());
    drop(UnixListener::bind(control::socket_path(&dir)).unwrap());
    assert!(
        control::socket_path(&dir).exists(),
        "a stale socket file is left"
    );
    assert!(control::send(&dir, &ControlRequest::Status)
        .unwrap()
        .is_none());
}

// Proves a request reaches a server as one parseable line and its answers (a value,
// then an error) come back to the client.
#[test]
fn requests_and_answers_round_trip() {
    let dir = temp_dir("serve");
    let listener = UnixListener::bind(control::socket_path(&dir)).unwrap();
    let server = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for answer in [
            ControlResponse::Ok(serde_json::json!({"mismatches": 0})),
            ControlResponse::Error("member 9 does not exist".into()),
        ] {
            let (stream, _) = listener.accept().unwrap();
            let mut line = String::new();
            BufReader::new(&stream).read_line(&mut line).unwrap();
            seen.push(parse_request(&line).unwrap());
            (&stream)
                .write_all(response_line(&answer).as_bytes())
                .unwrap();
        }
        seen
    });
    let value = control::send(&dir, &ControlRequest::Scrub { repair: true }).unwrap();
    assert_eq!(value, Some(serde_json::json!({"mismatches": 0})));
    let error = control::send(&dir, &ControlRequest::Fail { member: 9 })
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("control.sock") && error.contains("member 9 does not exist"),
        "{error}"
    );
    assert_eq!(
        server.join().unwrap(),
        vec![
            ControlRequest::Scrub { repair: true },
            ControlRequest::Fail { member: 9 }
        ]
    );
    assert!(parse_request("{\"Explode\":{}}")
        .unwrap_err()
        .contains("bad request"));
}
