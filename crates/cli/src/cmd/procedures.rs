//! The drive procedures: `consistency`, `season`, `trim-check` and `bench`.
//! Each writes DIR/result.json, per-second series (Parquet) and fio-style logs, and can
//! be continued after an interruption (Ctrl-C or kill -9) with `--resume DIR`.

use super::drive::{drive, print_footer, Driven};
use super::out::outln;
use storbench_suite::bench::{BenchArgs, BenchConfig};
use storbench_suite::consistency::{ConsistencyArgs, ConsistencyConfig};
use storbench_suite::season::{SeasonArgs, SeasonConfig};
use storbench_suite::trimcheck::{TrimCheckArgs, TrimCheckConfig};

// ---------------------------------------------------------------- consistency

pub fn run_consistency(a: Driven<ConsistencyArgs>) -> anyhow::Result<()> {
    let (dir, r) = drive::<ConsistencyConfig>(&a)?;
    let Some(s) = &r.summary else {
        return Ok(print_footer(&dir, &r)?);
    };
    let bs = r.config.block_bytes;
    outln!(
        "consistency on {} ({:.0}% span, {:.0}% spare area): {} s of {} random writes",
        r.target.name,
        s.span_pct,
        s.spare_area_pct,
        s.iops_per_s.len(),
        storbench_suite::units::fmt_bytes(bs)
    )?;
    if let Some(sc) = &s.scores {
        outln!(
            "  last {} s: average {:.0} IOPS, std dev {:.0}, min {:.0}, avg/stddev {}",
            sc.window_s,
            sc.avg,
            sc.stddev,
            sc.min,
            sc.avg_over_stddev.map_or("-".into(), |v| format!("{v:.1}"))
        )?;
    }
    match s.steady_state_at_s {
        Some(t) => outln!(
            "  SNIA steady state reached at {t} s ({} s rounds)",
            s.round_s
        ),
        None => outln!("  SNIA steady state not reached ({} s rounds)", s.round_s),
    }?;
    print_footer(&dir, &r)?;
    Ok(())
}

// ---------------------------------------------------------------- season

pub fn run_season(a: Driven<SeasonArgs>) -> anyhow::Result<()> {
    let (dir, r) = drive::<SeasonConfig>(&a)?;
    let Some(s) = &r.summary else {
        return Ok(print_footer(&dir, &r)?);
    };
    outln!(
        "seasoned {}: sequential pass at {:.1} MB/s, image {} restored ({:.2} GB in {} writes, {:.1} MB/s)",
        r.target.name,
        s.seq_pass_mb_per_s,
        s.image,
        s.image_restored_bytes as f64 / 1e9,
        s.image_writes,
        s.restore_mb_per_s
    )?;
    print_footer(&dir, &r)?;
    Ok(())
}

// ---------------------------------------------------------------- trim-check

pub fn run_trim_check(a: Driven<TrimCheckArgs>) -> anyhow::Result<()> {
    let (dir, r) = drive::<TrimCheckConfig>(&a)?;
    let Some(t) = &r.summary else {
        return Ok(print_footer(&dir, &r)?);
    };
    outln!("TRIM check on {} (sequential write, MB/s):", r.target.name)?;
    outln!("  {:>12} {:>12} {:>12}", "clean", "dirty", "after TRIM")?;
    outln!(
        "  {:>12.1} {:>12.1} {:>12.1}",
        t.clean_mb_per_s,
        t.dirty_mb_per_s,
        t.after_trim_mb_per_s
    )?;
    outln!(
        "  dirty = {:.0}% of clean, after TRIM = {:.0}% of clean",
        t.dirty_of_clean_pct,
        t.after_trim_of_clean_pct
    )?;
    if let Some(n) = &t.note {
        outln!("  note: {n}")?;
    }
    print_footer(&dir, &r)?;
    Ok(())
}

// ---------------------------------------------------------------- bench

pub fn run_bench(a: Driven<BenchArgs>) -> anyhow::Result<()> {
    let (dir, r) = drive::<BenchConfig>(&a)?;
    let Some(s) = &r.summary else {
        return Ok(print_footer(&dir, &r)?);
    };
    outln!(
        "trace bench on {} ({} drive, {} data): {}",
        r.target.name,
        s.state,
        s.data,
        s.trace
    )?;
    outln!(
        "  data rate {:.1} MB/s (read {:.1}, write {:.1}); busy {:.2} s",
        s.data_rate_mb_per_s,
        s.read_rate_mb_per_s,
        s.write_rate_mb_per_s,
        s.busy_s
    )?;
    outln!(
        "  service time: mean {:.1} us, std dev {:.1} us, p50 {:.1}, p99 {:.1}, p99.9 {:.1} us",
        s.service.mean_us,
        s.service.stddev_us,
        s.service.p50_us,
        s.service.p99_us,
        s.service.p99_9_us
    )?;
    outln!(
        "  {} reads ({:.2} GB), {} writes ({:.2} GB)",
        s.reads,
        s.read_bytes as f64 / 1e9,
        s.writes,
        s.write_bytes as f64 / 1e9
    )?;
    if let Some(c) = &s.replay_counters {
        if let (Some(h), Some(n)) = (c.host_write_bytes, c.nand_write_bytes) {
            outln!(
                "  replay alone: host writes {:.2} GB, NAND writes {:.2} GB, WA {}",
                h as f64 / 1e9,
                n as f64 / 1e9,
                c.write_amplification
                    .map_or("-".into(), |w| format!("{w:.2}"))
            )?;
        }
    }
    print_footer(&dir, &r)?;
    Ok(())
}
