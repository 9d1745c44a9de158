//! Reading an input file whole (a drive or volume file, a track map, a validation
//! trace): only a regular file no larger than its bound is read, so `/dev/zero`, a
//! FIFO or a mistaken multi-gigabyte path is an error naming the file, never a read
//! that fills memory or blocks forever. Symbolic links are followed (what they point
//! at is checked). The size is checked before reading and again while reading, since
//! a file may grow in between.

use std::io::Read;
use std::path::Path;

/// The bytes of the regular file at `path`, at most `bytes_max` of them; the error
/// says what is wrong in words (the caller names the file).
pub fn read_bounded(path: &Path, bytes_max: u64) -> Result<Vec<u8>, String> {
    let metadata = std::fs::metadata(path).map_err(|error| format!("cannot read: {error}"))?;
    if !metadata.is_file() {
        return Err("cannot read: not a regular file".to_string());
    }
    let too_large = || format!("larger than {bytes_max} bytes: not an input file of this kind");
    if metadata.len() > bytes_max {
        return Err(too_large());
    }
    let file = std::fs::File::open(path).map_err(|error| format!("cannot read: {error}"))?;
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(bytes_max + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| format!("cannot read: {error}"))?;
    if bytes.len() as u64 > bytes_max {
        return Err(too_large());
    }
    Ok(bytes)
}

/// `text` without a UTF-8 byte-order mark at its start. Every text input (drive,
/// volume and parameter files, track maps, traces, seek curves, log dumps) skips
/// one there, since Excel and Windows editors write one; elsewhere it stays a
/// character like any other.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// [`read_bounded`], as UTF-8 text, without a leading byte-order mark
/// ([`strip_bom`]).
pub fn read_bounded_text(path: &Path, bytes_max: u64) -> Result<String, String> {
    let text = String::from_utf8(read_bounded(path, bytes_max)?).map_err(|error| {
        format!(
            "not UTF-8 text (byte {} is not part of a character)",
            error.utf8_error().valid_up_to()
        )
    })?;
    Ok(match strip_bom(&text).len() {
        len if len == text.len() => text,
        len => text[text.len() - len..].to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Guards input finding 6 of the hostile test of 2026-11-28: a volume file, drive
    // file or validation trace named `/dev/zero` grew to 7 GB, and a FIFO blocked
    // forever. Proves devices and FIFOs are refused without reading, a file over the
    // bound is refused, and a file at the bound is read whole.
    #[test]
    fn only_regular_files_within_the_bound_are_read() {
        assert!(read_bounded(Path::new("/dev/zero"), 1024)
            .unwrap_err()
            .contains("not a regular file"));
        let dir = std::env::temp_dir().join(format!("spinstack-input-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(read_bounded(&dir, 1024)
            .unwrap_err()
            .contains("not a regular file"));
        let fifo = dir.join("fifo");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|status| status.success()) {
            assert!(read_bounded(&fifo, 1024)
                .unwrap_err()
                .contains("not a regular file"));
        } else {
            eprintln!("skipping the FIFO case: mkfifo is not available");
        }
        let file = dir.join("data");
        std::fs::write(&file, [7u8; 100]).unwrap();
        assert_eq!(read_bounded(&file, 100).unwrap().len(), 100);
        assert!(read_bounded(&file, 99)
            .unwrap_err()
            .contains("larger than 99 bytes"));
        // Guards inputs finding 25: a byte-order mark at the start is skipped.
        std::fs::write(&file, "\u{feff}level = 1\n").unwrap();
        assert_eq!(read_bounded_text(&file, 100).unwrap(), "level = 1\n");
        assert_eq!(strip_bom("a\u{feff}"), "a\u{feff}");
        std::fs::write(&file, [0xffu8, 0xfe]).unwrap();
        assert!(read_bounded_text(&file, 100)
            .unwrap_err()
            .contains("not UTF-8"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
