//! Drive health before and after a procedure: host writes, NAND writes where the
//! drive reports them, write amplification, temperature and media errors.
//!
//! Real drives are read with `smartctl --json -a` (smartmontools 7+). NVMe reports
//! host writes in its standard log; NAND writes only through vendor logs, which we
//! do not guess at. SATA drives report vendor attributes, read by name. When health
//! cannot be read (loop devices, zram, virtual disks, smartctl missing, no
//! permission) the snapshot says so in plain words instead of failing the run.
//! The simulated SSD reports its exact counters.

use std::path::{Path, PathBuf};
use std::process::Command;
pub use storbench_results::health::{delta, HealthDelta, HealthSnapshot};

/// Why a path has no disk smartctl can be asked about.
#[derive(Debug, thiserror::Error)]
pub enum NoDisk {
    #[error("{}: {error}", path.display())]
    Unreadable {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{} is on device {major}:{minor}, which is not a block device (tmpfs, overlay or network filesystem)", path.display())]
    NotBlock {
        path: PathBuf,
        major: u64,
        minor: u64,
    },
    #[error("cannot name the disk under {}", .0.display())]
    Unnamed(PathBuf),
    #[error("{0} is a loop device (backed by a file): it has no SMART health of its own")]
    Loop(String),
    #[error("{0} is a memory-backed device: it has no SMART health")]
    Memory(String),
    #[error(
        "{0} is a virtual (device-mapper or RAID) device: ask smartctl about the disks under it"
    )]
    Virtual(String),
}

/// The whole-disk block device a path lives on, or why there is none.
/// `Ok(dev)` is a `/dev/NAME` smartctl can be asked about.
pub fn disk_for_path(path: &Path) -> Result<PathBuf, NoDisk> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let md = std::fs::metadata(path).map_err(|error| NoDisk::Unreadable {
        path: path.to_path_buf(),
        error,
    })?;
    let (major, minor) = if md.file_type().is_block_device() {
        let r = md.rdev();
        (libc_major(r), libc_minor(r))
    } else {
        let d = md.dev();
        (libc_major(d), libc_minor(d))
    };
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let real = std::fs::canonicalize(&sys).map_err(|_| NoDisk::NotBlock {
        path: path.to_path_buf(),
        major,
        minor,
    })?;
    // A partition's sysfs directory sits inside its disk's and has a `partition` file.
    let disk_dir = if real.join("partition").exists() {
        real.parent().map(Path::to_path_buf).unwrap_or(real.clone())
    } else {
        real
    };
    let name = disk_dir
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| NoDisk::Unnamed(disk_dir.clone()))?
        .to_owned();
    if name.starts_with("loop") {
        return Err(NoDisk::Loop(name));
    }
    if name.starts_with("zram") || name.starts_with("ram") || name.starts_with("nullb") {
        return Err(NoDisk::Memory(name));
    }
    if name.starts_with("dm-") || name.starts_with("md") {
        return Err(NoDisk::Virtual(name));
    }
    Ok(PathBuf::from("/dev").join(name))
}

fn libc_major(dev: u64) -> u64 {
    ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0x0000_0fff)
}
fn libc_minor(dev: u64) -> u64 {
    ((dev >> 12) & 0xffff_ff00) | (dev & 0x0000_00ff)
}

/// Read health of the disk holding `path` (a block device or a file on one).
pub fn read_smart(path: &Path) -> HealthSnapshot {
    let dev = match disk_for_path(path) {
        Ok(d) => d,
        Err(why) => {
            return HealthSnapshot::unavailable(
                format!("smartctl ({})", path.display()),
                why.to_string(),
            )
        }
    };
    let source = format!("smartctl --json -a {}", dev.display());
    let out = match Command::new("smartctl")
        .arg("--json")
        .arg("-a")
        .arg(&dev)
        .output()
    {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return HealthSnapshot::unavailable(
                source,
                "smartctl not found; install smartmontools to record drive health",
            )
        }
        Err(e) => return HealthSnapshot::unavailable(source, format!("running smartctl: {e}")),
    };
    let json: serde_json::Value = match serde_json::from_slice(&out.stdout) {
        Ok(j) => j,
        Err(e) => {
            return HealthSnapshot::unavailable(
                source,
                format!("smartctl printed no JSON ({e}); smartmontools 7 or later is needed"),
            )
        }
    };
    let mut snap = parse_smartctl_json(&json);
    snap.source = source;
    if let Some(p) = path.to_str() {
        if !p.starts_with("/dev/") {
            let note = format!("file target: health of {}, the disk holding the file; other activity on that disk counts too", dev.display());
            snap.note = Some(match snap.note.take() {
                Some(n) => format!("{n}; {note}"),
                None => note,
            });
        }
    }
    snap
}

