//! Proves that the real-device probe is read-only and says plainly that a plain
//! file (or loop device, virtio disk, NVMe drive) has no track structure: no
//! address translation, and no rotation in its read times.

use spinstack_extract::probe::{CacheSetting, Probe};
use spinstack_extract::run::extract_device;
use spinstack_extract::timing::TimingOptions;
use spinstack_sim::units::{Lbn, Sectors};

fn temp_image(name: &str, bytes: usize) -> std::path::PathBuf {
    let path =
        std::env::temp_dir().join(format!("spinstack-extract-{}-{name}", std::process::id()));
    let contents: Vec<u8> = (0..bytes).map(|i| (i * 31 % 251) as u8).collect();
    std::fs::write(&path, contents).expect("temp file");
    path
}

#[test]
fn plain_file_has_no_track_structure_and_is_not_written() {
    let path = temp_image("plain", 1 << 20);
    let before = std::fs::read(&path).unwrap();
    let (report, map) =
        extract_device(&path, &TimingOptions::default()).expect("no error on a plain file");
    assert!(!report.track_structure_found);
    assert!(!report.translate_address);
    assert!(map.is_none());
    assert!(
        report.message.starts_with("no track structure found"),
        "{}",
        report.message
    );
    assert_eq!(report.capacity_sectors, 2048);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the probe must never write"
    );
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn probe_refuses_writes_of_settings_and_reads_past_the_end() {
    let path = temp_image("probe", 64 * 1024);
    let mut probe = spinstack_extract::device::DeviceProbe::open(&path).unwrap();
    assert!(probe
        .set_caching(CacheSetting::ReadCacheAndPrefetchOff)
        .unwrap_err()
        .is_unsupported());
    assert!(probe.translate_lbn(Lbn(0)).unwrap_err().is_unsupported());
    assert!(probe.timed_read(Lbn(127), Sectors(1)).is_ok());
    assert!(probe.timed_read(Lbn(127), Sectors(2)).is_err());
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn missing_device_is_an_error_naming_it() {
    let error = extract_device(
        std::path::Path::new("/nonexistent/disk"),
        &TimingOptions::default(),
    )
    .expect_err("no such device");
    assert!(error.to_string().contains("/nonexistent/disk"));
}

/// Proves that a device this process may not open (EPERM/EACCES, as /dev/vda in a
/// sandbox) is an error naming the device and the reason, never a silent "no
/// structure". Skips where /dev/vda is absent or readable.
#[test]
fn forbidden_device_is_an_error_naming_it_and_why() {
    let path = std::path::Path::new("/dev/vda");
    match std::fs::File::open(path) {
        Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES)) => {}
        _ => {
            println!("SKIP: /dev/vda absent or readable here");
            return;
        }
    }
    let error = extract_device(path, &TimingOptions::default()).expect_err("forbidden");
    let text = error.to_string();
    assert!(text.contains("/dev/vda"), "{text}");
    assert!(text.contains("not allowed to read"), "{text}");
}
