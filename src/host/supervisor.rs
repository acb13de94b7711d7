//! Host side of `process_supervisor.sh`: the supervised launch command, the
//! cleanup receipt the supervisor leaves behind, and the command that ends
//! the services a receipt lists.
//!
//! The launch clears the variables that change how bash runs a script before
//! its first line, and runs `bash --noprofile --norc` on the supervisor.
//! The receipt is strict on its four original keys and tolerant of others.
//!
//! ```
//! use std::time::Duration;
//! use shforge::host::supervisor::{SupervisorOptions, supervised_launch};
//!
//! let opts = SupervisorOptions::new("/tmp/s/receipt.json")
//!     .deadline(Duration::from_millis(1500))
//!     .grace(Duration::from_secs(5));
//! let argv = supervised_launch("/tmp/s/process_supervisor.sh", &opts, &["pi", "--print"]).unwrap();
//! assert_eq!(argv[..9], ["env", "-u", "BASH_ENV", "-u", "ENV", "-u", "SHELLOPTS", "-u", "BASHOPTS"]);
//! assert!(argv.ends_with(&["--deadline".into(), "1.50".into(), "--grace".into(), "5.00".into(),
//!     "--".into(), "pi".into(), "--print".into()]));
//! ```

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};

use crate::quote::{CommandLine, QuoteError};

/// Variables cleared for the supervisor, and so for the harness: bash's own
/// variables that change how a script runs when inherited. The first four
/// act before its first line (SHELLOPTS/BASHOPTS set options, BASH_ENV/ENV
/// are sourced); the others (TMOUT, FUNCNEST, CDPATH, ...) the scripts
/// also remove themselves. docs/security.md's table says what each would do.
pub const CLEARED_VARS: [&str; 11] = [
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "TMOUT",
    "FUNCNEST",
    "CDPATH",
    "BASH_COMPAT",
    "CHILD_MAX",
    "PS4",
    "BASH_XTRACEFD",
];

/// A supervised launch could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    /// An argument holds a NUL byte.
    #[error("{what}: {source}")]
    Nul {
        /// Which argument.
        what: &'static str,
        /// The quoting error.
        source: QuoteError,
    },
    /// The receipt path is empty.
    #[error("the receipt path is empty")]
    EmptyReceipt,
    /// The marker token has characters the supervisor refuses.
    #[error("marker {0:?} must be 1 to 256 printable ASCII characters, no space (0x21-0x7e)")]
    BadMarker(String),
    /// No command to run.
    #[error("the command is empty")]
    EmptyCommand,
    /// `--cgroup` takes an absolute directory.
    #[error("cgroup directory {0:?} is not an absolute path")]
    RelativeCgroup(String),
    /// `--max-procs` needs a cgroup directory and a count from 1 to 999999999.
    #[error("max_procs {0} needs CgroupChoice::Dir and a count from 1 to 999999999")]
    BadMaxProcs(u32),
}

/// Typed options of `process_supervisor.sh`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupervisorOptions {
    /// Where the receipt is written (inside the sandbox).
    pub receipt: String,
    /// Deadline from launch; `None` runs without one. Under 10 ms the command
    /// is not started at all and the receipt says timed_out.
    pub deadline: Option<Duration>,
    /// Time between TERM and KILL; `None` keeps the script's default (5 s).
    pub grace: Option<Duration>,
    /// Marker token; `None` lets the supervisor make a fresh unique one.
    pub marker: Option<String>,
    /// The bash to run the supervisor with (default `bash`, found on PATH).
    pub bash: String,
    /// cgroup v2 containment; `None` lets the supervisor find a delegated
    /// cgroup of its own (and fall back to /proc scanning without one).
    pub cgroup: Option<CgroupChoice>,
    /// `pids.max` of the harness's cgroup (needs [`CgroupChoice::Dir`] with
    /// the pids controller enabled for its children).
    pub max_procs: Option<u32>,
}

