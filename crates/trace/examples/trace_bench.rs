//! Helper for bench/trace_*.sh: generates traces and times the library paths.
//!
//! ```text
//! trace_bench gen OUT.parquet N [fifo]     synthetic trace with completions, N I/Os
//!                                          (fifo: completed first in, first out)
//! trace_bench gen-text FORMAT OUT N        text trace of N I/Os (msr, blkparse, ftrace, fio-iolog-v2/v3,
//!                                          alibaba, tencent, spc)
//! trace_bench characterize TRACE           characterize, print I/Os per second on stderr
//! trace_bench characterize-mem TRACE [REPS] decode the whole trace into memory once, then
//!                                          characterize it REPS times (default 7); prints the
//!                                          decode and the least characterize CPU ns per I/O:
//!                                          the loops alone, without Parquet's noise
//! trace_bench decode TRACE [REPS]          read the trace as characterize does (no
//!                                          stream, batches of 8192) REPS times (default
//!                                          7); prints the least and the median CPU ns per I/O
//! trace_bench import IN OUT [FORMAT]       import, print lines per second on stderr
//! ```

use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;
use storbench_testkit::thread_cpu_ns;
use storbench_trace::formats::{import, Format, ImportOptions};
use storbench_trace::{characterize_file, IoRecord, Op, TraceMeta, TraceWriter};

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

const SIZES: [u64; 8] = [4096, 4096, 4096, 8192, 16384, 32768, 65536, 12288];

/// The synthetic workload: 60% reads, 40% sequential, 1-8 outstanding I/Os, 50-500 µs service.
fn synth(n: u64, f: impl FnMut(&IoRecord)) {
    synth_with(n, false, f)
}

/// [`synth`]; with `fifo`, a device that completes about in issue order (one server,
/// 5-25 µs per I/O, 75% utilized, so QD ~3; up to 8 µs of jitter on each completion):
/// completions arrive nearly sorted, as devices mostly give them.
fn synth_with(n: u64, fifo: bool, mut f: impl FnMut(&IoRecord)) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut server_free = 0u64;
    let mut t = 0u64;
    let mut next_off = [0u64; 2];
    for _ in 0..n {
        let r = rng.next();
        let op = if r % 100 < 60 { Op::Read } else { Op::Write };
        let len = SIZES[(r >> 8) as usize % SIZES.len()];
        let seq = (r >> 16) % 100 < 40;
        let d = op.index();
        let off = if seq {
            next_off[d]
        } else {
            ((r >> 20) % (1 << 26)) * 4096
        };
        next_off[d] = off + len;
        t += (r >> 40) % 40_000;
        let mut rec = IoRecord::new(op, off, len, t);
        rec.complete_ns = Some(if fifo {
            server_free = server_free.max(t) + 5_000 + (r >> 33) % 20_000;
            server_free + (r >> 50) % 8_000
        } else {
            t + 50_000 + (r >> 33) % 450_000
        });
        f(&rec);
    }
}

