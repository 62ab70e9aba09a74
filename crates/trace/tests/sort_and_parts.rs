//! Issue 23, the options it added: the external sort's bounds (exact through several
//! merge passes), importing several files or one archive member as one trace, the SPC
//! ASU filter, and the summary of what was sorted and decompressed.

use std::path::{Path, PathBuf};
use storbench_trace::formats::spill::SortLimits;
use storbench_trace::formats::{import, import_files, Format, ImportOptions};
use storbench_trace::{read_all, IoRecord};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/traces")
        .join(name)
}

fn key(r: &IoRecord) -> (u64, Option<u64>, u64, u64, Option<u32>) {
    (
        r.issue_ns,
        r.complete_ns,
        r.offset_bytes,
        r.len_bytes,
        r.device.map(|d| d.0),
    )
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// 120,000 MSR lines of 3 volumes shuffled in blocks of random length: sorted with
/// runs of 4,000 records merged 4 at a time (several passes), the import equals the
/// import of the lines sorted beforehand, and says how many were out of order.
#[test]
#[allow(
    clippy::too_many_lines,
    reason = "one end-to-end scenario on one device or directory; its steps share state and read in order"
)]
fn external_sort_is_exact_through_several_merge_passes() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut lines: Vec<(u64, String)> = Vec::new();
    let mut t = 128_166_372_000_000_000u64;
    for i in 0..120_000u64 {
        // Equal timestamps now and then: their input order must hold.
        t += if next() % 5 == 0 { 0 } else { next() % 1000 };
        let vol = next() % 3;
        lines.push((
            t,
            format!(
                "{t},src{vol},{vol},{},{},4096,{}",
                if next() % 2 == 0 { "Read" } else { "Write" },
                (next() % (1 << 24)) * 4096,
                i % 977
            ),
        ));
    }
    // Shuffle blocks of 1..5000 lines.
    let mut blocks: Vec<Vec<(u64, String)>> = Vec::new();
    let mut rest = &lines[..];
    while !rest.is_empty() {
        let n = ((next() % 5000) as usize + 1).min(rest.len());
        blocks.push(rest[..n].to_vec());
        rest = &rest[n..];
    }
    for i in (1..blocks.len()).rev() {
        blocks.swap(i, (next() % (i as u64 + 1)) as usize);
    }
    let shuffled: Vec<(u64, String)> = blocks.into_iter().flatten().collect();
    let mut max = 0;
    let out_of_order = shuffled
        .iter()
        .filter(|(t, _)| {
            let late = *t < max;
            max = max.max(*t);
            late
        })
        .count() as u64;
    let mut sorted = shuffled.clone();
    sorted.sort_by_key(|(t, _)| *t);
    let text = |v: &[(u64, String)]| {
        v.iter()
            .map(|(_, l)| l.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let a = dir.path().join("shuffled.csv");
    let b = dir.path().join("sorted.csv");
    std::fs::write(&a, text(&shuffled)).unwrap();
    std::fs::write(&b, text(&sorted)).unwrap();
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let opts = ImportOptions {
        sort_limits: SortLimits {
            run_records: 4000,
            fan_in: 4,
        },
        ..Default::default()
    };
    let got = out_dir.join("a.parquet");
    let s = import(&a, &got, &opts).unwrap();
    assert!(s.sorted);
    assert!(s.sort_runs > 30, "runs {}", s.sort_runs);
    assert_eq!(s.out_of_order, out_of_order);
    assert!(s.to_text().contains("out of order"), "{}", s.to_text());
    assert_eq!(
        files_in(&out_dir),
        vec!["a.parquet"],
        "temporary files left"
    );
    let want = dir.path().join("b.parquet");
    let sb = import(&b, &want, &ImportOptions::default()).unwrap();
    assert!(!sb.sorted && sb.out_of_order == 0);
    let (_, ga, _, da) = read_all(&got).unwrap();
    let (_, gb, _, db) = read_all(&want).unwrap();
    assert_eq!(ga.len(), 120_000);
    // Device ids may differ (first seen); compare names.
    let named = |v: &[IoRecord], d: &storbench_trace::Names| -> Vec<_> {
        v.iter()
            .map(|r| (key(r), d.get(r.device.unwrap().0).unwrap().to_owned()))
            .collect()
    };
    assert!(named(&ga, &da) == named(&gb, &db), "sorted import differs");
}

/// A malformed line after the sort started: the error names it, and neither the
/// output nor the sort's temporary files are left behind.
#[test]
fn a_failed_import_while_sorting_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in (0..5000u64).rev() {
        text += &format!(
            "{},h,0,Read,{},512,10\n",
            128_166_372_000_000_000 + i * 10,
            i * 512
        );
    }
    text += "128166372000000000,h,0,Sideways,0,512,10\n";
    let input = dir.path().join("in.csv");
    std::fs::write(&input, text).unwrap();
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let opts = ImportOptions {
        sort_limits: SortLimits {
            run_records: 100,
            fan_in: 2,
        },
        ..Default::default()
    };
    let e = import(&input, &out_dir.join("t.parquet"), &opts).unwrap_err();
    assert!(e.to_string().contains("in.csv:5001"), "{e}");
    assert!(files_in(&out_dir).is_empty(), "{:?}", files_in(&out_dir));
}

