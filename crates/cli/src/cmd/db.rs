//! `storbench db`: the results catalogue (SQLite).

use super::out::{out, outln};
use super::UserError;
use std::path::{Path, PathBuf};
use storbench_report::db::{list_table, Added, Catalogue};

#[derive(clap::Args)]
pub struct Args {
    /// The catalogue file (default: ~/.local/share/storbench/results.db)
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,
    #[command(subcommand)]
    pub command: DbCommand,
}

#[derive(clap::Subcommand)]
pub enum DbCommand {
    /// Add result directories (or directories of them) to the catalogue
    Add {
        /// Result directories, or directories of them
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
    },
    /// List the catalogue's entries with their key scores
    List,
    /// Show one entry: its comparison table and where it came from
    Show {
        /// The entry's id (`storbench db list` shows them)
        id: i64,
        /// Print the stored result.json instead
        #[arg(long)]
        json: bool,
    },
    /// Write an HTML report of some entries (all when no ID and no --where is given)
    Report {
        /// Entry ids (`storbench db list` shows them)
        ids: Vec<i64>,
        /// Entries a SQL condition selects, on the columns drive, capacity_bytes,
        /// spare_area, state, workload, procedure, date (e.g. "state = 'seasoned'")
        #[arg(long = "where", value_name = "SQL", conflicts_with = "ids")]
        where_sql: Option<String>,
        /// Where to write the self-contained HTML report
        #[arg(short, long, default_value = "report.html", value_name = "FILE")]
        output: PathBuf,
        /// Also write charts as SVG and tables as Markdown and CSV here
        #[arg(long, value_name = "DIR")]
        images: Option<PathBuf>,
        /// Replace an existing report or image storbench did not write
        #[arg(long)]
        overwrite: bool,
    },
    /// Remove an entry
    Remove {
        /// The entry's id (`storbench db list` shows them)
        id: i64,
    },
}

fn open(db: Option<PathBuf>) -> anyhow::Result<Catalogue> {
    let path = match db {
        Some(p) => p,
        None => Catalogue::default_path().ok_or_else(|| UserError {
            message: "no default catalogue path: neither XDG_DATA_HOME nor HOME is set".into(),
            hint: Some("give one with --db PATH".into()),
        })?,
    };
    match Catalogue::open(&path) {
        Ok(c) => Ok(c),
        Err(e @ storbench_report::db::DbError::NotACatalogue { .. }) => Err(UserError {
            message: e.to_string(),
            hint: Some("give --db a new path, or a catalogue storbench made".into()),
        }
        .into()),
        Err(e) => Err(e.into()),
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let mut cat = open(args.db)?;
    match args.command {
        DbCommand::Add { dirs } => add(&mut cat, &dirs)?,
        DbCommand::List => {
            let entries = cat.list()?;
            out!("{}", list_table(&entries).to_text())?;
            outln!("catalogue: {}", cat.path().display())?;
        }
        DbCommand::Show { id, json } => show(&cat, id, json)?,
        DbCommand::Report {
            ids,
            where_sql,
            output,
            images,
            overwrite,
        } => report(
            &cat,
            ids,
            where_sql.as_deref(),
            &output,
            images.as_deref(),
            overwrite,
        )?,
        DbCommand::Remove { id } => {
            cat.remove(id)?;
            outln!("removed {id}")?;
        }
    }
    Ok(())
}

/// `db add`: every result directory under each of `dirs`, one line each.
fn add(cat: &mut Catalogue, dirs: &[PathBuf]) -> anyhow::Result<()> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    for d in dirs {
        let found = storbench_report::html::load::discover(d)?;
        if found.is_empty() {
            return Err(UserError {
                message: format!(
                    "{}: no result.json here or in its subdirectories",
                    d.display()
                ),
                hint: Some("give the directory a procedure wrote".into()),
            }
            .into());
        }
        for dir in found {
            let (view, text) = storbench_report::html::load::load(&dir)?;
            match cat.add(&view, &text, now)? {
                Added::New(id) => outln!(
                    "added {id}: {} {} ({})",
                    view.procedure,
                    view.label(),
                    dir.display()
                ),
                Added::AlreadyThere(id) => {
                    outln!(
                        "already there as {id}: {} ({})",
                        view.label(),
                        dir.display()
                    )
                }
            }?;
        }
    }
    Ok(())
}

/// `db show`: one entry's comparison table, or its stored result.json.
fn show(cat: &Catalogue, id: i64, json: bool) -> anyhow::Result<()> {
    let (view, text) = cat.get(id)?;
    if json {
        outln!("{text}")?;
    } else {
        outln!(
            "{} · {} · {} · from {}",
            view.procedure,
            view.label(),
            view.tool_version,
            view.source
        )?;
        out!(
            "{}",
            storbench_report::compare::compare_text(std::slice::from_ref(&view))
        )?;
    }
    Ok(())
}

/// `db report`: the entries `ids` (or those `where_sql` selects; all when neither)
/// as an HTML report.
fn report(
    cat: &Catalogue,
    ids: Vec<i64>,
    where_sql: Option<&str>,
    output: &Path,
    images: Option<&Path>,
    overwrite: bool,
) -> anyhow::Result<()> {
    let ids = match where_sql {
        Some(w) => {
            let ids = cat.ids_where(w)?;
            if ids.is_empty() {
                return Err(UserError {
                    message: format!("--where {w}: no entry matches"),
                    hint: Some("`storbench db list` shows the entries and their columns".into()),
                }
                .into());
            }
            ids
        }
        None => ids,
    };
    let mut runs = cat.views(&ids)?;
    storbench_report::html::view::name_runs(&mut runs, &[]);
    if runs.is_empty() {
        return Err(UserError {
            message: format!("the catalogue {} is empty", cat.path().display()),
            hint: Some("add results with `storbench db add DIR`".into()),
        }
        .into());
    }
    // Never over the catalogue it reads, nor a result it came from.
    let rule = super::report::report_rule(overwrite, &runs, &[]).input_path(cat.path());
    super::report::write_report(&runs, output, images, &rule)?;
    Ok(())
}