#[allow(
    clippy::too_many_lines,
    reason = "a benchmark driver: a table of subcommands"
)]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: trace_bench gen|gen-text|characterize|import ...";
    match args.get(1).map(String::as_str) {
        Some("gen") => {
            let out = Path::new(&args[2]);
            let n: u64 = args[3].parse()?;
            let mut w = TraceWriter::create(
                out,
                &TraceMeta {
                    source_format: Some("synth:bench".into()),
                    ..Default::default()
                },
            )?;
            let dev = w.intern_device("bench");
            let fifo = match args.get(4).map(String::as_str) {
                None => false,
                Some("fifo") => true,
                Some(other) => return Err(format!("unknown completion model {other}").into()),
            };
            let mut err = None;
            synth_with(n, fifo, |r| {
                let mut r = *r;
                r.device = Some(dev);
                if let Err(e) = w.write(&r) {
                    err.get_or_insert(e);
                }
            });
            if let Some(e) = err {
                return Err(e.into());
            }
            let rows = w.finish()?;
            eprintln!("wrote {rows} rows to {}", out.display());
        }
        Some("gen-text") => {
            let fmt = args[2].as_str();
            let out = Path::new(&args[3]);
            let n: u64 = args[4].parse()?;
            let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(out)?);
            if fmt == "fio-iolog-v3" {
                writeln!(w, "fio version 3 iolog\n0 /dev/sdb add\n0 /dev/sdb open")?;
            }
            if fmt == "fio-iolog-v2" {
                writeln!(w, "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open")?;
            }
            let mut res = Ok(());
            // fio v2 has no timestamps: a `wait` line carries the gap since the last I/O.
            let mut prev_issue_us = 0;
            synth(n, |r| {
                let rw = if r.op == Op::Read { "R" } else { "W" };
                let c = r.complete_ns.unwrap();
                let line = match fmt {
                    "fio-iolog-v2" => {
                        let gap_us = r.issue_ns / 1000 - prev_issue_us;
                        prev_issue_us = r.issue_ns / 1000;
                        let wait = if gap_us > 0 {
                            writeln!(w, "/dev/sdb wait {gap_us}")
                        } else {
                            Ok(())
                        };
                        wait.and_then(|()| {
                            writeln!(w, "/dev/sdb {} {} {}", r.op, r.offset_bytes, r.len_bytes)
                        })
                    }
                    "alibaba" => writeln!(
                        w,
                        "3,{rw},{},{},{}",
                        r.offset_bytes,
                        r.len_bytes,
                        1_577_808_000_000_000 + r.issue_ns / 1000
                    ),
                    "tencent" => writeln!(
                        w,
                        "{},{},{},{},1063",
                        1_538_323_200 + r.issue_ns / 1_000_000_000,
                        r.offset_bytes / 512,
                        r.len_bytes / 512,
                        u8::from(r.op != Op::Read)
                    ),
                    "spc" => writeln!(
                        w,
                        "0,{},{},{},{}.{:06}",
                        r.offset_bytes / 512,
                        r.len_bytes,
                        if r.op == Op::Read { "r" } else { "w" },
                        r.issue_ns / 1_000_000_000,
                        (r.issue_ns % 1_000_000_000) / 1000
                    ),
                    "msr" => writeln!(
                        w,
                        "{},hm,1,{},{},{},{}",
                        128166372003061629 + r.issue_ns / 100,
                        if r.op == Op::Read { "Read" } else { "Write" },
                        r.offset_bytes,
                        r.len_bytes,
                        (c - r.issue_ns) / 100
                    ),
                    "fio-iolog-v3" => writeln!(
                        w,
                        "{} /dev/sdb {} {} {}",
                        r.issue_ns / 1000,
                        r.op,
                        r.offset_bytes,
                        r.len_bytes
                    ),
                    // Issue and completion lines; completions emitted right after (a
                    // real capture interleaves them, the parse work is the same).
                    "blkparse" => writeln!(
                        w,
                        "  8,16   1 {:>8} {:>5}.{:09} 4242  D  {rw}S {} + {} [fio]\n  8,16   0 {:>8} {:>5}.{:09}     0  C  {rw}S {} + {} [0]",
                        1, r.issue_ns / 1_000_000_000, r.issue_ns % 1_000_000_000, r.offset_bytes / 512, r.len_bytes / 512,
                        2, c / 1_000_000_000, c % 1_000_000_000, r.offset_bytes / 512, r.len_bytes / 512
                    ),
                    "ftrace" => writeln!(
                        w,
                        "             fio-4242    [001] .....  {}.{:06}: block_rq_issue: 8,16 {rw}S {} () {} + {} be,0,4 [fio]\n          <idle>-0       [000] d.h1.  {}.{:06}: block_rq_complete: 8,16 {rw}S () {} + {} be,0,4 [0]",
                        100 + r.issue_ns / 1_000_000_000, (r.issue_ns % 1_000_000_000) / 1000, r.len_bytes, r.offset_bytes / 512, r.len_bytes / 512,
                        100 + c / 1_000_000_000, (c % 1_000_000_000) / 1000, r.offset_bytes / 512, r.len_bytes / 512
                    ),
                    _ => panic!("unknown text format {fmt}"),
                };
                if let Err(e) = line {
                    res = Err(e);
                }
            });
            res?;
            w.flush()?;
        }
        Some("characterize") => {
            let t0 = Instant::now();
            let c = characterize_file(Path::new(&args[2]))?;
            let s = t0.elapsed().as_secs_f64();
            println!("{}", serde_json::to_string(&c)?);
            eprintln!(
                "characterize: {} I/Os in {:.3} s = {:.1} M I/Os/s",
                c.ios_total,
                s,
                c.ios_total as f64 / s / 1e6
            );
        }
        Some("characterize-mem") => {
            let reps: usize = args.get(3).map_or(Ok(7), |r| r.parse())?;
            let t0 = thread_cpu_ns();
            let mut reader = storbench_trace::TraceReader::open_columns_batched(
                Path::new(&args[2]),
                storbench_trace::store::Columns::NoStream,
                8192,
            )?;
            let mut batches = Vec::new();
            while let Some(b) = reader.next_columns()? {
                batches.push(b);
            }
            let decode_ns = thread_cpu_ns() - t0;
            let rows: usize = batches.iter().map(|b| b.len()).sum();
            let mut best = u64::MAX;
            let mut json = String::new();
            for _ in 0..reps {
                let t0 = thread_cpu_ns();
                let mut c = storbench_trace::Characterizer::new();
                for b in &batches {
                    c.push_columns(b);
                }
                let out = c.finish();
                best = best.min(thread_cpu_ns() - t0);
                json = serde_json::to_string(&out)?;
            }
            println!("{json}");
            eprintln!(
                "characterize-mem: {rows} I/Os; decode {:.1} ns per I/O; characterize best of {reps} {:.1} ns per I/O",
                decode_ns as f64 / rows as f64,
                best as f64 / rows as f64
            );
        }
        Some("decode") => {
            let reps: usize = args.get(3).map_or(Ok(7), |r| r.parse())?;
            let mut times = Vec::new();
            let mut rows = 0u64;
            for _ in 0..reps {
                let t0 = thread_cpu_ns();
                let mut reader = storbench_trace::TraceReader::open_columns_batched(
                    Path::new(&args[2]),
                    storbench_trace::store::Columns::NoStream,
                    8192,
                )?;
                rows = 0;
                while let Some(b) = reader.next_columns()? {
                    rows += b.len() as u64;
                    std::hint::black_box(&b);
                }
                times.push(thread_cpu_ns() - t0);
            }
            times.sort_unstable();
            let per = |ns: u64| ns as f64 / rows.max(1) as f64;
            eprintln!(
                "decode: {rows} I/Os; best of {reps} {:.2} ns per I/O, median {:.2}",
                per(times[0]),
                per(times[times.len() / 2])
            );
        }
        Some("import") => {
            let format = args.get(4).map(|f| Format::parse(f).expect("format name"));
            let opts = ImportOptions {
                format,
                ..Default::default()
            };
            let t0 = Instant::now();
            let sum = import(Path::new(&args[2]), Path::new(&args[3]), &opts)?;
            let s = t0.elapsed().as_secs_f64();
            eprintln!(
                "import: {} lines, {} records in {:.3} s = {:.2} M lines/s",
                sum.lines,
                sum.records,
                s,
                sum.lines as f64 / s / 1e6
            );
        }
        Some("encodings") => encodings(args[2].parse()?, Path::new(&args[3]))?,
        _ => return Err(usage.into()),
    }
    Ok(())
}

