//! Plans expand as documented; the local runner skips finished points, continues a
//! stopped one to the same row, and writes the same dataset whatever its job count.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use storbench_report::sweep::{read_sweep, Cell, Role};
use storbench_sweep::{run_local, run_point, LocalOptions, Plan, PointError};

fn plan(text: &str) -> Plan {
    Plan::parse(text, "t.toml", Path::new(".")).unwrap_or_else(|e| panic!("{e}"))
}

fn plan_err(text: &str) -> String {
    Plan::parse(text, "t.toml", Path::new("."))
        .expect_err("plan must be refused")
        .to_string()
}

#[test]
fn product_pairs_workloads_only_with_procedures_that_replay_them() {
    let p = plan(
        r#"
seeds = { from = 1, count = 2 }
[[target]]
preset = "client-7op"
capacity = "1g"
op = [0.07, 0.28]
[[target]]
preset = ["client-12op", "enterprise-28op"]
capacity = "1g"
[[workload]]
profile = "heavy-2011"
scale = [0.001, 0.002]
[[procedure]]
name = "consistency"
quick = true
qd = [1, 32]
[[procedure]]
name = "bench"
quick = true
"#,
    );
    // 4 target settings x 2 seeds; consistency x 2 qd; bench x 2 workloads.
    assert_eq!(p.points.len(), 4 * 2 * 2 + 4 * 2 * 2);
    let names: Vec<&str> = p.axes.iter().map(|a| a.name.as_str()).collect();
    // In order of first appearance over the points (procedure, then target, ...).
    assert_eq!(names, ["op", "qd", "preset", "scale"]);
    let bench: Vec<_> = p
        .points
        .iter()
        .filter(|x| x.run.procedure == "bench")
        .collect();
    assert!(bench.iter().all(|x| x.run.workload.is_some()));
    assert!(p
        .points
        .iter()
        .filter(|x| x.run.procedure == "consistency")
        .all(|x| x.run.workload.is_none()));
    // The point's seed reaches the simulator unless the target sets its own.
    assert!(
        p.points[1].run.target.ends_with(",seed=2"),
        "{}",
        p.points[1].run.target
    );
    // Ids are distinct and stable: the same plan text gives the same ids.
    let again = plan(&p.text);
    assert_eq!(
        p.points.iter().map(|x| &x.id).collect::<Vec<_>>(),
        again.points.iter().map(|x| &x.id).collect::<Vec<_>>()
    );
}

#[test]
fn float_ranges_land_on_their_end_without_drift() {
    let p = plan(
        r#"
[[target]]
preset = "client-7op"
capacity = "1g"
op = { from = 0.07, to = 0.5, step = 0.01 }
[[procedure]]
name = "consistency"
"#,
    );
    let op = &p.axes[0].values;
    assert_eq!(op.len(), 44);
    assert_eq!(op[3], Cell::Float(0.1));
    assert_eq!(op[43], Cell::Float(0.5));
    assert!(
        p.points[3].run.target.contains(",op=0.1,"),
        "{}",
        p.points[3].run.target
    );
    let n = plan(
        "[[target]]\npreset = \"client-7op\"\ncapacity = \"1g\"\nop = { from = 0.07, to = 0.5, count = 4 }\n[[procedure]]\nname = \"consistency\"\n",
    );
    assert_eq!(n.axes[0].values.last(), Some(&Cell::Float(0.5)));
}

#[test]
fn a_key_that_is_an_axis_in_two_sections_is_named_by_section() {
    let p = plan(
        r#"
[[target]]
preset = "client-7op"
capacity = "1g"
qd = [16, 32]
[[procedure]]
name = "consistency"
qd = [1, 4]
"#,
    );
    let names: Vec<&str> = p.axes.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["target.qd", "procedure.qd"]);
}

