//! The recording loop: set up a private instance, read every CPU's ring buffer in
//! page-sized reads, decode, merge, pair, hand I/Os to a sink, tear everything down.

use crate::block::{kernel_dev, BlockDecoder, BlockEvent};
use crate::format::EventFormat;
use crate::pair::{Merger, PairConfig, PairStats, PairedIo, Pairer};
use crate::ringbuf::{decode_page, EventHeaderLayout, LayoutError, MissedEvents, PageLayout};
use crate::tracefs::{CpuStats, Instance, Tracefs};
use crate::RecordError;
use std::fs::{self, File};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The device to record, from its block special file and sysfs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    pub path: PathBuf,
    pub major: u32,
    pub minor: u32,
    /// Kernel dev_t as the block events carry it (the whole disk's, for a partition).
    pub kernel_dev: u32,
    pub capacity_bytes: Option<u64>,
    pub logical_block_bytes: Option<u32>,
    /// Set when the device is a partition: requests carry the disk's device number and
    /// absolute sectors, so the recorder keeps those inside the partition's range (and
    /// every flush: flushes are disk-wide) and writes offsets from its start.
    pub partition: Option<PartitionRange>,
}

/// Where a partition lies on its disk, in 512-byte sectors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionRange {
    /// The whole disk, e.g. `/dev/sda`.
    pub disk: PathBuf,
    pub start_sector: u64,
    pub sectors: u64,
}

impl PartitionRange {
    pub fn end_sector(&self) -> u64 {
        self.start_sector + self.sectors
    }
}

impl DeviceInfo {
    /// "major,minor", the device name written to the trace.
    pub fn name(&self) -> String {
        format!("{},{}", self.major, self.minor)
    }
}

/// Looks up a block device. A partition is recorded through its disk (requests carry
/// the disk's device number and absolute sectors), limited to the partition's sectors.
pub fn device_info(path: &Path) -> Result<DeviceInfo, RecordError> {
    let md = fs::metadata(path).map_err(|source| match source.kind() {
        io::ErrorKind::NotFound => RecordError::NoSuchDevice {
            path: path.to_owned(),
        },
        _ => RecordError::Io {
            what: "looking up device".into(),
            path: path.to_owned(),
            source,
        },
    })?;
    if !md.file_type().is_block_device() {
        return Err(RecordError::NotBlockDevice {
            path: path.to_owned(),
        });
    }
    let rdev = md.rdev();
    let major = libc::major(rdev);
    let minor = libc::minor(rdev);
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let read_num = |p: PathBuf| -> Option<u64> { fs::read_to_string(p).ok()?.trim().parse().ok() };
    let sysfs_err = |what: &str, p: PathBuf| RecordError::Io {
        what: format!("reading {what} of {} from", path.display()),
        path: p,
        source: io::Error::new(io::ErrorKind::InvalidData, "missing or not a number"),
    };
    let (partition, kernel_dev) = if sys.join("partition").exists() {
        let disk_sys = sys.join("..");
        let start_sector =
            read_num(sys.join("start")).ok_or_else(|| sysfs_err("start", sys.join("start")))?;
        let sectors =
            read_num(sys.join("size")).ok_or_else(|| sysfs_err("size", sys.join("size")))?;
        let disk_dev = fs::read_to_string(disk_sys.join("dev"))
            .ok()
            .and_then(|t| {
                let (a, b) = t.trim().split_once(':')?;
                Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?))
            })
            .ok_or_else(|| sysfs_err("the disk's device number", disk_sys.join("dev")))?;
        let disk = fs::canonicalize(&disk_sys)
            .ok()
            .and_then(|p| {
                p.file_name()
                    .map(|n| PathBuf::from(format!("/dev/{}", n.to_string_lossy())))
            })
            .unwrap_or_else(|| PathBuf::from("the whole disk"));
        let range = PartitionRange {
            disk,
            start_sector,
            sectors,
        };
        (Some(range), kernel_dev(disk_dev.0, disk_dev.1))
    } else {
        (None, kernel_dev(major, minor))
    };
    // A partition's queue settings are its disk's.
    let queue = if partition.is_some() {
        sys.join("../queue")
    } else {
        sys.join("queue")
    };
    Ok(DeviceInfo {
        path: path.to_owned(),
        major,
        minor,
        kernel_dev,
        capacity_bytes: read_num(sys.join("size")).map(|s| s * 512),
        logical_block_bytes: read_num(queue.join("logical_block_size")).map(|b| b as u32),
        partition,
    })
}

