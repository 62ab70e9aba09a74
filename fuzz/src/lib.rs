//! Shared body of the import fuzz targets: import arbitrary bytes, and when that
//! succeeds, read the Parquet back and characterize it. Any panic is a bug.

use std::io::Cursor;
use std::path::{Path, PathBuf};
use storbench_trace::formats::{detect_lines, import_reader, Format, ImportOptions};

fn out_path() -> PathBuf {
    let dir = if Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
    dir.join(format!("storbench-fuzz-{}.parquet", std::process::id()))
}

pub fn run(format: Format, data: &[u8], opts: &ImportOptions) {
    // Detection must not panic either.
    let lines: Vec<String> = String::from_utf8_lossy(data)
        .lines()
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .take(64)
        .collect();
    let _ = detect_lines(&lines);
    let out = out_path();
    let r = import_reader(Path::new("fuzz-input"), Box::new(Cursor::new(data.to_vec())), &out, opts, format);
    if let Ok(summary) = r {
        let (_, recs, _, _) = storbench_trace::read_all(&out).expect("our own output must read back");
        assert_eq!(recs.len() as u64, summary.records);
        assert!(recs.windows(2).all(|w| w[0].issue_ns <= w[1].issue_ns), "issue order");
        let c = storbench_trace::characterize_file(&out).expect("characterize our own output");
        assert_eq!(c.ios_total, summary.records);
    }
    let _ = std::fs::remove_file(&out);
}
