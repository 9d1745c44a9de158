//! The `spinstack` binary: one subcommand per job, each in its own module.

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

mod cmd_disks;
mod cmd_dr;
mod cmd_extract;
mod cmd_report;
mod cmd_reproduce;
mod cmd_serve;
mod cmd_simulate;
mod cmd_trace;
mod cmd_validate;
mod cmd_volume;
mod simulate_trace;
mod volume_report;

/// A storage stack for rotating disks: drive model, track extraction, experiments.
#[derive(Parser)]
#[command(name = "spinstack", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the built-in drive catalog.
    Disks(cmd_disks::Args),
    /// Replay a DiskSim validation trace and print the demerit figure.
    Validate(cmd_validate::Args),
    /// Run a synthetic workload or replay a block trace on a drive or a volume and
    /// print response-time statistics.
    Simulate(cmd_simulate::Args),
    /// Inspect a block trace (MSR, SPC, blkparse, DiskSim) or convert it to fio's iolog.
    Trace(cmd_trace::Args),
    /// Extract a drive's track boundaries (simulated drive or real device).
    Extract(cmd_extract::Args),
    /// Reproduce paper figures: data, plot and claims table per experiment.
    Reproduce(cmd_reproduce::Args),
    /// Gather reproduced experiments into one REPORT.md and report.html.
    Report(cmd_report::Args),
    /// Create and maintain persistent arrays of member files (status, fail, rebuild,
    /// scrub, badblocks).
    Volume(cmd_volume::Args),
    /// Serve a persistent volume over NBD (fio, qemu-img, nbdcopy, nbdfuse use it).
    Serve(cmd_serve::Args),
    /// Power-aware disaster recovery: log shipping, compacted batch apply, disk
    /// energy and failover trials (`dr plan`: the batch plan alone).
    Dr(cmd_dr::Args),
}

/// Every subcommand, at every depth, takes `-0.1` or `-1` as an option's value.
/// Without this clap reads a negative number as an unknown flag and says
/// "unexpected argument '-0' found"; with it, the value reaches the option's own
/// parser or range check, whose message names the option and the range.
fn with_negative_numbers(command: clap::Command) -> clap::Command {
    command
        .allow_negative_numbers(true)
        .mut_subcommands(with_negative_numbers)
}

fn main() {
    let matches = with_negative_numbers(Cli::command()).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|error| error.exit());
    if !matches!(cli.command, Command::Serve(_)) {
        // A report command piped into `head` should end quietly when the pipe closes,
        // as other command-line tools do, not panic in `println!`. The server keeps
        // Rust's default (SIGPIPE ignored): a client hanging up must not kill it.
        // SAFETY: setting a signal's disposition to its default before any thread
        // starts.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    let result = match cli.command {
        Command::Disks(args) => cmd_disks::run(args),
        Command::Validate(args) => cmd_validate::run(args),
        Command::Simulate(args) => cmd_simulate::run(args),
        Command::Trace(args) => cmd_trace::run(args),
        Command::Extract(args) => cmd_extract::run(args),
        Command::Reproduce(args) => cmd_reproduce::run(args),
        Command::Report(args) => cmd_report::run(args),
        Command::Volume(args) => cmd_volume::run(args),
        Command::Serve(args) => cmd_serve::run(args),
        Command::Dr(args) => cmd_dr::run(args),
    };
    if let Err(error) = result {
        eprintln!("spinstack: error: {}", error_text(&error));
        std::process::exit(1);
    }
}

/// A drive by catalog name or file path, as every command takes one, with the
/// warnings its file carries (a DiskSim `Block count` that disagrees with the
/// zones, say) said on standard error.
fn load_drive(name_or_path: &str) -> anyhow::Result<spinstack_disk::DriveSpec> {
    let spec = spinstack_disk::catalog::resolve(name_or_path)?;
    for warning in spec.warnings() {
        eprintln!("warning: {warning}");
    }
    Ok(spec)
}

/// The error and its causes, each cause said once: many error types already put
/// their cause in their own message, and anyhow's `{:#}` would repeat it.
fn error_text(error: &anyhow::Error) -> String {
    let mut text = error.to_string();
    for cause in error.chain().skip(1) {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::{error_text, with_negative_numbers, Cli};
    use clap::CommandFactory;

    /// Each option that takes a value, with the subcommand path that leads to it.
    fn value_options(command: &clap::Command, path: &[String], found: &mut Vec<Vec<String>>) {
        for arg in command.get_arguments() {
            if let (Some(long), true) = (arg.get_long(), arg.get_action().takes_values()) {
                let mut words = path.to_vec();
                words.push(format!("--{long}"));
                found.push(words);
            }
        }
        for sub in command.get_subcommands() {
            let mut sub_path = path.to_vec();
            sub_path.push(sub.get_name().to_string());
            value_options(sub, &sub_path, found);
        }
    }

    /// Guards inputs finding 25 (negative numbers on the CLI): `simulate
    /// --read-fraction -0.1` said "unexpected argument '-0' found". Proves that
    /// every option of every subcommand that takes a value gets `-1` and `-0.1`
    /// as its value, so its own parser or range check answers, naming it. On
    /// the old command (no `with_negative_numbers`) every row fails.
    #[test]
    fn every_option_takes_a_negative_number_as_its_value() {
        let command = with_negative_numbers(Cli::command());
        let mut options = Vec::new();
        value_options(&command, &["spinstack".to_string()], &mut options);
        assert!(options.len() > 40, "{options:?}");
        for words in options {
            for value in ["-1", "-0.1"] {
                let line = words.iter().map(String::as_str).chain([value]);
                let Err(error) = command.clone().try_get_matches_from(line) else {
                    continue;
                };
                let text = error.to_string();
                assert!(
                    !text.contains("unexpected argument"),
                    "{words:?} {value}: {text}"
                );
            }
        }
    }

    /// An error that says its cause in its message and also reports it as its source,
    /// as the workspace's thiserror types with a `source` field do.
    #[derive(Debug)]
    struct Wrapped {
        path: String,
        source: std::io::Error,
    }

    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{}: {}", self.path, self.source)
        }
    }

    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.source)
        }
    }

    /// A cause already in its error's message is not said twice (before,
    /// `volume status /nonexist` printed "No such file or directory" twice), and a
    /// cause that is not is still said.
    #[test]
    fn causes_are_said_once() {
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "not found");
        let error = anyhow::Error::new(Wrapped {
            path: "/x".into(),
            source: io(),
        });
        assert_eq!(error_text(&error), "/x: not found");
        let error = anyhow::Error::new(io()).context("opening /y");
        assert_eq!(error_text(&error), "opening /y: not found");
    }
}