#[test]
fn bad_plans_name_the_line_and_the_key() {
    let e = plan_err(
        "[[target]]\npreset = \"client-7op\"\nwarp = 3\n[[procedure]]\nname = \"consistency\"\n",
    );
    assert!(
        e.starts_with("t.toml:1:") || e.starts_with("t.toml:2:"),
        "{e}"
    );
    assert!(e.contains("unknown key `warp`"), "{e}");
    let e = plan_err("[[target]]\npreset = \"client-7op\"\n[[procedure]]\nname = \"consistency\"\nduration = [\"10s\", \"ten\"]\n");
    assert!(e.contains("t.toml:4") && e.contains("duration"), "{e}");
    let e = plan_err(
        "[[target]]\npreset = \"client-7op\"\n[[procedure]]\nname = \"consistency\"\nspeed = 3\n",
    );
    assert!(
        e.contains("t.toml:5") && e.contains("no option `speed`") && e.contains("hint:"),
        "{e}"
    );
    let e = plan_err("[[target]]\npreset = \"client-7op\"\n[[procedure]]\nname = \"bench\"\n");
    assert!(e.contains("no [[workload]]"), "{e}");
    let e = plan_err("[[target]]\npreset = \"client-7op\"\nop = { from = 0.5, to = 0.1, step = 0.1 }\n[[procedure]]\nname = \"consistency\"\n");
    assert!(e.contains("t.toml:3") && e.contains("below"), "{e}");
    let e = plan_err("[[target]]\npreset = \"client-7op\"\n[[procedure]]\nname = \"consistency\"\n[report]\nx = \"op\"\n");
    assert!(e.contains("not an axis"), "{e}");
}

const SMALL: &str = r#"
name = "small"
checkpoint_every = "1s"
[[target]]
preset = "client-7op"
capacity = "512m"
victim = ["greedy", "fifo", "cost-benefit"]
[[procedure]]
name = "consistency"
quick = true
duration = "4s"
round = "1s"
"#;

fn options(jobs: usize) -> LocalOptions {
    LocalOptions {
        jobs,
        progress: false,
        stop: Arc::new(AtomicBool::new(false)),
    }
}

#[test]
fn finished_points_are_skipped_and_the_dataset_does_not_depend_on_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let p = plan(SMALL);
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    // A stop request set before the sweep starts no point at all.
    let stopped = options(2);
    stopped.stop.store(true, Ordering::Relaxed);
    let none = run_local(&p, &a, &stopped).unwrap();
    assert_eq!((none.ran, none.rows, none.interrupted), (0, 0, true));
    let ra = run_local(&p, &a, &options(1)).unwrap();
    assert_eq!((ra.ran, ra.rows, ra.already_done), (3, 3, 0));
    let rb = run_local(&p, &b, &options(3)).unwrap();
    assert_eq!(rb.rows, 3);
    let bytes = std::fs::read(&ra.dataset).unwrap();
    assert_eq!(bytes, std::fs::read(&rb.dataset).unwrap());

    // Run again: nothing runs, point.json files are untouched.
    let pj = a.join("points").join(&p.points[1].id).join("point.json");
    let before = std::fs::read(&pj).unwrap();
    let again = run_local(&p, &a, &options(2)).unwrap();
    assert_eq!((again.ran, again.already_done), (0, 3));
    assert_eq!(std::fs::read(&pj).unwrap(), before);

    // A point whose record is gone (its result stays) is recorded again, same row.
    std::fs::remove_file(&pj).unwrap();
    let third = run_local(&p, &a, &options(2)).unwrap();
    assert_eq!((third.ran, third.already_done), (1, 2));
    assert_eq!(std::fs::read(&ra.dataset).unwrap(), bytes);

    let t = read_sweep(&ra.dataset).unwrap();
    let victim = t.column("victim").unwrap();
    assert_eq!(t.meta.columns[victim].role, Role::Param);
    let iops = t.column("steady_iops").unwrap();
    assert!(t
        .rows
        .iter()
        .all(|r| matches!(r[iops], Cell::Float(v) if v > 0.0)));
    // A second sweep in the same directory at once is refused.
    let _held = storbench_sweep::SweepDir::open(&a, &p).unwrap();
    let busy = run_local(&p, &a, &options(1)).unwrap_err().to_string();
    assert!(busy.contains("another sweep"), "{busy}");
}

