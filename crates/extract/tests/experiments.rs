//! Proves the verification experiments run on the serpentine Maxtor and write
//! their files, and that reads crossing a track boundary take longer on average
//! than reads within one track (the effect Figure 3 of the validation paper shows).

use spinstack_extract::experiments::{
    boundary_means, boundary_test, write_boundary_test, write_zero_latency_test,
};

#[test]
fn crossing_reads_are_slower_and_files_are_written() {
    let spec = spinstack_disk::catalog::resolve("maxtor10kv-czk").unwrap();
    let points = boundary_test(&spec, 600, 11).unwrap();
    assert_eq!(points.len(), 600);
    let (crossing, within) = boundary_means(&points);
    assert!(
        crossing > within + 0.1,
        "crossing {crossing:.3} ms, within {within:.3} ms"
    );
    let dir = std::env::temp_dir().join(format!("spinstack-extract-exp-{}", std::process::id()));
    write_boundary_test(&spec, 200, 1, &dir.join("boundary-test")).unwrap();
    write_zero_latency_test(&[spec], 200, 1, &dir.join("zero-latency-test")).unwrap();
    for id in ["boundary-test", "zero-latency-test"] {
        for file in ["data.csv", "plot.svg", "summary.md"] {
            let path = dir.join(id).join(file);
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(text.len() > 100, "{} is nearly empty", path.display());
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