impl DeviceInfo {
    /// The kernel filter for the block events of this device.
    pub fn event_filter(&self) -> String {
        match &self.partition {
            None => format!("dev == {}", self.kernel_dev),
            Some(p) => format!(
                "dev == {} && ((sector >= {} && sector < {}) || nr_sector == 0)",
                self.kernel_dev,
                p.start_sector,
                p.end_sector()
            ),
        }
    }

    /// The same test in user space (when the kernel refused the filter).
    pub fn wants(&self, ev: &BlockEvent) -> bool {
        if ev.dev() != self.kernel_dev {
            return false;
        }
        let Some(p) = &self.partition else {
            return true;
        };
        let (sector, nr_sector) = match ev {
            BlockEvent::Issue(i) => (i.sector, i.nr_sector),
            BlockEvent::Complete(c) | BlockEvent::Requeue(c) => (c.sector, c.nr_sector),
        };
        nr_sector == 0 || (p.start_sector..p.end_sector()).contains(&sector)
    }

    /// Byte offset on the disk of this device's offset 0.
    pub fn offset_base_bytes(&self) -> u64 {
        self.partition.as_ref().map_or(0, |p| p.start_sector * 512)
    }
}

/// How to record.
#[derive(Clone, Debug)]
pub struct RecordOptions {
    /// Stop after this long (`None`: until the stop flag is set).
    pub duration: Option<Duration>,
    /// Ring buffer per CPU, KiB.
    pub buffer_kib_per_cpu: u32,
    /// Sleep between read passes.
    pub poll_interval: Duration,
    /// How far behind "now" the merge waits for events of other CPUs.
    pub merge_slack: Duration,
    /// Bound on events waiting in the per-CPU merge.
    pub max_merge_events: usize,
    pub pair: PairConfig,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            duration: None,
            buffer_kib_per_cpu: 16 * 1024,
            poll_interval: Duration::from_millis(10),
            merge_slack: Duration::from_millis(100),
            max_merge_events: 4 << 20,
            pair: PairConfig::default(),
        }
    }
}

/// What a recording saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordSummary {
    /// CLOCK_MONOTONIC ns when tracing was switched on: time 0 of the trace.
    pub start_mono_ns: u64,
    /// CLOCK_MONOTONIC ns when tracing was switched off.
    pub end_mono_ns: u64,
    pub cpus: usize,
    pub pages_read: u64,
    pub bytes_read: u64,
    pub events_decoded: u64,
    /// Block events of other devices (only when the kernel filter could not be set).
    pub events_other_device: u64,
    /// Events of unknown ids or too short for their fields.
    pub events_undecodable: u64,
    /// Pages that did not decode cleanly (their good events were kept).
    pub page_errors: u64,
    /// Events lost as the pages' commit flags say (stored counts).
    pub lost_events_pages: u64,
    /// Pages flagged as following lost events without a count.
    pub lost_marks_without_count: u64,
    /// Per-CPU kernel counters at the end.
    pub cpu_stats: Vec<CpuStats>,
    /// The kernel filter `dev == N` was accepted.
    pub kernel_filter: bool,
    pub merge_forced: u64,
    pub pair: PairStats,
    pub ios_written: u64,
    /// CPU time of the whole process (all threads, the sink's included) from
    /// [`Recorder::start`] to the end of [`Recorder::run`], ns.
    pub process_cpu_ns: u64,
}

impl RecordSummary {
    /// Events the kernel lost (overrun, commit overrun, dropped), over all CPUs.
    pub fn lost_events_kernel(&self) -> u64 {
        self.cpu_stats.iter().map(CpuStats::lost).sum()
    }