/// Several per-volume files given at once make one trace, as their concatenation
/// does; a tar member can be picked by its name.
#[test]
fn several_files_and_one_member() {
    let dir = tempfile::tempdir().unwrap();
    let vols: Vec<PathBuf> = (0..4)
        .map(|k| fixture(&format!("msr_vol_{k}.csv")))
        .collect();
    let all = dir.path().join("all.parquet");
    let s = import_files(&vols, &all, &ImportOptions::default()).unwrap();
    assert_eq!((s.records, s.parts), (320, 4));
    let tgz = dir.path().join("tgz.parquet");
    let st = import(
        &fixture("compressed/msr_volumes.tgz"),
        &tgz,
        &ImportOptions::default(),
    )
    .unwrap();
    assert_eq!((st.records, st.parts, st.members_skipped), (320, 4, 2));
    assert_eq!(st.decompressed, vec!["gzip".to_owned()]);
    let (_, a, _, _) = read_all(&all).unwrap();
    let (_, b, _, _) = read_all(&tgz).unwrap();
    assert_eq!(
        a.iter().map(key).collect::<Vec<_>>(),
        b.iter().map(key).collect::<Vec<_>>()
    );
    // One member: by file name (it is gzip-compressed inside the archive).
    let one = dir.path().join("one.parquet");
    let opts = ImportOptions {
        member: Some("msr_vol_1.csv.gz".into()),
        ..Default::default()
    };
    let s1 = import(&fixture("compressed/msr_volumes.tgz"), &one, &opts).unwrap();
    assert_eq!((s1.records, s1.parts), (80, 1));
    let alone = dir.path().join("alone.parquet");
    import(&fixture("msr_vol_1.csv"), &alone, &ImportOptions::default()).unwrap();
    let (_, x, _, _) = read_all(&one).unwrap();
    let (_, y, _, _) = read_all(&alone).unwrap();
    assert_eq!(x, y);
    let opts = ImportOptions {
        member: Some("nope.csv".into()),
        ..Default::default()
    };
    let e = import(&fixture("compressed/msr_volumes.tgz"), &one, &opts).unwrap_err();
    assert!(e.to_string().contains("no member \"nope.csv\""), "{e}");
}

/// `--asu` keeps one SPC ASU, as `--device-id` and `--volume` do for Alibaba and
/// Tencent.
#[test]
fn spc_asu_filter() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.parquet");
    let text = std::fs::read_to_string(fixture("spc_header.csv")).unwrap();
    let asu1 = text.lines().skip(1).filter(|l| l.starts_with("1,")).count() as u64;
    let opts = ImportOptions {
        format: Some(Format::SPC),
        asu: Some(1),
        ..Default::default()
    };
    let s = import(&fixture("spc_header.csv"), &out, &opts).unwrap();
    assert_eq!(s.records, asu1);
    assert_eq!(s.ignored["lines of other ASUs (--asu)"], 90 - asu1);
    let (_, _, _, devices) = read_all(&out).unwrap();
    assert_eq!(devices.iter().collect::<Vec<_>>(), vec!["1"]);
}
