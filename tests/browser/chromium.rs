//! Opens a generated report in headless Chromium and reads back what the page's own
//! script wrote into `#sb-verify` (charts drawn, series per chart, errors captured).
//!
//! Shared by the browser tests (included with `#[path]`). Needs Debian's `chromium`
//! package; [`find_chromium`] returns `None` when it is absent so tests can skip.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The Chromium binary: `$STORBENCH_CHROMIUM`, else the first of `chromium`,
/// `chromium-browser`, `google-chrome` on PATH.
pub fn find_chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("STORBENCH_CHROMIUM") {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let c = dir.join(name);
            if c.is_file() {
                return Some(c);
            }
        }
    }
    None
}

/// What one headless run printed.
pub struct Run {
    pub stdout: String,
    pub stderr: String,
}

/// Runs Chromium headless on `page` with a fresh profile under `work`, no network
/// (every host name resolves to nothing), and `extra` arguments. Killed after `limit`.
///
/// Each call has its own directory under `work` for the profile and the output files.
/// Regression (flaky audit after CI stop 12): they were named by process id only, so
/// two tests of one binary running Chromium at once (cargo runs a binary's tests on
/// several threads) would have shared a profile (the second Chromium hands its page to
/// the first and exits) and overwritten each other's output.
pub fn run(chromium: &Path, page: &Path, work: &Path, extra: &[String], limit: Duration) -> Run {
    let call = tempfile::Builder::new()
        .prefix("chromium-")
        .tempdir_in(work)
        .expect("create a chromium directory");
    let profile = call.path().join("profile");
    std::fs::create_dir_all(&profile).expect("create chromium profile dir");
    let url = format!(
        "file://{}",
        page.canonicalize().expect("report path").display()
    );
    let out_path = call.path().join("chromium.stdout");
    let err_path = call.path().join("chromium.stderr");
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(&url)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .expect("start chromium");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait chromium").is_some() {
            break;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {limit:?} on {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Run {
        stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
    }
}

/// The text of `<pre id="sb-verify">` in a dumped DOM, unescaped.
pub fn verify_json(dom: &str) -> Option<String> {
    let start = dom.find("id=\"sb-verify\"")?;
    let open_end = start + dom[start..].find('>')? + 1;
    let close = open_end + dom[open_end..].find("</pre>")?;
    let text = &dom[open_end..close];
    Some(
        text.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&nbsp;", "\u{a0}")
            .replace("&amp;", "&"),
    )
}

/// Console messages Chromium logged at error level, or uncaught exceptions.
pub fn console_errors(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") && (l.contains("ERROR") || l.contains("Uncaught")))
        .map(|l| l.to_string())
        .collect()
}