    pub fn duration_ns(&self) -> u64 {
        self.end_mono_ns.saturating_sub(self.start_mono_ns)
    }
}

/// CPU time of this process, all threads, ns.
pub fn process_cpu_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub fn monotonic_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The sink's error.
pub type SinkError = Box<dyn std::error::Error + Send + Sync>;

/// Hands I/Os to the caller's sink; after its first error, drops the rest.
struct SinkState<'a, F: FnMut(&PairedIo) -> Result<(), SinkError>> {
    sink: &'a mut F,
    /// Subtracted from offsets (a partition's start on its disk).
    offset_base_bytes: u64,
    err: Option<SinkError>,
    written: u64,
}

impl<F: FnMut(&PairedIo) -> Result<(), SinkError>> SinkState<'_, F> {
    fn emit(&mut self, mut io: PairedIo) {
        // Only flushes (offset 0) may lie before a partition's start.
        assert!(io.offset_bytes >= self.offset_base_bytes || io.op == storbench_trace::Op::Flush);
        io.offset_bytes = io.offset_bytes.saturating_sub(self.offset_base_bytes);
        if self.err.is_none() {
            match (self.sink)(&io) {
                Ok(()) => self.written += 1,
                Err(e) => self.err = Some(e),
            }
        }
    }
}

/// A recording in progress: tracing is on from [`Recorder::start`] until
/// [`Recorder::run`] returns or the recorder is dropped.
pub struct Recorder {
    // Field order matters: the readers close before the instance is removed, and the
    // instance before tracefs is unmounted (inside Instance).
    readers: Vec<(usize, File)>,
    instance: Instance,
    device: DeviceInfo,
    opts: RecordOptions,
    layout: PageLayout,
    header: EventHeaderLayout,
    decoder: BlockDecoder,
    subbuf_bytes: usize,
    /// Process CPU time when `start` switched tracing on, ns.
    start_cpu_ns: u64,
    summary: RecordSummary,
}

fn read_format(tracefs: &Tracefs, rel: &str) -> Result<EventFormat, RecordError> {
    let text = tracefs.read(rel)?;
    EventFormat::parse(&text).map_err(|e| RecordError::Format {
        path: tracefs.root().join(rel),
        line: e.line,
        message: e.message,
    })
}

/// Sets the device filter on the block events and enables them; false when the kernel
/// refused the filter (events of every device then arrive and are filtered here).
fn enable_events(instance: &Instance, filter: &str, requeue: bool) -> Result<bool, RecordError> {
    let mut events = vec!["block_rq_issue", "block_rq_complete"];
    if requeue {
        events.push("block_rq_requeue");
    }
    let mut kernel_filter = true;
    for ev in &events {
        if instance
            .write(&format!("events/block/{ev}/filter"), filter)
            .is_err()
        {
            kernel_filter = false;
        }
    }
    if !kernel_filter {
        for ev in &events {
            let _ = instance.write(&format!("events/block/{ev}/filter"), "0");
        }
    }
    for ev in &events {
        instance.write(&format!("events/block/{ev}/enable"), "1")?;
    }
    Ok(kernel_filter)
}

/// Opens every online CPU's raw ring buffer, non-blocking, in CPU order.
fn open_cpu_buffers(instance: &Instance) -> Result<Vec<(usize, File)>, RecordError> {
    let mut readers = Vec::new();
    let per_cpu = instance.path("per_cpu");
    let rd = fs::read_dir(&per_cpu).map_err(|source| RecordError::Io {
        what: "listing".into(),
        path: per_cpu.clone(),
        source,
    })?;
    let mut cpus: Vec<usize> = rd
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("cpu")?.parse().ok())
        .collect();
    cpus.sort_unstable();
    for cpu in cpus {
        let p = per_cpu.join(format!("cpu{cpu}/trace_pipe_raw"));
        match fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&p)
        {
            Ok(f) => readers.push((cpu, f)),
            // Possible but offline CPUs.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENODEV | libc::ENOENT)) => {}
            Err(source) => {
                return Err(RecordError::Io {
                    what: "opening".into(),
                    path: p,
                    source,
                })
            }
        }
    }
    if readers.is_empty() {
        return Err(RecordError::NoTracefs {
            detail: format!("no per-CPU buffers under {}", per_cpu.display()),
        });
    }
    Ok(readers)
}

