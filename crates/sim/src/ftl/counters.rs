//! SMART-like counters of the simulated drive, and the slot census of a check.

use serde::Serialize;

/// SMART-like counters (lifetime of the simulated drive).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SimCounters {
    pub host_read_ios: u64,
    pub host_write_ios: u64,
    pub host_trim_ios: u64,
    pub host_flush_ios: u64,
    pub host_read_bytes: u64,
    pub host_write_bytes: u64,
    pub host_trim_bytes: u64,
    /// 4 KiB units host writes covered only in part (512-byte sectors), and those of
    /// them that held data, so the drive read the unit to merge it (read-modify-write).
    pub host_partial_units: u64,
    pub rmw_reads: u64,
    /// NAND page reads (host reads, read-modify-write, GC/fold reads).
    pub nand_page_reads: u64,
    /// Bytes programmed into NAND (host data, GC relocation, SLC folding).
    pub nand_write_bytes: u64,
    /// NAND page programs (nand_write_bytes / page size).
    pub nand_programs: u64,
    pub nand_erases: u64,
    /// nand_write_bytes / host_write_bytes (0 before any write).
    pub wa: f64,
    /// Victim blocks collected by GC (foreground + background).
    pub gc_runs: u64,
    pub gc_background_runs: u64,
    pub gc_relocated_bytes: u64,
    /// Host write bytes absorbed by the SLC cache.
    pub slc_hit_bytes: u64,
    /// Host write bytes that went straight to native cells.
    pub native_direct_bytes: u64,
    /// SLC blocks folded into native cells, and the bytes moved.
    pub slc_folds: u64,
    pub slc_fold_bytes: u64,
    /// Static wear levelling: cold blocks whose data moved to a worn block, and the
    /// bytes moved (counted in nand_write_bytes, so in WA).
    pub wl_migrations: u64,
    pub wl_relocated_bytes: u64,
    pub erase_count_min: u32,
    pub erase_count_max: u32,
    pub erase_count_mean: f64,
    /// erase_count_max - erase_count_min (over all blocks).
    pub erase_count_spread: u32,
}

impl SimCounters {
    /// Counters accumulated since `earlier` (WA and erase-count spread are of `self`,
    /// except `wa`, which is recomputed over the interval).
    pub fn since(&self, earlier: &SimCounters) -> SimCounters {
        let mut d = self.clone();
        d.host_read_ios -= earlier.host_read_ios;
        d.host_write_ios -= earlier.host_write_ios;
        d.host_trim_ios -= earlier.host_trim_ios;
        d.host_flush_ios -= earlier.host_flush_ios;
        d.host_read_bytes -= earlier.host_read_bytes;
        d.host_write_bytes -= earlier.host_write_bytes;
        d.host_trim_bytes -= earlier.host_trim_bytes;
        d.host_partial_units -= earlier.host_partial_units;
        d.rmw_reads -= earlier.rmw_reads;
        d.nand_page_reads -= earlier.nand_page_reads;
        d.nand_write_bytes -= earlier.nand_write_bytes;
        d.nand_programs = d.nand_programs.saturating_sub(earlier.nand_programs);
        d.nand_erases -= earlier.nand_erases;
        d.gc_runs -= earlier.gc_runs;
        d.gc_background_runs -= earlier.gc_background_runs;
        d.gc_relocated_bytes -= earlier.gc_relocated_bytes;
        d.slc_hit_bytes -= earlier.slc_hit_bytes;
        d.native_direct_bytes -= earlier.native_direct_bytes;
        d.slc_folds -= earlier.slc_folds;
        d.slc_fold_bytes -= earlier.slc_fold_bytes;
        d.wl_migrations -= earlier.wl_migrations;
        d.wl_relocated_bytes -= earlier.wl_relocated_bytes;
        d.wa = if d.host_write_bytes == 0 {
            0.0
        } else {
            d.nand_write_bytes as f64 / d.host_write_bytes as f64
        };
        d
    }
}

/// Slot accounting from [`Ftl::check`]: free + valid + invalid = total.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotCensus {
    pub total: u64,
    pub free: u64,
    pub valid: u64,
    pub invalid: u64,
}
