//! `storbench`: a thin binary over the library crates. Each subcommand lives in its
//! own module under `cmd/` with its clap `Args` and a `run` function.

use clap::{CommandFactory, Parser, Subcommand};

mod cmd;

use cmd::out::errln;

#[derive(Parser)]
#[command(name = "storbench", version, about = "Trace-driven storage benchmark suite", long_about = None,
    after_help = cmd::drive::EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the main job on the embedded default: synthesize, bench two simulated drives, write a report
    Demo(cmd::demo::Args),
    /// Import a trace from a public format into storbench's Parquet trace format
    Import(cmd::import::Args),
    /// Export a Parquet trace to fio iolog v3 or CSV
    Export(cmd::export::Args),
    /// Print the statistics published benchmarks print for a trace
    Characterize(cmd::characterize::Args),
    /// Synthesize a published workload profile as a Parquet trace
    Synth(cmd::synth::Args),
    /// List the synthesizable profiles with their published figures
    Profiles(cmd::synth::ProfilesArgs),
    /// Run a generator on a target, fio-style
    Run(cmd::drive::Driven<storbench_suite::run::RunArgs>),
    /// Replay a trace on a target
    Replay(cmd::drive::Driven<storbench_suite::replay::ReplayArgs>),
    /// The simulated SSD: list presets
    Sim(cmd::sim::Args),
    /// Performance consistency: precondition, then sustained 4 KB random writes, IOPS every second
    Consistency(cmd::drive::Driven<storbench_suite::consistency::ConsistencyArgs>),
    /// Season a drive: purge, one sequential pass, restore an image
    Season(cmd::drive::Driven<storbench_suite::season::SeasonArgs>),
    /// TRIM validation: clean, dirty and after-TRIM sequential write throughput
    TrimCheck(cmd::drive::Driven<storbench_suite::trimcheck::TrimCheckArgs>),
    /// Trace bench: optional seasoning, then replay with idle time cut
    Bench(cmd::drive::Driven<storbench_suite::bench::BenchArgs>),
    /// A drive's digital twin: measure it, then fit a simulated drive to the figures
    Twin(cmd::twin::Args),
    /// Run a sweep plan (TOML) on the simulated drive, on every core; resumable
    Sweep(cmd::sweep::Args),
    /// Write a self-contained HTML report comparing result directories
    Report(cmd::report::Args),
    /// Compare result directories as a terminal table
    Compare(cmd::report::CompareArgs),
    /// The results catalogue (SQLite)
    Db(cmd::db::Args),
    /// Record block I/O of a device through tracefs
    Record(cmd::record::Args),
    /// Print shell completions (bash, zsh, fish, elvish, powershell) on stdout
    Completions(cmd::shell::CompletionsArgs),
    /// Write the man pages
    Man(cmd::shell::ManArgs),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(a) => cmd::demo::run(a),
        Command::Import(a) => cmd::import::run(a),
        Command::Export(a) => cmd::export::run(a),
        Command::Characterize(a) => cmd::characterize::run(a),
        Command::Synth(a) => cmd::synth::run(a),
        Command::Profiles(a) => cmd::synth::run_profiles(a),
        Command::Run(a) => cmd::run::run(a),
        Command::Replay(a) => cmd::replay::run(a),
        Command::Sim(a) => cmd::sim::run(a),
        Command::Consistency(a) => cmd::procedures::run_consistency(a),
        Command::Season(a) => cmd::procedures::run_season(a),
        Command::TrimCheck(a) => cmd::procedures::run_trim_check(a),
        Command::Bench(a) => cmd::procedures::run_bench(a),
        Command::Twin(a) => cmd::twin::run(a),
        Command::Sweep(a) => cmd::sweep::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Compare(a) => cmd::report::run_compare(a),
        Command::Db(a) => cmd::db::run(a),
        Command::Record(a) => cmd::record::run(a),
        Command::Completions(a) => cmd::shell::run_completions(a, Cli::command()),
        Command::Man(a) => cmd::shell::run_man(a, Cli::command()),
    };
    if let Err(e) = result {
        // `storbench profiles | head -1`: the reader has what it wanted.
        if cmd::out::closed_pipe(&e) {
            std::process::exit(0);
        }
        errln!("error: {}", cmd::render(&e));
        std::process::exit(cmd::exit_code(&e));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_is_well_formed() {
        Cli::command().debug_assert();
    }

    /// Every subcommand says what it does and every flag and argument has help (issue
    /// 22: `--qd`, `--bs`, `--seed` had none).
    #[test]
    fn every_flag_and_subcommand_has_help() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if id != "help" && id != "version" && arg.get_help().is_none() {
                    missing.push(format!("{path} {id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                let p = format!("{path} {}", sub.get_name());
                if sub.get_about().is_none() {
                    missing.push(p.clone());
                }
                walk(sub, &p, missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "storbench", &mut missing);
        assert!(missing.is_empty(), "no help: {missing:?}");
    }

    #[test]
    fn man_pages_for_every_command() {
        let tmp = tempfile::tempdir().unwrap();
        let n = cmd::shell::write_pages(tmp.path(), Cli::command(), &Default::default()).unwrap();
        let page = std::fs::read_to_string(tmp.path().join("storbench-consistency.1")).unwrap();
        assert!(page.contains("checkpoint\\-every"), "{page}");
        assert!(tmp.path().join("storbench-sim-presets.1").is_file());
        // The top page, `sim presets`, the five `db` subcommands, `twin measure` and `twin fit`.
        assert_eq!(n, Cli::command().get_subcommands().count() + 1 + 1 + 5 + 2);
    }
}
