//! The results catalogue: many drives' results in one SQLite file, so a reviewer
//! builds a bench of drives over months and reports from it.
//!
//! Each entry keeps the result.json text as written (`result_json`), the report's view
//! of it (`view_json`, which carries the per-second IOPS so a report needs nothing
//! else), the columns a reviewer selects by (`drive`, `capacity_bytes`, `spare_area`,
//! `state`, `workload`, `procedure`, `date`), and its key scores in `scores`, so
//! "every drive on heavy-2011, seasoned" is one query:
//! `storbench db report --where "workload = 'heavy-2011' AND state = 'seasoned'"`.

use crate::html::view::RunView;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("results catalogue {path}: {context}: {source}")]
    Sql {
        path: PathBuf,
        context: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("creating the directory of {path}: {source}")]
    Dir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("results catalogue {path}: no entry {id} (see `storbench db list`)")]
    NotFound { path: PathBuf, id: i64 },
    #[error("{path} is not a storbench catalogue ({why}); storbench does not write into it")]
    NotACatalogue { path: PathBuf, why: String },
    /// A path storbench refuses to open as the catalogue (a device, a link): the
    /// refusal of `storbench_trace::atomic`.
    #[error("results catalogue: {0}")]
    Refused(#[source] std::io::Error),
    #[error("results catalogue {path}: entry {id}: stored view does not read back: {message}")]
    Corrupt {
        path: PathBuf,
        id: i64,
        message: String,
    },
}

/// The catalogue's `PRAGMA application_id` ("SBNC"): set on the catalogues storbench
/// makes, so another program's database is never taken for one.
pub const APPLICATION_ID: i64 = 0x5342_4E43;

/// The first 16 bytes of every SQLite database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// What may be opened as the catalogue: nothing yet (made here), or an SQLite file.
/// Never a device (SQLite took a block device, whose size reads as 0, for an empty
/// database and wrote its first page over an ext4 superblock), a link or a FIFO,
/// nor a file that is not an SQLite database.
fn check_path(path: &Path) -> Result<(), DbError> {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    use storbench_trace::atomic::{Refusal, Why};
    let refuse = |why| DbError::Refused(Refusal::new(path, why).into_io());
    let md = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(DbError::Dir {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let t = md.file_type();
    if t.is_symlink() {
        let to = std::fs::read_link(path).unwrap_or_default();
        return Err(refuse(Why::Symlink(to)));
    }
    if t.is_block_device() {
        return Err(refuse(Why::BlockDevice));
    }
    if !t.is_file() {
        let kind = if t.is_dir() {
            "directory"
        } else if t.is_char_device() {
            "character device"
        } else if t.is_fifo() {
            "FIFO"
        } else {
            "special file"
        };
        return Err(refuse(Why::NotAFile(kind)));
    }
    if md.len() == 0 {
        return Ok(());
    }
    let mut head = [0u8; 16];
    let read = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head));
    if read.is_err() || &head != SQLITE_MAGIC {
        return Err(DbError::NotACatalogue {
            path: path.to_path_buf(),
            why: "not an SQLite database".into(),
        });
    }
    Ok(())
}

/// An opened database is a catalogue: storbench's application id, or (catalogues
/// made before it was set) no id and a `results` table of ours, or no table at all.
/// Returns its application id.
fn check_ours(conn: &Connection, path: &Path) -> Result<i64, DbError> {
    let sql = |source| DbError::Sql {
        path: path.to_path_buf(),
        context: "checking it is a storbench catalogue".into(),
        source,
    };
    let app: i64 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(sql)?;
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )
        .map_err(sql)?;
    let ours: i64 = conn
        .query_row(
            "SELECT count(*) FROM pragma_table_info('results') WHERE name = 'result_json'",
            [],
            |r| r.get(0),
        )
        .map_err(sql)?;
    let why = match app {
        APPLICATION_ID => return Ok(app),
        0 if tables == 0 || ours == 1 => return Ok(app),
        0 => "an SQLite database of another program".to_string(),
        other => format!("an SQLite database of another program, application id {other:#x}"),
    };
    Err(DbError::NotACatalogue {
        path: path.to_path_buf(),
        why,
    })
}