/// Where the harness's child cgroup goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CgroupChoice {
    /// Under this writable cgroup v2 directory (absolute path inside the
    /// sandbox); the supervisor refuses to launch (125) when it cannot use it.
    Dir(String),
    /// No cgroup: containment by /proc scanning only (`--cgroup none`).
    Off,
}

impl SupervisorOptions {
    /// Options with a receipt path and every other option at its default.
    pub fn new(receipt: impl Into<String>) -> Self {
        SupervisorOptions {
            receipt: receipt.into(),
            deadline: None,
            grace: None,
            marker: None,
            bash: "bash".to_owned(),
            cgroup: None,
            max_procs: None,
        }
    }

    /// Choose the cgroup containment.
    pub fn cgroup(mut self, choice: CgroupChoice) -> Self {
        self.cgroup = Some(choice);
        self
    }

    /// Cap the harness's cgroup at `n` processes.
    pub fn max_procs(mut self, n: u32) -> Self {
        self.max_procs = Some(n);
        self
    }

    /// Set the deadline.
    pub fn deadline(mut self, d: Duration) -> Self {
        self.deadline = Some(d);
        self
    }

    /// Set the grace period.
    pub fn grace(mut self, d: Duration) -> Self {
        self.grace = Some(d);
        self
    }

    /// Set the marker token.
    pub fn marker(mut self, token: impl Into<String>) -> Self {
        self.marker = Some(token.into());
        self
    }

    /// Run the supervisor with this bash.
    pub fn bash(mut self, bash: impl Into<String>) -> Self {
        self.bash = bash.into();
        self
    }
}

/// Render a duration as the supervisor's fixed-point seconds: whole
/// centiseconds, rounded down (`1.5 s` → `1.50`, `9 ms` → `0.00`).
pub fn fixed_point_seconds(d: Duration) -> String {
    let cs = d.as_millis() / 10;
    format!("{}.{:02}", cs / 100, cs % 100)
}

/// 1 to 256 printable ASCII characters without blanks (0x21..=0x7e), as the
/// supervisor's `--marker` accepts: base64 and URL-safe tokens fit.
fn valid_marker(token: &str) -> bool {
    (1..=256).contains(&token.len()) && token.bytes().all(|b| b.is_ascii_graphic())
}

fn no_nul(what: &'static str, s: &str) -> Result<(), LaunchError> {
    crate::quote::quote(s)
        .map(|_| ())
        .map_err(|source| LaunchError::Nul { what, source })
}

/// The argv that runs `command` under the supervisor at `supervisor` (a path
/// inside the sandbox): `env -u BASH_ENV -u ENV ... (each of
/// [`CLEARED_VARS`]) bash --noprofile --norc SUPERVISOR --receipt FILE [...]
/// -- COMMAND...`.
pub fn supervised_launch<S: AsRef<str>>(
    supervisor: &str,
    opts: &SupervisorOptions,
    command: &[S],
) -> Result<Vec<String>, LaunchError> {
    if opts.receipt.is_empty() {
        return Err(LaunchError::EmptyReceipt);
    }
    if command.is_empty() || command[0].as_ref().is_empty() {
        return Err(LaunchError::EmptyCommand);
    }
    no_nul("supervisor path", supervisor)?;
    no_nul("bash path", &opts.bash)?;
    no_nul("receipt path", &opts.receipt)?;
    for arg in command {
        no_nul("command argument", arg.as_ref())?;
    }
    let mut argv = clean_bash(&opts.bash, supervisor);
    argv.extend(["--receipt".into(), opts.receipt.clone()]);
    if let Some(d) = opts.deadline {
        argv.extend(["--deadline".into(), fixed_point_seconds(d)]);
    }
    if let Some(g) = opts.grace {
        argv.extend(["--grace".into(), fixed_point_seconds(g)]);
    }
    if let Some(m) = &opts.marker {
        if !valid_marker(m) {
            return Err(LaunchError::BadMarker(m.clone()));
        }
        argv.extend(["--marker".into(), m.clone()]);
    }
    match &opts.cgroup {
        None => {}
        Some(CgroupChoice::Off) => argv.extend(["--cgroup".into(), "none".into()]),
        Some(CgroupChoice::Dir(d)) => {
            no_nul("cgroup directory", d)?;
            if !d.starts_with('/') {
                return Err(LaunchError::RelativeCgroup(d.clone()));
            }
            argv.extend(["--cgroup".into(), d.clone()]);
        }
    }
    if let Some(n) = opts.max_procs {
        if !matches!(opts.cgroup, Some(CgroupChoice::Dir(_))) || !(1..=999_999_999).contains(&n) {
            return Err(LaunchError::BadMaxProcs(n));
        }
        argv.extend(["--max-procs".into(), n.to_string()]);
    }
    argv.push("--".into());
    argv.extend(command.iter().map(|s| s.as_ref().to_owned()));
    Ok(argv)
}

