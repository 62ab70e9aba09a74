//! No importer panics on any input: arbitrary bytes, and fixture lines with random
//! mutations (the cargo-fuzz targets in fuzz/ do the same, longer, with coverage).
//! Errors are fine; when an import succeeds its output must read back in issue order.

use proptest::prelude::*;
use std::io::Cursor;
use std::path::Path;
use storbench_trace::formats::{detect_lines, import_reader, Format, ImportOptions};

fn fixture_lines() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/traces");
    let mut lines = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        // Text fixtures only (not the compressed ones' folder, not the generator).
        let p = e.unwrap().path();
        if !p.is_file() || p.extension().is_some_and(|x| x == "py") {
            continue;
        }
        let text = std::fs::read_to_string(p).unwrap();
        lines.extend(text.lines().map(str::to_owned));
    }
    lines.push("issue_ns,complete_ns,offset_bytes,len_bytes,op,stream,device".into());
    lines.push("0,10,4096,4096,read,\"a,b\",x".into());
    lines
}

fn check(format: Format, data: &[u8]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.parquet");
    let lines: Vec<String> = String::from_utf8_lossy(data)
        .lines()
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect();
    let _ = detect_lines(&lines);
    for opts in [
        ImportOptions::default(),
        ImportOptions {
            skip_bad_lines: true,
            device: Some((7, 0)),
            device_id: Some(419),
            volume: Some(1063),
            ..Default::default()
        },
    ] {
        let r = import_reader(
            Path::new("fuzz"),
            Box::new(Cursor::new(data.to_vec())),
            &out,
            &opts,
            format,
        );
        if let Ok(s) = r {
            let (_, recs, _, _) = storbench_trace::read_all(&out).unwrap();
            prop_assert_eq!(recs.len() as u64, s.records);
            prop_assert!(recs.windows(2).all(|w| w[0].issue_ns <= w[1].issue_ns));
            let c = storbench_trace::characterize_file(&out).unwrap();
            prop_assert_eq!(c.ios_total, s.records);
        } else if let Err(e) = r {
            // Errors must name the input.
            prop_assert!(e.to_string().contains("fuzz"), "{}", e);
        }
    }
    Ok(())
}

/// The `f`th format of the registry (wrapping around).
fn nth(f: usize) -> Format {
    let all: Vec<Format> = Format::all().collect();
    all[f % all.len()]
}

/// A mutated document: fixture lines, some tokens replaced by nasty values, lines cut.
fn mutated() -> impl Strategy<Value = (usize, Vec<u8>)> {
    let lines = fixture_lines();
    let n = lines.len();
    (
        0usize..Format::all().count(),
        proptest::collection::vec(
            (
                0..n,
                0usize..12,
                prop_oneof![
                    Just(String::new()),
                    Just("18446744073709551615".to_owned()),
                    Just("99999999999999999999999".to_owned()),
                    Just("-1".to_owned()),
                    Just("(".to_owned()),
                    Just("[".to_owned()),
                    Just("+".to_owned()),
                    Just(",".to_owned()),
                    Just("\"".to_owned()),
                    Just("0.".to_owned()),
                    Just("FN".to_owned()),
                    Just("0".to_owned()),
                    "[ -~]{0,12}",
                ],
                proptest::option::of(0usize..200),
            ),
            0..24,
        ),
    )
        .prop_map(move |(f, picks)| {
            let mut doc = String::new();
            for (i, (li, tok, rep, cut)) in picks.into_iter().enumerate() {
                let line = &lines[li];
                let mut toks: Vec<String> = line.split(' ').map(str::to_owned).collect();
                if i % 2 == 0 && !toks.is_empty() {
                    let k = tok % toks.len();
                    toks[k] = rep;
                }
                let mut l = toks.join(" ");
                if let Some(c) = cut {
                    let c = c.min(l.len());
                    if l.is_char_boundary(c) {
                        l.truncate(c);
                    }
                }
                doc.push_str(&l);
                doc.push('\n');
            }
            (f, doc.into_bytes())
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(f in 0usize..64, data in proptest::collection::vec(any::<u8>(), 0..512)) {
        check(nth(f), &data)?;
    }

    #[test]
    fn mutated_fixture_lines_never_panic((f, data) in mutated()) {
        check(nth(f), &data)?;
        // With the right header too, so the fio/csv importers get past line 1.
        let header: &[u8] = match nth(f).name() {
            "fio-iolog-v2" => b"fio version 2 iolog\n",
            "fio-iolog-v3" => b"fio version 3 iolog\n",
            "csv" => b"issue_ns,complete_ns,offset_bytes,len_bytes,op,stream,device\n",
            _ => b"",
        };
        let mut d = header.to_vec();
        d.extend_from_slice(&data);
        check(nth(f), &d)?;
    }
}