fn u64_at(v: &serde_json::Value, ptr: &str) -> Option<u64> {
    v.pointer(ptr).and_then(|x| x.as_u64())
}

/// Read a smartctl `--json -a` document (NVMe, ATA or SCSI).
pub fn parse_smartctl_json(j: &serde_json::Value) -> HealthSnapshot {
    let mut s = HealthSnapshot {
        taken_unix_ms: crate::state::unix_ms(),
        model: j
            .pointer("/model_name")
            .and_then(|x| x.as_str())
            .map(str::to_owned),
        firmware: j
            .pointer("/firmware_version")
            .and_then(|x| x.as_str())
            .map(str::to_owned),
        temperature_c: j.pointer("/temperature/current").and_then(|x| x.as_f64()),
        ..Default::default()
    };
    if let Some(nv) = j.get("nvme_smart_health_information_log") {
        read_nvme_log(&mut s, nv);
    } else if let Some(table) = j
        .pointer("/ata_smart_attributes/table")
        .and_then(|t| t.as_array())
    {
        let lbs = u64_at(j, "/logical_block_size").unwrap_or(512);
        read_ata_attributes(&mut s, table, lbs);
    } else if let Some(log) = j.get("scsi_error_counter_log") {
        read_scsi_log(&mut s, log);
    }
    s.available = s.host_write_bytes.is_some()
        || s.temperature_c.is_some()
        || s.media_errors.is_some()
        || s.nand_write_bytes.is_some();
    if !s.available {
        s.note = Some(no_figures_note(j));
    }
    s
}

/// NVMe's SMART / health information log.
fn read_nvme_log(s: &mut HealthSnapshot, nv: &serde_json::Value) {
    // NVMe data units are 1000 × 512 bytes.
    s.host_write_bytes = u64_at(nv, "/data_units_written").map(|u| u * 512_000);
    s.host_read_bytes = u64_at(nv, "/data_units_read").map(|u| u * 512_000);
    s.media_errors = u64_at(nv, "/media_errors");
    s.used_pct = u64_at(nv, "/percentage_used");
    if s.temperature_c.is_none() {
        s.temperature_c = nv.get("temperature").and_then(|x| x.as_f64());
    }
}

/// ATA SMART attributes, by the vendors' names (and ids 187, 198, 241, 242);
/// `lbs` is the logical block size counters in LBAs are in.
fn read_ata_attributes(s: &mut HealthSnapshot, table: &[serde_json::Value], lbs: u64) {
    let mut host_pages = None;
    let mut ftl_pages = None;
    for a in table {
        let id = a.get("id").and_then(|x| x.as_u64()).unwrap_or(0);
        let name = a.get("name").and_then(|x| x.as_str()).unwrap_or("");
        let raw = a.pointer("/raw/value").and_then(|x| x.as_u64());
        let Some(raw) = raw else { continue };
        let unit = |name: &str| ata_unit_bytes(name, lbs);
        match (id, name) {
            (_, n) if n.contains("NAND_Writes") || n.contains("Flash_Writes") => {
                s.nand_write_bytes = Some(raw * unit(n))
            }
            (_, "Host_Program_Page_Count") => host_pages = Some(raw),
            (_, n) if n == "FTL_Program_Page_Count" || n == "Bckgnd_Program_Page_Cnt" => {
                ftl_pages = Some(raw)
            }
            (241, n)
            | (_, n @ ("Total_LBAs_Written" | "Host_Writes_32MiB" | "Host_Writes_GiB")) => {
                s.host_write_bytes = Some(raw * unit(n))
            }
            (242, n) | (_, n @ ("Total_LBAs_Read" | "Host_Reads_32MiB" | "Host_Reads_GiB")) => {
                s.host_read_bytes = Some(raw * unit(n))
            }
            (187, _) => s.media_errors = Some(raw),
            (198, _) if s.media_errors.is_none() => s.media_errors = Some(raw),
            _ => {}
        }
    }
    if let (Some(h), Some(f)) = (host_pages, ftl_pages) {
        if h > 0 {
            s.lifetime_wa = Some((h + f) as f64 / h as f64);
        }
    }
}

/// Bytes per count of an ATA attribute, from the unit its name gives (32 MiB, GiB;
/// otherwise logical blocks of `lbs` bytes).
fn ata_unit_bytes(name: &str, lbs: u64) -> u64 {
    if name.contains("32MiB") {
        32 << 20
    } else if name.contains("GiB") || name.contains("1GB") {
        1 << 30
    } else {
        lbs
    }
}