/// The catalogue's schema version (`PRAGMA user_version`). Version 1 catalogues are
/// upgraded in place when opened (columns added, capacity filled from the stored view).
pub const SCHEMA_VERSION: i64 = 2;

/// Columns version 2 added to `results`, with their SQL types.
const V2_COLUMNS: [(&str, &str); 5] = [
    ("capacity_bytes", "INTEGER NOT NULL DEFAULT 0"),
    ("spare_area", "TEXT NOT NULL DEFAULT ''"),
    ("state", "TEXT NOT NULL DEFAULT ''"),
    ("workload", "TEXT NOT NULL DEFAULT ''"),
    ("date", "TEXT NOT NULL DEFAULT ''"),
];

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY,
    added_unix_s INTEGER NOT NULL,
    source TEXT NOT NULL,
    drive TEXT NOT NULL,
    setting TEXT NOT NULL,
    procedure TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    result_json TEXT NOT NULL,
    view_json TEXT NOT NULL,
    capacity_bytes INTEGER NOT NULL DEFAULT 0,
    spare_area TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL DEFAULT '',
    workload TEXT NOT NULL DEFAULT '',
    date TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS scores (
    result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (result_id, name)
);
";

/// One catalogue entry as listed.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub id: i64,
    pub added_unix_s: i64,
    pub source: String,
    pub drive: String,
    pub setting: String,
    pub procedure: String,
    pub tool_version: String,
    pub capacity_bytes: u64,
    pub state: String,
    pub workload: String,
    /// When the run started (UTC), empty when unknown.
    pub date: String,
    /// Key scores, by name (see [`key_scores`]).
    pub scores: Vec<(String, f64)>,
}

/// What [`Catalogue::add`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Added {
    New(i64),
    /// The same result.json was already stored under this id.
    AlreadyThere(i64),
}

/// The key scores stored for a run (names carry their units).
pub fn key_scores(r: &RunView) -> Vec<(String, f64)> {
    let mut v = Vec::new();
    if let Some(c) = &r.consistency {
        v.push(("iops_avg_last400".to_string(), c.avg_iops_last400));
        v.push(("iops_std_last400".to_string(), c.std_iops_last400));
        v.push(("iops_min".to_string(), c.min_iops));
    }
    if let Some(b) = &r.bench {
        v.push(("data_rate_mb_s".to_string(), b.data_rate_mb_s));
        v.push(("service_us_mean".to_string(), b.service_us_mean));
        v.push(("service_us_std".to_string(), b.service_us_std));
        v.push(("busy_s".to_string(), b.busy_s));
    }
    if let Some(t) = &r.trim {
        v.push(("trim_clean_mb_s".to_string(), t.clean_mb_s));
        v.push(("trim_dirty_mb_s".to_string(), t.dirty_mb_s));
        v.push(("trim_after_mb_s".to_string(), t.after_trim_mb_s));
    }
    v.retain(|s| s.1.is_finite());
    v
}

pub struct Catalogue {
    conn: Connection,
    path: PathBuf,
}