/// Writes the bench workload with several Parquet writer settings; prints file size,
/// encode and decode CPU time per row for each.
#[allow(
    clippy::too_many_lines,
    reason = "a table of Parquet writer settings, measured in turn"
)]
fn encodings(n: u64, dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    use arrow_array::{
        ArrayRef, DictionaryArray, Int32Array, Int64Array, RecordBatch, StringArray,
    };
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::arrow::{ArrowWriter, ProjectionMask};
    use parquet::basic::{Compression, Encoding, ZstdLevel};
    use parquet::file::properties::{EnabledStatistics, WriterProperties};
    use parquet::schema::types::ColumnPath;
    use std::sync::Arc;
    let (mut issue, mut complete, mut off, mut len, mut op) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    synth(n, |r| {
        issue.push(r.issue_ns as i64);
        complete.push(r.complete_ns.unwrap() as i64);
        off.push(r.offset_bytes as i64);
        len.push(r.len_bytes as i64);
        op.push(r.op.index() as i32);
    });
    let schema = storbench_trace::store::arrow_schema();
    let ops: ArrayRef = Arc::new(StringArray::from(vec!["read", "write", "trim", "flush"]));
    let names: ArrayRef = Arc::new(StringArray::from(vec!["bench"]));
    type V = (
        &'static str,
        fn() -> parquet::file::properties::WriterPropertiesBuilder,
    );
    fn base() -> parquet::file::properties::WriterPropertiesBuilder {
        let mut b = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(1).unwrap()))
            .set_max_row_group_row_count(Some(1 << 20))
            .set_dictionary_enabled(false);
        for c in ["op", "stream", "device"] {
            b = b.set_column_dictionary_enabled(ColumnPath::from(c), true);
        }
        for c in ["issue_ns", "complete_ns"] {
            b = b.set_column_encoding(ColumnPath::from(c), Encoding::DELTA_BINARY_PACKED);
        }
        b
    }
    fn raw(
        b: parquet::file::properties::WriterPropertiesBuilder,
        cols: &[&str],
    ) -> parquet::file::properties::WriterPropertiesBuilder {
        let mut b = b;
        for c in cols {
            b = b.set_column_compression(ColumnPath::from(*c), Compression::UNCOMPRESSED);
        }
        b
    }
    fn lean() -> parquet::file::properties::WriterPropertiesBuilder {
        raw(
            base(),
            &[
                "issue_ns",
                "complete_ns",
                "len_bytes",
                "op",
                "stream",
                "device",
            ],
        )
        .set_column_dictionary_enabled(ColumnPath::from("len_bytes"), true)
        .set_statistics_enabled(EnabledStatistics::Chunk)
    }
    let variants: Vec<V> = vec![
        ("current (zstd1, delta times)", base),
        ("uncompressed all", || {
            base().set_compression(Compression::UNCOMPRESSED)
        }),
        ("lean: offset plain zstd1", lean),
        ("lean: offset delta zstd1", || {
            lean().set_column_encoding(
                ColumnPath::from("offset_bytes"),
                Encoding::DELTA_BINARY_PACKED,
            )
        }),
        ("lean: offset delta raw", || {
            raw(lean(), &["offset_bytes"]).set_column_encoding(
                ColumnPath::from("offset_bytes"),
                Encoding::DELTA_BINARY_PACKED,
            )
        }),
        ("lean: offset plain raw", || raw(lean(), &["offset_bytes"])),
        ("lean: offset plain zstd1, stats page", || {
            lean().set_statistics_enabled(EnabledStatistics::Page)
        }),
        ("current again", base),
        ("lean: offset plain zstd1 again", lean),
    ];
    for (name, props) in variants {
        let path = dir.join("enc.parquet");
        let t0 = thread_cpu_ns();
        let mut w = ArrowWriter::try_new(
            std::fs::File::create(&path)?,
            schema.clone(),
            Some(props().build()),
        )?;
        let chunk = 1 << 16;
        for s in (0..n as usize).step_by(chunk) {
            let e = (s + chunk).min(n as usize);
            let dict = |k: &[i32], v: &ArrayRef| -> ArrayRef {
                Arc::new(DictionaryArray::try_new(Int32Array::from(k.to_vec()), v.clone()).unwrap())
            };
            let cols: Vec<ArrayRef> = vec![
                Arc::new(Int64Array::from(issue[s..e].to_vec())),
                Arc::new(Int64Array::from(complete[s..e].to_vec())),
                Arc::new(Int64Array::from(off[s..e].to_vec())),
                Arc::new(Int64Array::from(len[s..e].to_vec())),
                dict(&op[s..e], &ops),
                Arc::new(
                    DictionaryArray::try_new(
                        Int32Array::from(vec![None::<i32>; e - s]),
                        names.clone(),
                    )
                    .unwrap(),
                ),
                dict(&vec![0; e - s], &names),
            ];
            w.write(&RecordBatch::try_new(schema.clone(), cols)?)?;
        }
        w.close()?;
        let t1 = thread_cpu_ns();
        let b = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&path)?)?;
        let mask = ProjectionMask::roots(b.parquet_schema(), [0, 1, 2, 3, 4]);
        let mut sum = 0i64;
        for batch in b.with_projection(mask).with_batch_size(1 << 16).build()? {
            let batch = batch?;
            for c in 0..4 {
                let a = batch
                    .column(c)
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap();
                sum = sum.wrapping_add(a.values().iter().fold(0i64, |x, &y| x.wrapping_add(y)));
            }
        }
        let t2 = thread_cpu_ns();
        let size = std::fs::metadata(&path)?.len();
        println!(
            "{name:<40} {:6.2} B/row  encode {:6.1} ns/row  decode {:5.1} ns/row  (chk {})",
            size as f64 / n as f64,
            (t1 - t0) as f64 / n as f64,
            (t2 - t1) as f64 / n as f64,
            sum & 0xff
        );
    }
    Ok(())
}