/// A stop request stops a point at a whole second, checkpointed; continued, the point
/// gives the row of a point never stopped (the suite's checkpoints change nothing).
/// Was ignored while the suite ended a stopped chunk where the stop found it (steady
/// IOPS then moved by 15%).
#[test]
fn a_point_stopped_mid_phase_continues_to_the_row_of_an_unstopped_run() {
    let tmp = tempfile::tempdir().unwrap();
    let p = plan(SMALL);
    let run = &p.points[0].run;
    let whole = run_point(
        run,
        &tmp.path().join("whole"),
        Arc::new(AtomicBool::new(false)),
    )
    .unwrap();

    let dir = tmp.path().join("stopped");
    let stop = Arc::new(AtomicBool::new(false));
    // Raise the stop flag once the random-write phase has written its journal.
    let watcher = {
        let (stop, journal) = (stop.clone(), dir.join("journal").join("random-write.jsonl"));
        std::thread::spawn(move || {
            let t0 = Instant::now();
            while !journal.exists() && t0.elapsed() < Duration::from_secs(120) {
                std::thread::sleep(Duration::from_millis(1));
            }
            stop.store(true, Ordering::Relaxed);
        })
    };
    let first = run_point(run, &dir, stop);
    watcher.join().unwrap();
    match first {
        Err(PointError::Interrupted { phase }) => assert_eq!(phase, "random-write"),
        Ok(_) => panic!(
            "the point finished before the stop flag was seen; the test needs a longer phase"
        ),
        Err(e) => panic!("{e}"),
    }
    let resumed = run_point(run, &dir, Arc::new(AtomicBool::new(false))).unwrap();
    assert_eq!(resumed, whole);
    let r = storbench_suite::read_result::<storbench_suite::consistency::ConsistencyConfig>(&dir)
        .unwrap();
    assert_eq!(r.resumes, 1);
}

/// Regression (issue 30): a generator of `ios = 1e14` passed the plan check and wrote
/// its trace until the disk was full. The points' output is estimated from the plan and
/// checked against the output's free space before the first point runs; the error
/// names the file, the field and its line, and nothing of a point is written.
#[test]
fn a_plan_bigger_than_its_disk_is_refused_before_any_point_runs() {
    let text = r#"
[[target]]
preset = "client-7op"
capacity = "1g"

[[workload]]
generator = "randwrite"
ios = 100000000000000

[[workload]]
generator = "randwrite"
size = "64m"

[[procedure]]
name = "bench"
"#;
    let p = plan(text);
    let huge = &p.points[0];
    assert_eq!(huge.output.field.as_deref(), Some("ios"));
    assert_eq!(huge.output.line, Some(8));
    assert!(
        huge.output.bytes >= 100_000_000_000_000,
        "{:?}",
        huge.output
    );
    // 64 MiB of 4 KiB writes: a trace of 16384 I/Os, smaller than the results.
    let small = &p.points[1];
    let trace = 16384 * storbench_sweep::point::TRACE_BYTES_PER_IO;
    assert_eq!(
        small.output.bytes,
        storbench_sweep::point::POINT_RESULT_BYTES + trace
    );
    assert_eq!(small.output.field, None, "the results decide");

    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sweep");
    let e = run_local(&p, &out, &options(1)).expect_err("refused");
    let msg = e.to_string();
    assert!(
        matches!(&e, storbench_sweep::SweepError::Plan(pe) if pe.line == Some(8)),
        "{e:?}"
    );
    assert!(
        msg.starts_with("t.toml:8: the sweep would write about")
            && msg.contains("`ios` of point 0")
            && msg.contains("free in")
            && msg.contains("hint: lower `ios` or `size`"),
        "{msg}"
    );
    let points = std::fs::read_dir(out.join("points")).unwrap().count();
    assert_eq!(points, 0, "no point ran");

    // The bound is the free space: the same plan's small point alone fits.
    let fits = plan(&text.replace("ios = 100000000000000", "ios = 1000"));
    assert!(fits
        .check_room(&fits.points.iter().collect::<Vec<_>>(), 64 << 20, &out)
        .is_ok());
    let e = fits
        .check_room(&fits.points.iter().collect::<Vec<_>>(), 100 << 10, &out)
        .unwrap_err();
    assert!(e.message.contains("more than the 100 KiB free"), "{e}");
}