/// SCSI's error counter log: uncorrected errors and gigabytes written.
fn read_scsi_log(s: &mut HealthSnapshot, log: &serde_json::Value) {
    let r = u64_at(log, "/read/total_uncorrected_errors");
    let w = u64_at(log, "/write/total_uncorrected_errors");
    if r.is_some() || w.is_some() {
        s.media_errors = Some(r.unwrap_or(0) + w.unwrap_or(0));
    }
    s.host_write_bytes = log
        .pointer("/write/gigabytes_processed")
        .and_then(|x| {
            x.as_str()
                .and_then(|t| t.parse::<f64>().ok())
                .or(x.as_f64())
        })
        .map(|g| (g * 1e9) as u64);
}

/// Why a document gave no health figures: smartctl's own messages, if any.
fn no_figures_note(j: &serde_json::Value) -> String {
    let msgs: Vec<String> = j
        .pointer("/smartctl/messages")
        .and_then(|m| m.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|m| m.get("string").and_then(|x| x.as_str()).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if msgs.is_empty() {
        "smartctl reported no health figures for this device".to_owned()
    } else {
        format!("smartctl: {}", msgs.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nvme_log_units_and_delta() {
        let before = parse_smartctl_json(&json!({
            "model_name": "X NVMe", "temperature": {"current": 41},
            "nvme_smart_health_information_log": {
                "data_units_written": 1000, "data_units_read": 10, "media_errors": 0, "percentage_used": 3
            }
        }));
        let after = parse_smartctl_json(&json!({
            "model_name": "X NVMe", "temperature": {"current": 47},
            "nvme_smart_health_information_log": {
                "data_units_written": 3000, "data_units_read": 10, "media_errors": 1, "percentage_used": 3
            }
        }));
        assert!(before.available);
        assert_eq!(before.host_write_bytes, Some(512_000_000));
        let d = delta(&before, &after);
        assert_eq!(d.host_write_bytes, Some(1_024_000_000));
        assert_eq!(d.media_errors_new, Some(1));
        assert_eq!(d.write_amplification, None);
        assert!(d.note.unwrap().contains("NAND"));
        assert_eq!(d.temperature_after_c, Some(47.0));
    }

    #[test]
    fn ata_attributes_by_name_give_wa() {
        let mk = |host: u64, nand: u64| {
            parse_smartctl_json(&json!({
                "logical_block_size": 512,
                "temperature": {"current": 30},
                "ata_smart_attributes": {"table": [
                    {"id": 241, "name": "Total_LBAs_Written", "raw": {"value": host}},
                    {"id": 249, "name": "NAND_Writes_1GiB", "raw": {"value": nand}},
                    {"id": 187, "name": "Reported_Uncorrect", "raw": {"value": 0}}
                ]}
            }))
        };
        let b = mk(0, 0);
        let a = mk(2 * 1024 * 1024 * 2, 6); // 2 GiB host in 512 B LBAs, 6 GiB NAND
        let d = delta(&b, &a);
        assert_eq!(d.host_write_bytes, Some(2 << 30));
        assert_eq!(d.nand_write_bytes, Some(6 << 30));
        assert!((d.write_amplification.unwrap() - 3.0).abs() < 1e-12);
    }

    #[test]
    fn unreadable_device_says_why() {
        let s = parse_smartctl_json(&json!({
            "smartctl": {"messages": [{"string": "/dev/loop0: Unable to detect device type", "severity": "error"}], "exit_status": 1}
        }));
        assert!(!s.available);
        assert!(s
            .note
            .as_deref()
            .unwrap()
            .contains("Unable to detect device type"));
        let d = delta(&s, &s);
        assert!(!d.available);
        assert!(d.note.unwrap().contains("Unable"));
    }

    #[test]
    fn files_on_tmpfs_or_loop_have_no_disk() {
        // /dev/shm is tmpfs on Linux: no block device behind it.
        if Path::new("/dev/shm").is_dir() {
            let e = disk_for_path(Path::new("/dev/shm")).unwrap_err();
            assert!(matches!(e, NoDisk::NotBlock { .. }), "{e}");
            assert!(e.to_string().contains("not a block device"), "{e}");
        }
        if Path::new("/dev/loop0").exists() {
            let e = disk_for_path(Path::new("/dev/loop0")).unwrap_err();
            assert!(matches!(e, NoDisk::Loop(ref n) if n == "loop0"), "{e}");
            assert!(e.to_string().contains("loop device"), "{e}");
        }
    }
}
