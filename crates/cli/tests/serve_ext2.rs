//! A real ext2 on a served track-aligned volume: the volume's bad-block list (the
//! 4 KiB blocks that straddle a track boundary, from its track map) given to
//! `mke2fs -l`, the export seen as a file through `nbdfuse`, mounted with `mount -o
//! loop`, a tree of files written, unmounted, remounted and read back. Also checks
//! that no file block was allocated on a listed block (debugfs `icheck`). Skips,
//! saying why, where nbdfuse, FUSE or loop mounts are unavailable.

mod common;
use common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn try_run(command: &mut Command) -> Result<String, String> {
    let out = command.output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{command:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// nbdfuse and its mount point: unmounted (which ends nbdfuse) and reaped on drop.
struct FuseMount<'a> {
    point: &'a Path,
    nbdfuse: std::process::Child,
}
impl Drop for FuseMount<'_> {
    fn drop(&mut self) {
        let _ = Command::new("fusermount3")
            .arg("-u")
            .arg(self.point)
            .status();
        if !matches!(self.nbdfuse.try_wait(), Ok(Some(_))) {
            std::thread::sleep(Duration::from_millis(200));
            let _ = self.nbdfuse.kill();
        }
        let _ = self.nbdfuse.wait();
    }
}

struct LoopMount<'a>(&'a Path);
impl Drop for LoopMount<'_> {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0).status();
    }
}

fn write_tree(root: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    for d in 0..4 {
        let dir = root.join(format!("dir{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..8 {
            let size = 1000 + (d * 8 + f) * 37_000;
            let data: Vec<u8> = (0..size)
                .map(|i| ((i * 7 + d * 13 + f) % 251) as u8)
                .collect();
            let path = dir.join(format!("file{f}.bin"));
            std::fs::write(&path, &data).unwrap();
            files.push((path.strip_prefix(root).unwrap().to_path_buf(), data));
        }
    }
    files
}

#[test]
fn ext2_with_track_bad_blocks_on_a_served_volume() {
    if !(have("nbdfuse") && have("mke2fs") && have("debugfs") && have("fusermount3")) {
        return;
    }
    if !Path::new("/dev/fuse").exists() {
        eprintln!("SKIP: /dev/fuse is absent; nbdfuse cannot expose the export");
        return;
    }
    let dir = scratch("serve-ext2");
    let volume = create(
        &dir,
        &[
            "--level",
            "single",
            "--members",
            "1",
            "--member-size",
            "48MiB",
            "--disk",
            "atlas10k",
        ],
    );
    let bad_blocks = dir.join("bad-blocks.txt");
    run(spinstack()
        .args(["volume", "badblocks"])
        .arg(&volume)
        .args(["--block-size", "4096", "--out"])
        .arg(&bad_blocks));
    let listed: Vec<u64> = std::fs::read_to_string(&bad_blocks)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert!(
        listed.len() > 50,
        "a 48 MiB piece of the Atlas 10K has many straddling blocks: {}",
        listed.len()
    );

    let server = Server::start(&volume, &dir.join("nbd.sock"), &[]);
    let fuse = dir.join("fuse");
    std::fs::create_dir_all(&fuse).unwrap();
    let nbdfuse = Command::new("nbdfuse")
        .arg(&fuse)
        .arg("--unix")
        .arg(&server.socket)
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let fuse_mount = FuseMount {
        point: &fuse,
        nbdfuse,
    };
    let image = fuse.join("nbd");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !image.exists() {
        if Instant::now() > deadline {
            eprintln!("SKIP: nbdfuse did not expose the export (FUSE not permitted here?)");
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // ext2 keeps each group's inode table in one contiguous run, and the free runs
    // between straddling blocks here are one track (~41 blocks of the Atlas 10K's
    // 334-sector tracks): so a small inode table (512 inodes of 256 bytes: 32 blocks)
    // and no reserved resize blocks, or mke2fs cannot place its tables.
    run(Command::new("mke2fs")
        .args([
            "-q", "-F", "-t", "ext2", "-b", "4096", "-N", "512", "-I", "256",
        ])
        .args(["-O", "^resize_inode", "-l"])
        .arg(&bad_blocks)
        .arg(&image));
    // Every listed block is in the file system's bad-block inode, none in a file.
    let recorded = run(Command::new("dumpe2fs").arg("-b").arg(&image));
    let recorded: Vec<u64> = recorded
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    assert_eq!(recorded, listed, "mke2fs recorded the list as given");

    let mount_point = dir.join("mnt");
    std::fs::create_dir_all(&mount_point).unwrap();
    if let Err(why) = try_run(
        Command::new("mount")
            .args(["-o", "loop"])
            .arg(&image)
            .arg(&mount_point),
    ) {
        eprintln!("SKIP: mount -o loop is not permitted here ({why}); mke2fs part done");
        return;
    }
    let files = {
        let _mounted = LoopMount(&mount_point);
        write_tree(&mount_point)
    };
    run(Command::new("e2fsck").args(["-f", "-n"]).arg(&image));
    try_run(
        Command::new("mount")
            .args(["-o", "loop,ro"])
            .arg(&image)
            .arg(&mount_point),
    )
    .unwrap();
    {
        let _mounted = LoopMount(&mount_point);
        for (relative, data) in &files {
            assert!(
                std::fs::read(mount_point.join(relative)).unwrap() == *data,
                "{} differs",
                relative.display()
            );
        }
    }
    // After writing the tree, no inode but the bad-block inode (1) owns a listed
    // block (icheck prints the owner, or "<block not found>" when no file does), and
    // every listed block is still marked in use, so none can be allocated later.
    let query: Vec<String> = listed.iter().map(u64::to_string).collect();
    let owners = run(Command::new("debugfs")
        .arg("-R")
        .arg(format!("icheck {}", query.join(" ")))
        .arg(&image));
    let mut checked = 0;
    for line in owners.lines().skip(1) {
        let owner = line.split('\t').nth(1).unwrap_or("");
        assert!(
            owner == "1" || owner == "<block not found>",
            "listed block owned by a file: {line}"
        );
        checked += 1;
    }
    assert_eq!(checked, listed.len(), "{owners}");
    let commands = dir.join("testb.cmd");
    std::fs::write(
        &commands,
        query
            .iter()
            .map(|b| format!("testb {b}\n"))
            .collect::<String>(),
    )
    .unwrap();
    let marks = run(Command::new("debugfs").arg("-f").arg(&commands).arg(&image));
    assert_eq!(
        marks.matches("marked in use").count(),
        listed.len(),
        "{marks}"
    );
    drop(fuse_mount);
    server.stop();
    let _ = std::fs::remove_dir_all(&dir);
}