impl Recorder {
    /// Instances left by killed recorders that were removed when this one started.
    pub fn cleaned_up(&self) -> &[String] {
        self.instance.cleaned()
    }

    /// Creates the instance, configures it and switches tracing on.
    pub fn start(device: DeviceInfo, opts: RecordOptions) -> Result<Recorder, RecordError> {
        assert!(opts.buffer_kib_per_cpu > 0 && opts.max_merge_events > 0);
        let tracefs = Tracefs::open()?;
        if !tracefs.root().join("events/block/block_rq_issue").is_dir() {
            return Err(RecordError::NoBlockEvents {
                path: tracefs.root().join("events/block"),
            });
        }
        let fmt_err = |rel: &str, e: LayoutError| RecordError::Format {
            path: tracefs.root().join(rel),
            line: 0,
            message: e.to_string(),
        };
        let layout = PageLayout::parse(&tracefs.read("events/header_page")?)
            .map_err(|e| fmt_err("events/header_page", e))?;
        let header = EventHeaderLayout::parse(&tracefs.read("events/header_event")?)
            .map_err(|e| fmt_err("events/header_event", e))?;
        let issue = read_format(&tracefs, "events/block/block_rq_issue/format")?;
        let complete = read_format(&tracefs, "events/block/block_rq_complete/format")?;
        let requeue = read_format(&tracefs, "events/block/block_rq_requeue/format").ok();
        let decoder = BlockDecoder::new(&issue, &complete, requeue.as_ref())
            .map_err(|e| fmt_err("events/block/block_rq_issue/format", e))?;

        let instance = Instance::create(tracefs)?;
        instance.write("tracing_on", "0")?;
        instance.write("trace_clock", "mono")?;
        instance.write("buffer_size_kb", &opts.buffer_kib_per_cpu.to_string())?;
        // Keep the oldest events when the buffer is full (the kernel counts drops).
        if instance.exists("options/overwrite") {
            instance.write("options/overwrite", "0")?;
        }
        let subbuf_bytes = instance
            .read("buffer_subbuf_size_kb")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .map(|kb| kb * 1024)
            .unwrap_or_else(rustix::param::page_size);
        assert!(subbuf_bytes >= layout.data_offset);

        let kernel_filter = enable_events(&instance, &device.event_filter(), requeue.is_some())?;
        let readers = open_cpu_buffers(&instance)?;

        let start_cpu_ns = process_cpu_ns();
        let summary = RecordSummary {
            cpus: readers.len(),
            kernel_filter,
            start_mono_ns: monotonic_ns(),
            ..RecordSummary::default()
        };
        instance.write("tracing_on", "1")?;
        Ok(Recorder {
            readers,
            instance,
            device,
            opts,
            layout,
            header,
            decoder,
            subbuf_bytes,
            start_cpu_ns,
            summary,
        })
    }

    pub fn start_mono_ns(&self) -> u64 {
        self.summary.start_mono_ns
    }

    pub fn device(&self) -> &DeviceInfo {
        &self.device
    }

    /// The tracing instance directory (for tests and messages).
    pub fn instance_dir(&self) -> &Path {
        self.instance.dir()
    }