/// `env -u BASH_ENV -u ENV -u SHELLOPTS -u BASHOPTS -u TMOUT ... BASH
/// --noprofile --norc SUPERVISOR`: a bash that runs nothing before the
/// supervisor's first line, with none of [`CLEARED_VARS`].
fn clean_bash(bash: &str, supervisor: &str) -> Vec<String> {
    let mut argv: Vec<String> = vec!["env".into()];
    for var in CLEARED_VARS {
        argv.push("-u".into());
        argv.push(var.into());
    }
    argv.extend([
        bash.to_owned(),
        "--noprofile".into(),
        "--norc".into(),
        supervisor.to_owned(),
    ]);
    argv
}

/// The argv that ends exactly the services a receipt lists (`--end-services
/// RECEIPT`), run inside the sandbox: each listed process is signalled only
/// while its PID still belongs to the process that started at the recorded
/// tick; TERM, then KILL after `grace` (default 5 s). Exit 0 when none is
/// left, 125 when one outlived the KILL, 2 when the receipt is unreadable.
pub fn end_services_launch(
    supervisor: &str,
    bash: &str,
    receipt: &str,
    grace: Option<Duration>,
) -> Result<Vec<String>, LaunchError> {
    if receipt.is_empty() {
        return Err(LaunchError::EmptyReceipt);
    }
    no_nul("supervisor path", supervisor)?;
    no_nul("bash path", bash)?;
    no_nul("receipt path", receipt)?;
    let mut argv = clean_bash(bash, supervisor);
    argv.extend(["--end-services".into(), receipt.to_owned()]);
    if let Some(g) = grace {
        argv.extend(["--grace".into(), fixed_point_seconds(g)]);
    }
    Ok(argv)
}

/// The same launch as one shell command line, each word quoted, for
/// providers that take a string.
pub fn supervised_launch_line<S: AsRef<str>>(
    supervisor: &str,
    opts: &SupervisorOptions,
    command: &[S],
) -> Result<String, LaunchError> {
    let argv = supervised_launch(supervisor, opts, command)?;
    let wrap = |source| LaunchError::Nul {
        what: "argument",
        source,
    };
    let mut line = CommandLine::new(&argv[0]).map_err(wrap)?;
    for arg in &argv[1..] {
        line = line.arg(arg).map_err(wrap)?;
    }
    Ok(line.to_raw().into_string())
}