/// A timed procedure's results grow with its duration: a consistency run of a billion
/// seconds is named by its `duration`.
#[test]
fn a_timed_procedure_is_bounded_by_its_duration() {
    let p = plan(
        r#"
[[target]]
preset = "client-7op"
capacity = "1g"

[[procedure]]
name = "consistency"
duration = "1000000000s"
"#,
    );
    let pt = &p.points[0];
    assert_eq!(pt.output.field.as_deref(), Some("duration"));
    assert_eq!(pt.output.line, Some(8));
    let e = p.check_room(&[pt], 1 << 30, Path::new("out")).unwrap_err();
    assert!(e.to_string().contains("hint: lower `duration`"), "{e}");
}

/// Issue 32: a plan's `[[procedure]]` keys are the command's own options, parsed
/// through the same clap `Args`: `time` for consistency (its old spelling `duration`
/// an alias) and `state` for bench, which the sweep's own parser did not take.
#[test]
fn a_plan_takes_the_commands_options_time_and_state() {
    use storbench_suite::bench::BenchConfig;
    use storbench_suite::consistency::ConsistencyConfig;
    use storbench_suite::read_result;
    let tmp = tempfile::tempdir().unwrap();
    let p = plan(
        r#"
checkpoint_every = "1s"
[[target]]
preset = "client-7op"
capacity = "512m"
[[workload]]
generator = "randwrite"
ios = 2000
[[procedure]]
name = "consistency"
quick = true
time = "20s"
round = "1s"
[[procedure]]
name = "bench"
state = ["fresh", "seasoned", "used"]
used_passes = 1
"#,
    );
    assert_eq!(p.points.len(), 4);
    let r = run_local(&p, tmp.path(), &options(2)).unwrap();
    assert_eq!(r.rows, 4);
    let (mut states, mut views) = (Vec::new(), Vec::new());
    for pt in &p.points {
        let dir = tmp.path().join("points").join(&pt.id);
        if pt.run.procedure == "consistency" {
            let r = read_result::<ConsistencyConfig>(&dir).unwrap();
            assert_eq!(r.config.duration_ns, 20_000_000_000);
            assert_eq!(r.summary.unwrap().iops_per_s.len(), 20);
            continue;
        }
        let r = read_result::<BenchConfig>(&dir).unwrap();
        let state = pt.run.options["state"].text();
        assert_eq!(r.summary.as_ref().unwrap().state, state);
        let phases: Vec<&str> = r.phases.iter().map(|p| p.name.as_str()).collect();
        let want: &[&str] = match state.as_str() {
            "fresh" => &["purge", "image", "replay"],
            "seasoned" => &["purge", "seq-pass", "image", "replay"],
            _ => &["purge", "seq-pass", "image", "used-1", "replay"],
        };
        assert_eq!(phases, want, "{state}");
        // The report's seasoning section shows every state's preparation.
        let (view, _) = storbench_report::html::load::load(&dir).unwrap();
        let season = view.season.clone().unwrap();
        assert_eq!(season.state, state);
        assert_eq!(season.seq_pass_mb_s.is_some(), state != "fresh", "{state}");
        assert!(season.restore_mb_s.is_some(), "{state}");
        views.push(view);
        states.push(state);
    }
    assert_eq!(states, ["fresh", "seasoned", "used"]);
    storbench_report::html::view::name_runs(&mut views, &[]);
    let html = storbench_report::html::render_html(&views, "states");
    let section = &html[html.find("<section id=\"season\">").unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    for state in ["fresh", "seasoned", "used"] {
        assert!(
            section.contains(&format!("<td>{state}</td>")),
            "{state}: {section}"
        );
    }
}

/// Issue 32: `time` and its older spelling `duration` make the same point, so the
/// same row; a plan takes neither the plan's own `seed` nor an unknown key.
#[test]
fn the_old_spelling_duration_is_an_alias_of_time() {
    let tmp = tempfile::tempdir().unwrap();
    let one = |key: &str| {
        plan(&format!(
            "[[target]]\npreset = \"client-7op\"\ncapacity = \"512m\"\n[[procedure]]\nname = \"consistency\"\nquick = true\n{key} = \"3s\"\nround = \"1s\"\n"
        ))
    };
    let (t, d) = (one("time"), one("duration"));
    let stop = || Arc::new(AtomicBool::new(false));
    let rt = run_point(&t.points[0].run, &tmp.path().join("t"), stop()).unwrap();
    let rd = run_point(&d.points[0].run, &tmp.path().join("d"), stop()).unwrap();
    assert_eq!(rt, rd);
    let e = plan_err(
        "[[target]]\npreset = \"client-7op\"\n[[procedure]]\nname = \"consistency\"\nseed = 3\n",
    );
    assert!(e.contains("no option `seed`") && e.contains("time"), "{e}");
}

/// Issue 32: the sweep's bounds and messages are the command line's: `qd` 1 to 4096
/// (the sweep took up to 65,536), a value clap refuses named as its flag.
#[test]
fn a_plans_bad_value_reads_as_the_command_lines() {
    let bad = |proc_keys: &str| {
        plan_err(&format!(
            "[[target]]\npreset = \"client-7op\"\n[[procedure]]\n{proc_keys}\n"
        ))
    };
    // The error names the key's line (the fifth, after `name`).
    let e = bad("name = \"consistency\"\nqd = 5000");
    assert!(e.contains("--qd 5000: must be between 1 and 4096"), "{e}");
    assert!(e.starts_with("t.toml:5:"), "{e}");
    let e = bad("name = \"consistency\"\ntime = \"ten\"");
    assert!(e.contains("invalid value 'ten' for '--time <TIME>'"), "{e}");
    assert!(e.starts_with("t.toml:5:"), "{e}");
    let e = plan_err("[[target]]\npreset = \"client-7op\"\n[[workload]]\ngenerator = \"randwrite\"\nios = 10\n[[procedure]]\nname = \"bench\"\nstate = \"worn\"\n");
    assert!(
        e.contains("invalid value 'worn' for '--state <STATE>'") && e.starts_with("t.toml:8:"),
        "{e}"
    );
    let e = bad("name = \"trim-check\"\nquick = \"yes\"");
    assert!(e.contains("--quick is a switch"), "{e}");
    let e = plan_err("[[target]]\npreset = \"client-7op\"\n[[workload]]\ngenerator = \"randwrite\"\nios = 10\nqd = 5000\n[[procedure]]\nname = \"bench\"\n");
    assert!(e.contains("between 1 and 4096"), "{e}");
}

/// A plan's `image` (season, bench) is a file relative to the plan, as a trace
/// workload's path is, whatever directory the sweep runs from.
#[test]
fn a_plans_image_is_relative_to_the_plan() {
    use storbench_suite::season::SeasonConfig;
    let tmp = tempfile::tempdir().unwrap();
    let image = tmp.path().join("img.bin");
    std::fs::write(&image, vec![7u8; 1 << 20]).unwrap();
    let p = Plan::parse(
        "[[target]]\npreset = \"client-7op\"\ncapacity = \"256m\"\n[[procedure]]\nname = \"season\"\nimage = \"img.bin\"\n",
        "t.toml",
        tmp.path(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let run = &p.points[0].run;
    let abs = std::path::absolute(&image).unwrap();
    assert_eq!(run.options["image"], Cell::Text(abs.display().to_string()));
    let dir = tmp.path().join("point");
    run_point(run, &dir, Arc::new(AtomicBool::new(false))).unwrap();
    let r = storbench_suite::read_result::<SeasonConfig>(&dir).unwrap();
    assert_eq!(r.config.image.as_deref(), Some(abs.as_path()));
    assert_eq!(r.summary.unwrap().image_restored_bytes, 1 << 20);
}

/// A trace workload's point is configured without opening the trace per point (the
/// plan checked the file), and its run replays it: every I/O of the trace.
#[test]
fn a_trace_workload_point_replays_the_trace() {
    use storbench_suite::bench::BenchConfig;
    use storbench_trace::{IoRecord, Op, TraceMeta, TraceWriter};
    let tmp = tempfile::tempdir().unwrap();
    let mut w = TraceWriter::create(&tmp.path().join("t.parquet"), &TraceMeta::default()).unwrap();
    for i in 0..100u64 {
        w.write(&IoRecord::new(
            Op::Write,
            (i * 7919 % 1000) * 4096,
            4096,
            i * 1000,
        ))
        .unwrap();
    }
    w.finish().unwrap();
    let p = Plan::parse(
        "[[target]]\npreset = \"client-7op\"\ncapacity = \"256m\"\n[[workload]]\ntrace = \"t.parquet\"\n[[procedure]]\nname = \"bench\"\nstate = \"fresh\"\n",
        "t.toml",
        tmp.path(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path().join("point");
    run_point(&p.points[0].run, &dir, Arc::new(AtomicBool::new(false))).unwrap();
    let r = storbench_suite::read_result::<BenchConfig>(&dir).unwrap();
    let s = r.summary.unwrap();
    assert_eq!((s.writes, s.reads, s.state.as_str()), (100, 0, "fresh"));
}

/// Issue 35: `jobs` is a plan key as `--jobs` is a flag (the procedures' shared
/// `JobsArgs`, parsed through their `Args`): a consistency point of two jobs runs its
/// random writes as two, and a bad count reads as the command line's.
#[test]
fn a_plan_takes_jobs_as_the_command_line_does() {
    use storbench_suite::consistency::ConsistencyConfig;
    use storbench_suite::read_result;
    let tmp = tempfile::tempdir().unwrap();
    let p = plan(
        "[[target]]\npreset = \"client-7op\"\ncapacity = \"512m\"\n[[procedure]]\nname = \"consistency\"\nquick = true\ntime = \"3s\"\nround = \"1s\"\njobs = [1, 2]\n",
    );
    assert_eq!(p.points.len(), 2);
    run_local(&p, tmp.path(), &options(1)).unwrap();
    let mut jobs = Vec::new();
    for pt in &p.points {
        let r = read_result::<ConsistencyConfig>(&tmp.path().join("points").join(&pt.id)).unwrap();
        let rand = r.phases.iter().find(|p| p.name == "random-write").unwrap();
        let per_job = rand.job_issued_ios.len().max(1);
        assert_eq!(per_job as u32, r.config.jobs);
        jobs.push(r.config.jobs);
    }
    jobs.sort();
    assert_eq!(jobs, [1, 2]);
    let e = plan_err(
        "[[target]]\npreset = \"client-7op\"\n[[procedure]]\nname = \"consistency\"\njobs = 0\n",
    );
    assert!(e.contains("--jobs 0: must be between 1 and 256"), "{e}");
}

/// Issue 33: a sweep takes a twin (`twin = "DIR/twin.json"`, relative to the plan) or a
/// full `sim:` spec as a target; the entry's other keys replace the spec's own or add to
/// it, and may be axes.
#[test]
fn a_target_may_be_a_twin_or_a_full_spec() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("m")).unwrap();
    let twin = storbench_results::twin::TwinFile {
        schema_version: 1,
        target: "sim:sata-mlc-2013,capacity=268435456,program_us=1400.000".into(),
        preset: "sata-mlc-2013".into(),
        capacity_bytes: 268435456,
        eval_capacity_bytes: 268435456,
        parameters: Vec::new(),
        unidentified: Vec::new(),
        figures: Vec::new(),
        start_cost: 1.0,
        cost: 0.5,
        iterations: 1,
        evaluations: 1,
    };
    std::fs::write(
        tmp.path().join("m/twin.json"),
        serde_json::to_vec(&twin).unwrap(),
    )
    .unwrap();
    let text = r#"
[[target]]
twin = "m/twin.json"
capacity = "64m"
op = [0.07, 0.28]
[[target]]
target = "sim:client-7op,capacity=64m,seed=9"
[[procedure]]
name = "consistency"
quick = true
"#;
    let p = Plan::parse(text, "t.toml", tmp.path()).unwrap_or_else(|e| panic!("{e}"));
    let targets: Vec<(&str, &str)> = p
        .points
        .iter()
        .map(|p| (p.preset.as_str(), p.run.target.as_str()))
        .collect();
    assert_eq!(
        targets,
        [
            (
                "sata-mlc-2013",
                "sim:sata-mlc-2013,capacity=64m,program_us=1400.000,op=0.07,seed=1"
            ),
            (
                "sata-mlc-2013",
                "sim:sata-mlc-2013,capacity=64m,program_us=1400.000,op=0.28,seed=1"
            ),
            // The spec sets its own seed: the point's is not added.
            ("client-7op", "sim:client-7op,capacity=64m,seed=9"),
        ]
    );
    let e = plan_err("[[target]]\npreset = \"client-7op\"\ntwin = \"t.json\"\n[[procedure]]\nname = \"consistency\"\n");
    assert!(e.contains("takes one of `preset`, `target`, `twin`"), "{e}");
    let e =
        plan_err("[[target]]\ntwin = \"none/twin.json\"\n[[procedure]]\nname = \"consistency\"\n");
    assert!(e.contains("t.toml:2: twin ./none/twin.json"), "{e}");
    let e = plan_err("[[target]]\ntarget = \"/dev/sda\"\n[[procedure]]\nname = \"consistency\"\n");
    assert!(e.contains("not a simulated drive"), "{e}");
}

/// Issue 33: the twin's measurement plan is a sweep procedure: each point's row holds
/// the plan's figures, the same numbers `twin measure` records for that drive, so a
/// sweep over drives shows what the plan can tell apart.
#[test]
fn a_plan_runs_twin_measure_and_its_figures_are_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let p = plan(
        "[[target]]\npreset = \"sata-mlc-2013\"\ncapacity = \"64m\"\nprogram_us = [900, 1800]\n[[procedure]]\nname = \"twin-measure\"\nquick = true\n",
    );
    assert_eq!(p.points.len(), 2);
    let r = run_local(&p, tmp.path(), &options(2)).unwrap();
    assert_eq!(r.rows, 2);
    let t = read_sweep(&r.dataset).unwrap();
    let mut seq_write = Vec::new();
    for pt in &p.points {
        let want = storbench_twin::measure_sim(
            storbench_sim::SimConfig::parse(&pt.run.target).unwrap(),
            &storbench_twin::PlanShape::quick(),
        )
        .unwrap();
        let row = t
            .rows
            .iter()
            .find(|row| {
                want.figures.iter().all(
                    |f| matches!(row[t.column(&f.name).unwrap()], Cell::Float(v) if v == f.value),
                )
            })
            .unwrap_or_else(|| panic!("no row holds {}'s figures", pt.run.target));
        let Cell::Float(seq) = row[t.column("seq_write_mb_per_s").unwrap()] else {
            panic!("no sequential write rate")
        };
        seq_write.push((pt.run.target.contains("program_us=900"), seq));
    }
    // Slower programs, slower fill: the two rows are two drives.
    seq_write.sort_by_key(|x| std::cmp::Reverse(x.0));
    assert!(seq_write[0].1 > seq_write[1].1, "{seq_write:?}");
    let e = plan_err(
        "[[target]]\npreset = \"client-7op\"\n[[procedure]]\nname = \"twin-measure\"\nqd = 4\n",
    );
    assert!(e.contains("qd"), "{e}");
}