    /// Reads until `stop` is set or the duration has passed, hands every I/O of the
    /// device to `sink` in issue order, then switches tracing off, reads what is left
    /// and removes the instance (also when this returns an error).
    pub fn run(
        mut self,
        stop: &AtomicBool,
        mut sink: impl FnMut(&PairedIo) -> Result<(), SinkError>,
    ) -> Result<RecordSummary, RecordError> {
        let ncpu = self.readers.len();
        let mut merger: Merger<BlockEvent> = Merger::new(ncpu, self.opts.max_merge_events);
        let mut pairer = Pairer::new(self.opts.pair);
        let mut buf = vec![0u8; self.subbuf_bytes];
        let deadline = self
            .opts
            .duration
            .map(|d| self.summary.start_mono_ns + d.as_nanos() as u64);
        let slack = self.opts.merge_slack.as_nanos() as u64;
        let mut out = SinkState {
            sink: &mut sink,
            offset_base_bytes: self.device.offset_base_bytes(),
            err: None,
            written: 0,
        };
        let buffer_bytes = u64::from(self.opts.buffer_kib_per_cpu) * 1024;
        let mut last_pass_start = self.summary.start_mono_ns;
        let mut last_nap = Duration::from_micros(500);
        loop {
            let pass_start = monotonic_ns();
            let busiest =
                self.read_all(&mut buf, &mut merger, &mut pairer, &mut |io| out.emit(io))? as u64;
            let watermark = pass_start.saturating_sub(slack);
            merger.drain_until(watermark, &mut |ts, ev| {
                pairer.push(ts, ev, &mut |io| out.emit(io))
            });
            pairer.expire(watermark, &mut |io| out.emit(io));
            if out.err.is_some() {
                break;
            }
            let now = monotonic_ns();
            if stop.load(Ordering::SeqCst) || deadline.is_some_and(|d| now >= d) {
                break;
            }
            // The nap doubles from 1 ms up to the poll interval while events come
            // slowly, and shrinks at once so that the busiest CPU's buffer is read again
            // before it is a quarter full at the rate it filled since the last pass (a
            // small buffer, or a burst, would otherwise overflow while the reader
            // sleeps). Starting short matters: a workload may be running already.
            let mut nap = (last_nap * 2).min(self.opts.poll_interval);
            if busiest > 0 {
                let interval_ns = pass_start.saturating_sub(last_pass_start).max(1);
                let fill_quarter_ns = (u128::from(interval_ns) * u128::from(buffer_bytes / 4)
                    / u128::from(busiest)) as u64;
                nap = nap.min(Duration::from_nanos(fill_quarter_ns));
            }
            last_pass_start = pass_start;
            last_nap = nap.max(Duration::from_micros(100));
            if let Some(d) = deadline {
                nap = nap.min(Duration::from_nanos(d.saturating_sub(now)));
            }
            std::thread::sleep(nap);
        }
        self.instance.write("tracing_on", "0")?;
        self.summary.end_mono_ns = monotonic_ns();
        // What was written before tracing went off is still in the buffers.
        self.read_all(&mut buf, &mut merger, &mut pairer, &mut |io| out.emit(io))?;
        merger.drain_all(&mut |ts, ev| pairer.push(ts, ev, &mut |io| out.emit(io)));
        pairer.finish(&mut |io| out.emit(io));
        if let Some(e) = out.err {
            return Err(RecordError::Sink(e));
        }
        let written = out.written;
        for (cpu, _) in &self.readers {
            let stats = self
                .instance
                .read(&format!("per_cpu/cpu{cpu}/stats"))
                .map(|t| CpuStats::parse(&t))
                .unwrap_or_default();
            self.summary.cpu_stats.push(stats);
        }
        self.summary.merge_forced = merger.forced();
        self.summary.pair = pairer.stats();
        self.summary.ios_written = written;
        self.summary.process_cpu_ns = process_cpu_ns().saturating_sub(self.start_cpu_ns);
        Ok(self.summary.clone())
    }