/// The receipt the supervisor writes: strict on its four original keys (each
/// must be present, with its exact type), tolerant of any extra key.
/// `services` and `containment` default to none and `proc` when absent;
/// `stop`, `zombies` and `marker` (added later) to none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CleanupReceipt {
    /// The final scan found no reached process alive.
    pub cleanup_confirmed: bool,
    /// The command's status as the shell reports it: its exit status, or
    /// 128+N when signal N ended it (a CLI KILLed at the deadline is 137,
    /// whoever sent the KILL). `None` when it never ran; the supervisor's
    /// own failures to launch it are 125–127 (127: not found).
    #[serde(deserialize_with = "present_nullable")]
    pub return_code: Option<i32>,
    /// The supervisor's own failure, if any.
    #[serde(deserialize_with = "present_nullable")]
    pub error: Option<String>,
    /// The deadline expired.
    pub timed_out: bool,
    /// How the stop contained the harness.
    #[serde(default)]
    pub containment: Containment,
    /// Marked processes outside the harness when the stop began: preserved
    /// (a task may need a server its agent started). End them later with
    /// [`end_services_launch`].
    #[serde(default)]
    pub services: Vec<Service>,
    /// How the stop went; `None` when the harness never ran (and in
    /// receipts of older supervisors).
    #[serde(default)]
    pub stop: Option<StopReport>,
    /// Zombies of the harness still there after the stop: reached
    /// processes that ended and that nobody reaps (their parent is gone and
    /// the PID namespace's init, or a subreaper, does not wait for them).
    #[serde(default)]
    pub zombies: Vec<Zombie>,
    /// The marker token of the run (`NEMO_GYM_SUPERVISOR=TOKEN` in the
    /// harness's environment): `--end-services` signals a listed service
    /// only while its environment still holds exactly this entry. Not a
    /// secret: every process of the harness has it in its environment.
    #[serde(default)]
    pub marker: Option<String>,
}

/// Why the stop began.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StopReason {
    /// The harness exited; the stop swept what it left.
    Exit,
    /// The deadline expired.
    Deadline,
    /// TERM, INT or HUP reached the supervisor (see [`StopReport::signal`]).
    Signal,
    /// The shell that started a regrouped supervisor is gone (its group was
    /// KILLed): a stop as for TERM.
    Lost,
}

/// How the stop went. Times are seconds since the launch, at 0.01 s
/// resolution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopReport {
    /// Why the stop began.
    pub reason: StopReason,
    /// The signal's name ("TERM", "INT", "HUP") when `reason` is `signal`.
    pub signal: Option<String>,
    /// When the stop began.
    #[serde(with = "seconds")]
    pub began_at: Duration,
    /// When the first TERM went out; `None` when nothing was left to TERM.
    #[serde(with = "opt_seconds")]
    pub term_at: Option<Duration>,
    /// When KILL went out; `None` when TERM sufficed (or nothing was left).
    #[serde(with = "opt_seconds")]
    pub kill_at: Option<Duration>,
    /// When the stop ended (confirmed or not).
    #[serde(with = "seconds")]
    pub ended_at: Duration,
    /// How long the graceful phase took, from its start (just before the
    /// first TERM) until nothing reached was left or the grace period was
    /// over; `None` without TERM.
    #[serde(rename = "grace_s", with = "opt_seconds")]
    pub grace: Option<Duration>,
    /// Processes the /proc scan reached that got TERM.
    pub reached_term: u64,
    /// Processes the /proc scan reached that got KILL.
    pub reached_kill: u64,
    /// The harness had exited before the supervisor sent it anything.
    pub harness_exited_by_itself: bool,
}

/// A zombie the harness left (see [`CleanupReceipt::zombies`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zombie {
    /// Its PID.
    pub pid: u32,
    /// Its parent, which does not reap it (often 1).
    pub ppid: u32,
    /// Its start time in clock ticks after boot.
    pub start_time: u64,
}

/// Seconds as the receipt writes them (a JSON number with two decimals).
mod seconds {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_millis() as f64 / 1000.0)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let secs = f64::deserialize(d)?;
        Duration::try_from_secs_f64(secs).map_err(serde::de::Error::custom)
    }
}

/// [`seconds`], or `null`.
mod opt_seconds {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => super::seconds::serialize(d, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<f64>::deserialize(d)?
            .map(|secs| Duration::try_from_secs_f64(secs).map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// How the supervisor contained the harness.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Containment {
    /// /proc scanning: the tree, groups, sessions and the marker.
    #[default]
    Proc,
    /// A cgroup v2 of its own, frozen and killed, plus the /proc scan.
    Cgroup,
}

/// A preserved service, identified by PID and start time (clock ticks after
/// boot, field 22 of /proc/PID/stat): a PID alone may be recycled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Service {
    /// Its PID (in the sandbox's PID namespace).
    pub pid: u32,
    /// Its start time in clock ticks after boot.
    pub start_time: u64,
    /// The first word of its command line when the stop began (a hint: a
    /// process may rewrite it).
    pub argv0: String,
}

/// `null` or a value, but the key must be there (a plain `Option` field
/// would take a missing key as `None`).
fn present_nullable<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d)
}