impl Catalogue {
    /// `$XDG_DATA_HOME/storbench/results.db`, else `~/.local/share/storbench/results.db`.
    pub fn default_path() -> Option<PathBuf> {
        if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|x| !x.is_empty()) {
            return Some(PathBuf::from(x).join("storbench").join("results.db"));
        }
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
        Some(PathBuf::from(home).join(".local/share/storbench/results.db"))
    }

    /// Opens (creating if needed) the catalogue at `path`.
    pub fn open(path: &Path) -> Result<Catalogue, DbError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| DbError::Dir {
                path: path.to_path_buf(),
                source,
            })?;
        }
        let sql = |context: &str| {
            let path = path.to_path_buf();
            let context = context.to_string();
            move |source| DbError::Sql {
                path,
                context,
                source,
            }
        };
        check_path(path)?;
        let flags = rusqlite::OpenFlags::default() | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let conn = Connection::open_with_flags(path, flags).map_err(sql("opening"))?;
        let app = check_ours(&conn, path)?;
        conn.execute_batch("PRAGMA foreign_keys = ON;")
            .map_err(sql("enabling foreign keys"))?;
        conn.execute_batch(SCHEMA)
            .map_err(sql("creating the schema"))?;
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sql("reading the schema version"))?;
        if version == 1 {
            for (name, ty) in V2_COLUMNS {
                conn.execute_batch(&format!("ALTER TABLE results ADD COLUMN {name} {ty};"))
                    .map_err(sql("upgrading the schema to version 2"))?;
            }
            conn.execute_batch(
                "UPDATE results SET spare_area = setting, \
                 capacity_bytes = coalesce(json_extract(view_json, '$.target.capacity_bytes'), 0);",
            )
            .map_err(sql("upgrading the schema to version 2"))?;
        }
        if app != APPLICATION_ID {
            conn.execute_batch(&format!("PRAGMA application_id = {APPLICATION_ID};"))
                .map_err(sql("setting the application id"))?;
        }
        if version < SCHEMA_VERSION {
            conn.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION};"))
                .map_err(sql("setting the schema version"))?;
        }
        Ok(Catalogue {
            conn,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, context: &str) -> impl FnOnce(rusqlite::Error) -> DbError {
        let path = self.path.clone();
        let context = context.to_string();
        move |source| DbError::Sql {
            path,
            context,
            source,
        }
    }

    /// Stores a run; a result.json already stored (same text) is not stored twice.
    pub fn add(
        &mut self,
        view: &RunView,
        result_json: &str,
        now_unix_s: i64,
    ) -> Result<Added, DbError> {
        let existing: Option<i64> = self
            .conn
            .query_row(
                "SELECT id FROM results WHERE result_json = ?1",
                params![result_json],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.err("looking for the same result"))?;
        if let Some(id) = existing {
            return Ok(Added::AlreadyThere(id));
        }
        let view_json = serde_json::to_string(view).expect("a view serializes");
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|source| DbError::Sql {
            path: path.clone(),
            context: "starting a transaction".into(),
            source,
        })?;
        let sql = |context: &str| {
            let path = path.clone();
            let context = context.to_string();
            move |source| DbError::Sql {
                path,
                context,
                source,
            }
        };
        tx.execute(
            "INSERT INTO results (added_unix_s, source, drive, setting, procedure, tool_version, result_json, view_json,
                                  capacity_bytes, spare_area, state, workload, date)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![now_unix_s, view.source, view.drive, view.setting, view.procedure, view.tool_version, result_json, view_json,
                    view.target.capacity_bytes as i64, view.setting, view.state, view.workload, view.date.clone().unwrap_or_default()],
        )
        .map_err(sql("adding the result"))?;
        let id = tx.last_insert_rowid();
        for (name, value) in key_scores(view) {
            tx.execute(
                "INSERT INTO scores (result_id, name, value) VALUES (?1, ?2, ?3)",
                params![id, name, value],
            )
            .map_err(sql("adding scores"))?;
        }
        tx.commit().map_err(sql("committing"))?;
        Ok(Added::New(id))
    }

    /// Every entry, oldest first.
    pub fn list(&self) -> Result<Vec<Entry>, DbError> {
        let mut st = self
            .conn
            .prepare("SELECT id, added_unix_s, source, drive, setting, procedure, tool_version, capacity_bytes, state, workload, date FROM results ORDER BY id")
            .map_err(self.err("listing"))?;
        let rows = st
            .query_map([], |r| {
                Ok(Entry {
                    id: r.get(0)?,
                    added_unix_s: r.get(1)?,
                    source: r.get(2)?,
                    drive: r.get(3)?,
                    setting: r.get(4)?,
                    procedure: r.get(5)?,
                    tool_version: r.get(6)?,
                    capacity_bytes: r.get::<_, i64>(7)? as u64,
                    state: r.get(8)?,
                    workload: r.get(9)?,
                    date: r.get(10)?,
                    scores: Vec::new(),
                })
            })
            .map_err(self.err("listing"))?;
        let mut out = Vec::new();
        for e in rows {
            out.push(e.map_err(self.err("listing"))?);
        }
        let mut st = self
            .conn
            .prepare("SELECT name, value FROM scores WHERE result_id = ?1 ORDER BY rowid")
            .map_err(self.err("reading scores"))?;
        for e in &mut out {
            let rows = st
                .query_map(params![e.id], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?))
                })
                .map_err(self.err("reading scores"))?;
            for s in rows {
                e.scores.push(s.map_err(self.err("reading scores"))?);
            }
        }
        Ok(out)
    }

    /// One entry's view and stored result.json.
    pub fn get(&self, id: i64) -> Result<(RunView, String), DbError> {
        let row: Option<(String, String)> = self
            .conn
            .query_row(
                "SELECT view_json, result_json FROM results WHERE id = ?1",
                params![id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(self.err("reading an entry"))?;
        let (view, result) = row.ok_or(DbError::NotFound {
            path: self.path.clone(),
            id,
        })?;
        let view: RunView = serde_json::from_str(&view).map_err(|e| DbError::Corrupt {
            path: self.path.clone(),
            id,
            message: e.to_string(),
        })?;
        Ok((view, result))
    }

    /// The views of `ids` in that order, or of every entry when `ids` is empty.
    pub fn views(&self, ids: &[i64]) -> Result<Vec<RunView>, DbError> {
        let ids: Vec<i64> = if ids.is_empty() {
            self.list()?.iter().map(|e| e.id).collect()
        } else {
            ids.to_vec()
        };
        ids.iter().map(|&id| self.get(id).map(|v| v.0)).collect()
    }

    /// The ids of the entries a SQL condition on `results` selects (its columns: `drive`,
    /// `capacity_bytes`, `spare_area`, `state`, `workload`, `procedure`, `date`, ...),
    /// oldest first. The condition is the user's own SQL on their own catalogue.
    pub fn ids_where(&self, condition: &str) -> Result<Vec<i64>, DbError> {
        let context = format!("the condition `{condition}`");
        let mut st = self
            .conn
            .prepare(&format!(
                "SELECT id FROM results WHERE ({condition}) ORDER BY id"
            ))
            .map_err(self.err(&context))?;
        let rows = st
            .query_map([], |r| r.get::<_, i64>(0))
            .map_err(self.err(&context))?;
        rows.collect::<Result<Vec<i64>, _>>()
            .map_err(self.err(&context))
    }

    /// Removes an entry (and its scores).
    pub fn remove(&mut self, id: i64) -> Result<(), DbError> {
        let n = self
            .conn
            .execute("DELETE FROM results WHERE id = ?1", params![id])
            .map_err(self.err("removing"))?;
        if n == 0 {
            return Err(DbError::NotFound {
                path: self.path.clone(),
                id,
            });
        }
        Ok(())
    }
}

/// The listing as a table (for `storbench db list`).
pub fn list_table(entries: &[Entry]) -> crate::html::Table {
    crate::html::Table {
        id: "catalogue".to_string(),
        section: "catalogue".to_string(),
        title: format!("{} result(s)", entries.len()),
        columns: [
            "id",
            "procedure",
            "drive",
            "capacity",
            "spare area",
            "state",
            "workload",
            "date",
            "key scores",
            "source",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        rows: entries
            .iter()
            .map(|e| {
                vec![
                    e.id.to_string(),
                    e.procedure.clone(),
                    e.drive.clone(),
                    crate::html::view::fmt_bytes(e.capacity_bytes),
                    e.setting.clone(),
                    e.state.clone(),
                    e.workload.clone(),
                    e.date.clone(),
                    e.scores
                        .iter()
                        .map(|(n, v)| format!("{n}={}", crate::html::view::fmt_num(*v)))
                        .collect::<Vec<_>>()
                        .join(" "),
                    e.source.clone(),
                ]
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::sample;

    #[test]
    fn add_list_get_roundtrip_and_no_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/results.db");
        let mut db = Catalogue::open(&path).unwrap();
        let runs = sample::all_runs(50);
        let mut ids = Vec::new();
        for (i, r) in runs.iter().enumerate() {
            let json = format!("{{\"n\":{i}}}");
            match db.add(r, &json, 1_700_000_000 + i as i64).unwrap() {
                Added::New(id) => ids.push(id),
                Added::AlreadyThere(_) => panic!("new result reported as stored"),
            }
        }
        assert_eq!(
            db.add(&runs[0], "{\"n\":0}", 0).unwrap(),
            Added::AlreadyThere(ids[0])
        );
        drop(db);
        let db = Catalogue::open(&path).unwrap();
        let list = db.list().unwrap();
        assert_eq!(list.len(), runs.len());
        assert_eq!(list[0].procedure, "consistency");
        let c = runs[0].consistency.as_ref().unwrap();
        assert_eq!(
            list[0].scores[0],
            ("iops_avg_last400".to_string(), c.avg_iops_last400)
        );
        let (view, json) = db.get(ids[5]).unwrap();
        assert_eq!(view, runs[5]);
        assert_eq!(json, "{\"n\":5}");
        assert_eq!(db.views(&[]).unwrap(), runs);
        assert!(matches!(
            db.get(999),
            Err(DbError::NotFound { id: 999, .. })
        ));
    }

    #[test]
    fn where_selects_by_drive_state_workload_and_capacity() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = Catalogue::open(&dir.path().join("r.db")).unwrap();
        let mut runs = sample::bench_runs();
        runs[1].state = "seasoned".into();
        runs.extend(sample::trim_runs());
        for (i, r) in runs.iter().enumerate() {
            db.add(r, &format!("{{\"n\":{i}}}"), 1).unwrap();
        }
        assert_eq!(
            db.ids_where("workload = 'heavy-2011' AND state = 'seasoned'")
                .unwrap(),
            vec![2]
        );
        assert_eq!(
            db.ids_where("procedure = 'trim-check'").unwrap(),
            vec![3, 4]
        );
        assert_eq!(
            db.ids_where("capacity_bytes > 60e9 AND spare_area = 'Default'")
                .unwrap()
                .len(),
            4
        );
        let e = db.ids_where("no_such_column = 1").unwrap_err().to_string();
        assert!(e.contains("the condition `no_such_column = 1`"), "{e}");
    }

    #[test]
    fn a_version_1_catalogue_is_upgraded_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch(
                "CREATE TABLE results (id INTEGER PRIMARY KEY, added_unix_s INTEGER NOT NULL, source TEXT NOT NULL,
                 drive TEXT NOT NULL, setting TEXT NOT NULL, procedure TEXT NOT NULL, tool_version TEXT NOT NULL,
                 result_json TEXT NOT NULL, view_json TEXT NOT NULL);
                 PRAGMA user_version = 1;",
            )
            .unwrap();
            let r = &sample::trim_runs()[0];
            c.execute(
                "INSERT INTO results (added_unix_s, source, drive, setting, procedure, tool_version, result_json, view_json)
                 VALUES (1, 's', ?1, 'Default', 'trim-check', 'v', '{}', ?2)",
                params![r.drive, serde_json::to_string(r).unwrap()],
            )
            .unwrap();
        }
        let db = Catalogue::open(&path).unwrap();
        assert_eq!(
            db.ids_where("capacity_bytes = 68719476736 AND spare_area = 'Default'")
                .unwrap(),
            vec![1]
        );
        let v: i64 = db
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, SCHEMA_VERSION);
    }

    #[test]
    fn remove_drops_entry_and_scores() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = Catalogue::open(&dir.path().join("r.db")).unwrap();
        let r = &sample::trim_runs()[0];
        let Added::New(id) = db.add(r, "{}", 1).unwrap() else {
            panic!()
        };
        db.remove(id).unwrap();
        assert!(db.list().unwrap().is_empty());
        let n: i64 = db
            .conn
            .query_row("SELECT count(*) FROM scores", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0);
        assert!(matches!(db.remove(id), Err(DbError::NotFound { .. })));
    }
}
