//! The results catalogue: many drives' results in one SQLite file, so a reviewer
//! builds a bench of drives over months and reports from it.
//!
//! Each entry keeps the result.json text as written (`result_json`), the report's view
//! of it (`view_json`, which carries the per-second IOPS so a report needs nothing
//! else), and its key scores in `scores` for listing and querying with plain SQL.

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
    #[error("results catalogue {path}: entry {id}: stored view does not read back: {message}")]
    Corrupt {
        path: PathBuf,
        id: i64,
        message: String,
    },
}

/// The catalogue's schema version (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 1;

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
    view_json TEXT NOT NULL
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
        let conn = Connection::open(path).map_err(sql("opening"))?;
        conn.execute_batch("PRAGMA foreign_keys = ON;")
            .map_err(sql("enabling foreign keys"))?;
        conn.execute_batch(SCHEMA)
            .map_err(sql("creating the schema"))?;
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sql("reading the schema version"))?;
        if version == 0 {
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
            "INSERT INTO results (added_unix_s, source, drive, setting, procedure, tool_version, result_json, view_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![now_unix_s, view.source, view.drive, view.setting, view.procedure, view.tool_version, result_json, view_json],
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
            .prepare("SELECT id, added_unix_s, source, drive, setting, procedure, tool_version FROM results ORDER BY id")
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
            "spare area",
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
                    e.setting.clone(),
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