/// A receipt could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReceiptError {
    /// The file could not be read.
    #[error("reading receipt {path}: {source}")]
    Io {
        /// The receipt path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Not a valid receipt.
    #[error("invalid receipt: {0}")]
    Json(#[from] serde_json::Error),
}

impl CleanupReceipt {
    /// Parse a receipt from its JSON text.
    pub fn from_json(text: &str) -> Result<Self, ReceiptError> {
        Ok(serde_json::from_str(text)?)
    }

    /// Read and parse a receipt file: a regular file of at most
    /// [`Bound::RECEIPT`](crate::Bound::RECEIPT) (a FIFO or device
    /// is refused at once, never waited on).
    pub fn from_file(path: &Path) -> Result<Self, ReceiptError> {
        let text = crate::files::read_text(path, crate::files::Bound::RECEIPT).map_err(|e| {
            ReceiptError::Io {
                path: path.display().to_string(),
                source: e.into_cause(),
            }
        })?;
        Self::from_json(&text)
    }

    /// The run ended cleanly as far as the supervisor is concerned: cleanup
    /// confirmed and no supervisor error.
    pub fn is_clean(&self) -> bool {
        self.cleanup_confirmed && self.error.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_rounds_down_to_centiseconds() {
        assert_eq!(fixed_point_seconds(Duration::from_millis(1500)), "1.50");
        assert_eq!(fixed_point_seconds(Duration::from_millis(9)), "0.00");
        assert_eq!(fixed_point_seconds(Duration::from_millis(10)), "0.01");
        assert_eq!(fixed_point_seconds(Duration::from_secs(3600)), "3600.00");
        assert_eq!(
            fixed_point_seconds(Duration::from_micros(1_239_999)),
            "1.23"
        );
    }

    #[test]
    fn the_launch_clears_every_variable_of_the_table() {
        let table: Vec<&str> = crate::environ::BASH_VARS.iter().map(|v| v.name).collect();
        assert_eq!(CLEARED_VARS[..], table[..]);
    }

    #[test]
    fn launch_clears_inherited_state_and_keeps_words() {
        let opts = SupervisorOptions::new("/r dir/receipt.json")
            .marker("tok-1")
            .bash("/opt/bash");
        let argv = supervised_launch("/s/sup.sh", &opts, &["a b", "$(x)", ""]).unwrap();
        let cleared: Vec<&str> = CLEARED_VARS.iter().flat_map(|v| ["-u", v]).collect();
        assert_eq!(argv[0], "env");
        assert_eq!(argv[1..=cleared.len()], cleared);
        assert_eq!(
            argv[cleared.len() + 1..],
            [
                "/opt/bash",
                "--noprofile",
                "--norc",
                "/s/sup.sh",
                "--receipt",
                "/r dir/receipt.json",
                "--marker",
                "tok-1",
                "--",
                "a b",
                "$(x)",
                ""
            ]
        );
        let line = supervised_launch_line("/s/sup.sh", &opts, &["a b", "$(x)"]).unwrap();
        assert!(line.contains("'/r dir/receipt.json'"), "{line}");
        assert!(line.ends_with("-- 'a b' '$(x)'"), "{line}");
    }

    #[test]
    fn launch_accepts_printable_ascii_markers() {
        let opts = SupervisorOptions::new("r");
        let long = "x".repeat(256);
        for good in ["abc+/=", "a\"b'c$d*e[f]\\g~!", "-", long.as_str()] {
            let argv = supervised_launch("s", &opts.clone().marker(good), &["x"])
                .unwrap_or_else(|e| panic!("{good:?}: {e}"));
            assert!(
                argv.windows(2).any(|w| w[0] == "--marker" && w[1] == good),
                "{argv:?}"
            );
        }
    }

    #[test]
    fn launch_refuses_bad_input() {
        let opts = SupervisorOptions::new("r");
        assert_eq!(
            supervised_launch::<&str>("s", &opts, &[]),
            Err(LaunchError::EmptyCommand)
        );
        assert_eq!(
            supervised_launch("s", &SupervisorOptions::new(""), &["x"]),
            Err(LaunchError::EmptyReceipt)
        );
        assert!(matches!(
            supervised_launch("s", &opts, &["x\0y"]),
            Err(LaunchError::Nul { .. })
        ));
        for bad in ["", "a b", "a\tb", "a\nb", "é", "\u{7f}", &"x".repeat(257)] {
            assert_eq!(
                supervised_launch("s", &opts.clone().marker(bad), &["x"]),
                Err(LaunchError::BadMarker(bad.to_owned())),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn receipt_parses_and_tolerates_extra_keys() {
        let r = CleanupReceipt::from_json(
            r#"{"cleanup_confirmed": true, "return_code": 143, "error": null, "timed_out": true, "extra": [1]}"#,
        )
        .unwrap();
        assert_eq!(
            r,
            CleanupReceipt {
                cleanup_confirmed: true,
                return_code: Some(143),
                error: None,
                timed_out: true,
                containment: Containment::Proc,
                services: vec![],
                stop: None,
                zombies: vec![],
                marker: None,
            }
        );
        assert!(r.is_clean());
        let r = CleanupReceipt::from_json(
            r#"{"cleanup_confirmed": false, "return_code": null, "error": "x\u0001", "timed_out": false}"#,
        )
        .unwrap();
        assert_eq!(r.return_code, None);
        assert_eq!(r.error.as_deref(), Some("x\u{1}"));
        assert!(!r.is_clean());
    }

    #[test]
    fn receipt_lists_services_and_containment() {
        let r = CleanupReceipt::from_json(
            r#"{"cleanup_confirmed": true, "return_code": 0, "error": null, "timed_out": false, "containment": "cgroup", "services": [{"pid": 12, "start_time": 3456, "argv0": "srv"}]}"#,
        )
        .unwrap();
        assert_eq!(r.containment, Containment::Cgroup);
        assert_eq!(
            r.services,
            [Service {
                pid: 12,
                start_time: 3456,
                argv0: "srv".into()
            }]
        );
        assert!(
            CleanupReceipt::from_json(
                r#"{"cleanup_confirmed": true, "return_code": 0, "error": null, "timed_out": false, "containment": "jail"}"#
            )
            .is_err()
        );
    }

    #[test]
    fn receipt_reports_the_stop_zombies_and_marker() {
        let text = r#"{"cleanup_confirmed": true, "return_code": 143, "error": null, "timed_out": true, "containment": "proc",
"stop": {"reason": "deadline", "signal": null, "began_at": 2.00, "term_at": 2.01, "kill_at": 7.02, "ended_at": 7.05, "grace_s": 5.01, "reached_term": 3, "reached_kill": 1, "harness_exited_by_itself": false},
"zombies": [{"pid": 20271, "ppid": 1, "start_time": 121847}],
"marker": "a\"b\\c",
"services": [
{"pid": 12, "start_time": 3456, "argv0": "srv"}
]}
"#;
        let r = CleanupReceipt::from_json(text).unwrap();
        let stop = r.stop.clone().unwrap();
        assert_eq!(stop.reason, StopReason::Deadline);
        assert_eq!(stop.signal, None);
        assert_eq!(stop.term_at, Some(Duration::from_millis(2010)));
        assert_eq!(stop.kill_at, Some(Duration::from_millis(7020)));
        assert_eq!(stop.grace, Some(Duration::from_millis(5010)));
        assert_eq!(stop.ended_at, Duration::from_millis(7050));
        assert_eq!((stop.reached_term, stop.reached_kill), (3, 1));
        assert!(!stop.harness_exited_by_itself);
        assert_eq!(
            r.zombies,
            [Zombie {
                pid: 20271,
                ppid: 1,
                start_time: 121847
            }]
        );
        assert_eq!(r.marker.as_deref(), Some("a\"b\\c"));
        assert_eq!(r.services.len(), 1);
        // What the library writes back reads the same.
        let again = CleanupReceipt::from_json(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(again, r);
        let signal = text.replace(
            r#""reason": "deadline", "signal": null"#,
            r#""reason": "signal", "signal": "TERM""#,
        );
        let r = CleanupReceipt::from_json(&signal).unwrap();
        assert_eq!(r.stop.unwrap().signal.as_deref(), Some("TERM"));
        let bad = text.replace(r#""reason": "deadline""#, r#""reason": "bored""#);
        assert!(CleanupReceipt::from_json(&bad).is_err());
    }

    #[test]
    fn end_services_and_cgroup_options() {
        let argv =
            end_services_launch("/s/sup.sh", "bash", "/r.json", Some(Duration::from_secs(1)))
                .unwrap();
        assert!(argv.ends_with(&[
            "/s/sup.sh".into(),
            "--end-services".into(),
            "/r.json".into(),
            "--grace".into(),
            "1.00".into()
        ]));
        let opts = SupervisorOptions::new("r")
            .cgroup(CgroupChoice::Dir("/sys/fs/cgroup/x".into()))
            .max_procs(500);
        let argv = supervised_launch("s", &opts, &["x"]).unwrap();
        assert!(
            argv.windows(4)
                .any(|w| w == ["--cgroup", "/sys/fs/cgroup/x", "--max-procs", "500"]),
            "{argv:?}"
        );
        let off = SupervisorOptions::new("r").cgroup(CgroupChoice::Off);
        let argv = supervised_launch("s", &off, &["x"]).unwrap();
        assert!(
            argv.windows(2).any(|w| w == ["--cgroup", "none"]),
            "{argv:?}"
        );
        assert_eq!(
            supervised_launch("s", &off.clone().max_procs(5), &["x"]),
            Err(LaunchError::BadMaxProcs(5))
        );
        assert_eq!(
            supervised_launch(
                "s",
                &SupervisorOptions::new("r").cgroup(CgroupChoice::Dir("rel".into())),
                &["x"]
            ),
            Err(LaunchError::RelativeCgroup("rel".into()))
        );
    }

    #[test]
    fn receipt_is_strict_on_the_four_keys() {
        let good = serde_json::json!({"cleanup_confirmed": true, "return_code": 0, "error": null, "timed_out": false});
        for key in ["cleanup_confirmed", "return_code", "error", "timed_out"] {
            let mut v = good.clone();
            v.as_object_mut().unwrap().remove(key);
            assert!(
                CleanupReceipt::from_json(&v.to_string()).is_err(),
                "missing {key} accepted"
            );
        }
        for (key, bad) in [
            ("cleanup_confirmed", serde_json::json!("true")),
            ("cleanup_confirmed", serde_json::json!(null)),
            ("return_code", serde_json::json!(1.5)),
            ("return_code", serde_json::json!("0")),
            ("error", serde_json::json!(3)),
            ("timed_out", serde_json::json!(0)),
        ] {
            let mut v = good.clone();
            v[key] = bad.clone();
            assert!(
                CleanupReceipt::from_json(&v.to_string()).is_err(),
                "{key} = {bad} accepted"
            );
        }
        assert!(
            CleanupReceipt::from_json(
                r#"{"cleanup_confirmed": true, "cleanup_confirmed": false, "return_code": 0, "error": null, "timed_out": false}"#
            )
            .is_err(),
            "duplicate key accepted"
        );
        assert!(CleanupReceipt::from_json("[]").is_err());
    }
}