    /// Reads every CPU's buffer until it is empty, pushing decoded events to the merge;
    /// the most bytes read from one CPU.
    fn read_all(
        &mut self,
        buf: &mut [u8],
        merger: &mut Merger<BlockEvent>,
        pairer: &mut Pairer,
        emit: &mut impl FnMut(PairedIo),
    ) -> Result<usize, RecordError> {
        let mut busiest = 0;
        for idx in 0..self.readers.len() {
            let mut cpu_bytes = 0;
            loop {
                let n = match self.readers[idx].1.read(buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(source) => {
                        return Err(RecordError::Io {
                            what: "reading".into(),
                            path: self.instance.path(&format!(
                                "per_cpu/cpu{}/trace_pipe_raw",
                                self.readers[idx].0
                            )),
                            source,
                        })
                    }
                };
                self.summary.pages_read += 1;
                self.summary.bytes_read += n as u64;
                cpu_bytes += n;
                self.decode(idx, &buf[..n], merger, pairer, emit);
            }
            busiest = busiest.max(cpu_bytes);
        }
        Ok(busiest)
    }

    fn decode(
        &mut self,
        cpu_idx: usize,
        page: &[u8],
        merger: &mut Merger<BlockEvent>,
        pairer: &mut Pairer,
        emit: &mut impl FnMut(PairedIo),
    ) {
        let events = match decode_page(page, &self.layout, &self.header) {
            Ok(ev) => ev,
            Err(_) => {
                self.summary.page_errors += 1;
                return;
            }
        };
        match events.header().missed {
            MissedEvents::None => {}
            MissedEvents::Unknown => self.summary.lost_marks_without_count += 1,
            MissedEvents::Count(n) => self.summary.lost_events_pages += n,
        }
        let s = &mut self.summary;
        for ev in events {
            let raw = match ev {
                Ok(raw) => raw,
                Err(_) => {
                    s.page_errors += 1;
                    break;
                }
            };
            match self.decoder.decode(raw.payload) {
                Some(bev) if self.device.wants(&bev) => {
                    s.events_decoded += 1;
                    merger.push(cpu_idx, raw.ts, bev, &mut |ts, ev| {
                        pairer.push(ts, ev, emit)
                    });
                }
                Some(_) => s.events_other_device += 1,
                None => s.events_undecodable += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{Complete, Issue};

    fn partition() -> DeviceInfo {
        DeviceInfo {
            path: "/dev/sda2".into(),
            major: 8,
            minor: 2,
            kernel_dev: kernel_dev(8, 0),
            capacity_bytes: Some(1000 * 512),
            logical_block_bytes: Some(512),
            partition: Some(PartitionRange {
                disk: "/dev/sda".into(),
                start_sector: 2048,
                sectors: 1000,
            }),
        }
    }

    fn issue(dev: u32, sector: u64, nr_sector: u32) -> BlockEvent {
        BlockEvent::Issue(Issue {
            dev,
            sector,
            nr_sector,
            bytes: None,
            rwbs: None,
            comm: Default::default(),
            pid: 1,
        })
    }

    #[test]
    fn a_partition_wants_its_sectors_and_every_flush_of_its_disk() {
        let p = partition();
        let sda = kernel_dev(8, 0);
        assert_eq!(
            p.event_filter(),
            format!("dev == {sda} && ((sector >= 2048 && sector < 3048) || nr_sector == 0)")
        );
        assert!(p.wants(&issue(sda, 2048, 8)));
        assert!(p.wants(&issue(sda, 3047, 1)));
        assert!(!p.wants(&issue(sda, 3048, 8)), "the next partition");
        assert!(!p.wants(&issue(sda, 2047, 1)));
        assert!(!p.wants(&issue(kernel_dev(8, 16), 2048, 8)), "another disk");
        assert!(p.wants(&issue(sda, 0, 0)), "a flush");
        let flush_done = BlockEvent::Complete(Complete {
            dev: sda,
            sector: u64::MAX,
            nr_sector: 0,
            error: 0,
            rwbs: None,
        });
        assert!(p.wants(&flush_done));
        assert_eq!(p.offset_base_bytes(), 2048 * 512);
        let disk = DeviceInfo {
            partition: None,
            ..partition()
        };
        assert_eq!(disk.event_filter(), format!("dev == {sda}"));
        assert!(disk.wants(&issue(sda, 3048, 8)));
        assert_eq!(disk.offset_base_bytes(), 0);
    }
}
