//! generated/process_supervisor.sh under every bash of the matrix.
//!
//! Each scenario runs in a PID namespace of its own (`unshare --pid --fork
//! --mount-proc`): tests/fixtures/supervisor/driver.sh is its PID 1, starts
//! unrelated processes (some with crafted names), runs the supervisor on the
//! fake harness tests/fixtures/supervisor/harness.sh, and reports from inside,
//! before the namespace ends, every process still alive that is neither
//! unrelated nor a preserved service (LEAK), every unrelated process that was
//! signalled, stopped or killed (UNRELATED_HIT) and every service that died
//! (SERVICE_DEAD). The receipt is parsed with `shforge::host::CleanupReceipt`.
//! Runs are spread over a few threads; the namespaces keep them apart.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Condvar, Mutex};

use shforge::host::supervisor::{CleanupReceipt, Containment, StopReason, StopReport};
use support::{Shell, late_read};

/// How many namespaces may run at once (2 cores, shared).
const PARALLEL: usize = 4;

static SLOTS: Mutex<usize> = Mutex::new(0);
static FREED: Condvar = Condvar::new();

struct Slot;

impl Slot {
    fn take() -> Slot {
        let mut n = SLOTS.lock().unwrap();
        while *n >= PARALLEL {
            n = FREED.wait(n).unwrap();
        }
        *n += 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        *SLOTS.lock().unwrap() -= 1;
        FREED.notify_one();
    }
}

fn supervisor() -> PathBuf {
    support::root().join("generated/process_supervisor.sh")
}

fn fixtures() -> PathBuf {
    support::root().join("tests/fixtures/supervisor")
}

/// What one scenario run reported.
struct Outcome {
    shell: String,
    status: String,
    notes: Vec<String>,
    problems: Vec<String>,
    receipt: Option<CleanupReceipt>,
    receipt_text: String,
    dir: tempfile::TempDir,
    raw: String,
}

impl Outcome {
    fn context(&self) -> String {
        format!(
            "[{}] status {} receipt {} notes {:?}\n--- driver output:\n{}",
            self.shell, self.status, self.receipt_text, self.notes, self.raw
        )
    }

    fn receipt(&self) -> &CleanupReceipt {
        self.receipt
            .as_ref()
            .unwrap_or_else(|| panic!("no valid receipt: {}", self.context()))
    }
}

/// What a scenario needs besides its namespace.
#[derive(Clone, Copy, Default)]
struct Setup {
    /// A cgroup v2 directory of its own (SHFORGE_TEST_CGROUP in the driver).
    cgroup_v2: bool,
    /// Run the whole namespace in a cgroup v1 pids child with this pids.max.
    pids_max: Option<u32>,
    /// Every timed read on the supervisor's nap pipe (fd 55) starts only
    /// after its timeout fired (`support::late_read`).
    late_reads: bool,
    /// The namespace's PID 1 is a perl that waits for the driver only and
    /// reaps no orphan (a container whose init does not reap).
    no_reaper: bool,
}

/// A cgroup directory made for one test run and removed, with anything
/// left in it, when dropped.
struct TestCgroup {
    path: PathBuf,
}

impl TestCgroup {
    /// A fresh child of `parent`, or None when it cannot be made there.
    fn new(parent: &str) -> Option<TestCgroup> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let path = Path::new(parent).join(format!("shforge-test-{}-{n}", std::process::id()));
        std::fs::create_dir(&path).ok()?;
        Some(TestCgroup { path })
    }

    /// Empty `dir` (KILL its members, again and again) and remove it.
    fn remove(dir: &Path) {
        for _ in 0..500 {
            let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
            for pid in procs.split_whitespace() {
                let _ = Command::new("kill").args(["-s", "KILL", pid]).status();
            }
            if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        panic!("could not remove test cgroup {}", dir.display());
    }
}

impl Drop for TestCgroup {
    fn drop(&mut self) {
        // Children the supervisor failed to remove go first.
        if let Ok(entries) = std::fs::read_dir(&self.path) {
            for e in entries.flatten() {
                if e.path().is_dir() {
                    TestCgroup::remove(&e.path());
                }
            }
        }
        TestCgroup::remove(&self.path);
    }
}

/// Where tests make cgroup v2 children: the unified hierarchy of a hybrid
/// host, else /sys/fs/cgroup itself when it is cgroup2.
fn cgroup_v2_parent() -> Option<&'static str> {
    ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"]
        .into_iter()
        .find(|p| Path::new(p).join("cgroup.controllers").exists())
}

/// Skip (loudly) or, under SHFORGE_REQUIRE_SHELLS=1, fail.
fn unavailable(test: &str, what: &str) {
    if std::env::var("SHFORGE_REQUIRE_SHELLS").as_deref() == Ok("1") {
        panic!("{test} needs {what} (SHFORGE_REQUIRE_SHELLS=1 forbids skipping)");
    }
    support::loud(&format!("SKIPPING {test}: needs {what}"));
}

/// Whether the cgroups a setup needs can be made here (checked once per test).
fn setup_available(test: &str, setup: Setup) -> bool {
    if setup.cgroup_v2 {
        match cgroup_v2_parent().and_then(TestCgroup::new) {
            Some(_) => {}
            None => {
                unavailable(test, "a writable cgroup v2 hierarchy");
                return false;
            }
        }
    }
    if setup.pids_max.is_some() && TestCgroup::new("/sys/fs/cgroup/pids").is_none() {
        unavailable(
            test,
            "a writable cgroup v1 pids hierarchy at /sys/fs/cgroup/pids",
        );
        return false;
    }
    true
}

/// A process-limited storm runs alone: it starves whatever else runs on the
/// 2 cores (another scenario's grace period would end before its harness
/// got the CPU to exit on TERM).
static STORM: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn run_scenario_with(shell: &Shell, scenario: &str, setup: Setup) -> Outcome {
    let (_alone, _shared) = if setup.pids_max.is_some() {
        (Some(STORM.write().unwrap_or_else(|e| e.into_inner())), None)
    } else {
        (None, Some(STORM.read().unwrap_or_else(|e| e.into_inner())))
    };
    let _slot = Slot::take();
    let dir = tempfile::tempdir().expect("tempdir");
    let v2 = setup.cgroup_v2.then(|| {
        cgroup_v2_parent()
            .and_then(TestCgroup::new)
            .expect("cgroup v2 child")
    });
    let pids = setup.pids_max.map(|max| {
        let cg = TestCgroup::new("/sys/fs/cgroup/pids").expect("pids cgroup child");
        std::fs::write(cg.path.join("pids.max"), max.to_string()).expect("pids.max");
        cg
    });
    let mut cmd = match &pids {
        // The namespace, its driver and the supervisor all count against
        // pids.max: the shell joins the cgroup, then becomes the rest.
        Some(cg) => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(r#"echo $$ >"$1/cgroup.procs" && shift && exec "$@""#)
                .arg("sh")
                .arg(&cg.path);
            c
        }
        None => Command::new("env"),
    };
    if let Some(cg) = &v2 {
        cmd.env("SHFORGE_TEST_CGROUP", &cg.path);
    }
    if setup.late_reads {
        cmd.envs(late_read::env(
            55,
            false,
            &dir.path().join("late_reads.log"),
        ));
    }
    let out = cmd
        .args([
            "timeout",
            "-s",
            "KILL",
            "120",
            "unshare",
            "--pid",
            "--fork",
            "--mount-proc",
        ])
        .args(if setup.no_reaper {
            // waitpid for the driver alone: every other child of PID 1
            // stays a zombie.
            &[
                "perl",
                "-e",
                "my $p = fork // die; if (!$p) { exec @ARGV or die } waitpid($p, 0); exit($? >> 8)",
                "bash",
            ][..]
        } else {
            &["bash"][..]
        })
        .arg(fixtures().join("driver.sh"))
        .arg(shell.program())
        .arg(supervisor())
        .arg(dir.path())
        .arg(scenario)
        .stdin(Stdio::null())
        .output()
        .expect("unshare runs");
    // The namespace is gone: its cgroups can go too (after a look at what
    // the supervisor left in the v2 one).
    drop(pids);
    let mut leftovers = Vec::new();
    if let Some(cg) = &v2 {
        for e in std::fs::read_dir(&cg.path).unwrap().flatten() {
            if e.path().is_dir() {
                leftovers.push(format!("CGROUP_LEFT {}", e.path().display()));
            }
        }
    }
    drop(v2);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let (status, notes, problems) = driver_report(&stdout, scenario, leftovers);
    let receipt_path = dir.path().join("receipt.json");
    let receipt_text = std::fs::read_to_string(&receipt_path).unwrap_or_default();
    let receipt = CleanupReceipt::from_file(&receipt_path).ok();
    Outcome {
        shell: shell.name.clone(),
        status,
        notes,
        problems,
        receipt,
        receipt_text,
        dir,
        raw: format!("{stdout}--- stderr:\n{stderr}"),
    }
}

/// The driver's report on stdout: its `STATUS`, its `NOTE`s, and the
/// problems it saw (added to `problems`), one of them when it never said
/// `END` (but in `noproc`, which ends without it).
fn driver_report(
    stdout: &str,
    scenario: &str,
    mut problems: Vec<String>,
) -> (String, Vec<String>, Vec<String>) {
    let mut status = String::new();
    let mut notes = Vec::new();
    let mut ended = false;
    for line in stdout.lines() {
        if let Some(s) = line.strip_prefix("STATUS ") {
            status = s.to_owned();
        } else if let Some(n) = line.strip_prefix("NOTE ") {
            notes.push(n.to_owned());
        } else if line == "END" {
            ended = true;
        } else if line.starts_with("LEAK ")
            || line.starts_with("UNRELATED_HIT ")
            || line.starts_with("SERVICE_DEAD ")
        {
            problems.push(line.to_owned());
        }
    }
    if !ended && scenario != "noproc" {
        problems.push("driver did not finish".to_owned());
    }
    (status, notes, problems)
}

/// Run `scenario` under every bash (in parallel), apply the shared checks and
/// then `check`, and fail with every failure at once.
fn scenario(name: &str, check: impl Fn(&Outcome) + Sync) {
    scenario_with(name, Setup::default(), check)
}

fn scenario_with(name: &str, setup: Setup, check: impl Fn(&Outcome) + Sync) {
    if !support::require_root(name) || !setup_available(name, setup) {
        return;
    }
    let shells = support::bashes();
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = shells
            .iter()
            .map(|shell| {
                let check = &check;
                s.spawn(move || {
                    let out = run_scenario_with(shell, name, setup);
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        assert!(
                            out.problems.is_empty(),
                            "{:?}\n{}",
                            out.problems,
                            out.context()
                        );
                        check(&out);
                    }));
                    result.err().map(|e| {
                        let msg = e
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_default();
                        format!("{name} under {}: {msg}", shell.name)
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().expect("thread"))
            .collect()
    });
    support::report(name, &shells);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn expect_receipt(out: &Outcome, rc: Option<i32>, timed_out: bool) {
    let r = out.receipt();
    assert_eq!(
        (
            r.cleanup_confirmed,
            r.return_code,
            r.error.as_deref(),
            r.timed_out
        ),
        (true, rc, None, timed_out),
        "{}",
        out.context()
    );
    // The provider_kill driver cannot wait for the regrouped supervisor.
    if let Some(rc) = rc.filter(|_| out.status != "none") {
        assert_eq!(out.status, rc.to_string(), "{}", out.context());
    }
}

/// bash's own report of a job that died of a signal ("line 315: 3 Killed
/// ( harness_exec ) < /dev/null") must not reach the supervisor's stderr.
fn expect_no_job_noise(out: &Outcome) {
    let err = std::fs::read_to_string(out.dir.path().join("sup.err")).unwrap_or_default();
    for noise in [
        "harness_exec",
        "Killed",
        "Terminated",
        "User defined signal",
    ] {
        assert!(
            !err.contains(noise),
            "job status noise {noise:?} on the supervisor's stderr: {err}\n{}",
            out.context()
        );
    }
}

/// The receipt's stop report, which every run that launched has.
fn stop_of(out: &Outcome) -> &StopReport {
    out.receipt()
        .stop
        .as_ref()
        .unwrap_or_else(|| panic!("no stop report: {}", out.context()))
}

/// Read a file the harness wrote into the scenario directory.
fn scenario_file(out: &Outcome, name: &str) -> String {
    std::fs::read_to_string(out.dir.path().join(name))
        .unwrap_or_else(|e| panic!("{name}: {e}: {}", out.context()))
}

#[test]
fn exit_zero() {
    scenario("exit0", |o| {
        expect_receipt(o, Some(0), false);
        let s = stop_of(o);
        assert_eq!(
            (s.reason, s.harness_exited_by_itself, s.term_at, s.kill_at),
            (StopReason::Exit, true, None, None),
            "{}",
            o.context()
        );
        assert_eq!((s.reached_term, s.reached_kill, s.grace), (0, 0, None));
        assert!(s.began_at <= s.ended_at, "{}", o.context());
        assert!(o.receipt().zombies.is_empty(), "{}", o.context());
    });
}

#[test]
fn exit_zero_when_already_a_group_leader() {
    scenario("exit0_leader", |o| expect_receipt(o, Some(0), false));
}

#[test]
fn exit_three() {
    scenario("exit3", |o| expect_receipt(o, Some(3), false));
}

#[test]
fn signal_death_is_128_plus_n() {
    // SIGUSR1 is 10 on Linux.
    scenario("signal", |o| {
        expect_receipt(o, Some(138), false);
        expect_no_job_noise(o);
    });
}

#[test]
fn leader_exits_while_its_group_lives() {
    scenario("leader_exits", |o| {
        expect_receipt(o, Some(5), false);
        // The sweep TERMs what the leader left: its three sleeps at least.
        let s = stop_of(o);
        assert!(
            s.reason == StopReason::Exit && s.harness_exited_by_itself,
            "{}",
            o.context()
        );
        assert!(
            s.term_at.is_some() && s.reached_term >= 3,
            "{}",
            o.context()
        );
    });
}

#[test]
fn tree_of_children_and_grandchildren() {
    scenario("tree", |o| {
        expect_receipt(o, Some(143), false);
        expect_no_job_noise(o);
    });
}

#[test]
fn double_fork_storm_during_the_stop() {
    scenario("storm", |o| expect_receipt(o, Some(0), false));
}

#[test]
fn term_handler_that_daemonizes_and_exits() {
    scenario("term_setsid", |o| expect_receipt(o, Some(0), false));
}

#[test]
fn services_survive_daemons_of_the_stop_die() {
    scenario("services", |o| {
        assert!(
            o.notes.iter().any(|n| n.starts_with("services ")),
            "{}",
            o.context()
        );
        expect_receipt(o, Some(0), false);
    });
}

#[test]
fn term_ignoring_processes_are_killed() {
    scenario("ignore_term", |o| {
        expect_receipt(o, Some(143), false);
        expect_no_job_noise(o);
        // TERM did not suffice: KILL came once the grace period (1 s) was
        // over, to the two that ignore TERM at least.
        let s = stop_of(o);
        assert_eq!(
            (s.reason, s.signal.as_deref(), s.harness_exited_by_itself),
            (StopReason::Signal, Some("TERM"), false),
            "{}",
            o.context()
        );
        let (term, kill) = (s.term_at.unwrap(), s.kill_at.unwrap());
        assert!(kill > term, "{}", o.context());
        assert!(
            s.grace.unwrap() >= std::time::Duration::from_secs(1),
            "{}",
            o.context()
        );
        assert!(
            s.reached_term >= 3 && s.reached_kill >= 2,
            "{}",
            o.context()
        );
        assert!(s.ended_at >= kill, "{}", o.context());
    });
}

/// A harness whose orphan dies in the stop, under a PID 1 that never
/// reaps: the zombie is listed in the receipt, and cleanup is confirmed
/// (a zombie runs nothing).
#[test]
fn zombies_left_to_a_non_reaping_init_are_reported() {
    let setup = Setup {
        no_reaper: true,
        ..Setup::default()
    };
    scenario_with("zombie", setup, |o| {
        expect_receipt(o, Some(143), false);
        let z = &o.receipt().zombies;
        assert!(
            !z.is_empty() && z.iter().all(|z| z.ppid == 1 && z.start_time > 0),
            "{}",
            o.context()
        );
    });
}

/// The race those releases have, played on purpose (every nap starts after
/// its timeout): the stop and --end-services must end all the same.
/// A nap that waited for its lost timeout hung the supervisor for good.
#[test]
fn lost_read_timeouts_never_hang_the_stop() {
    let setup = Setup {
        late_reads: true,
        ..Setup::default()
    };
    let played = |o: &Outcome| {
        if late_read::flag_timer_bash(&o.shell) {
            let n = late_read::played(&o.dir.path().join("late_reads.log"));
            assert!(n > 0, "the race was never played: {}", o.context());
        }
    };
    scenario_with("ignore_term", setup, |o| {
        expect_receipt(o, Some(143), false);
        played(o);
    });
    scenario_with("end_services", setup, |o| {
        expect_receipt(o, Some(0), false);
        assert!(
            o.notes.iter().any(|n| n == "end_services status 0"),
            "{}",
            o.context()
        );
        played(o);
    });
}

#[test]
fn stopped_processes_are_reached() {
    scenario("stopped", |o| expect_receipt(o, Some(143), false));
}

#[test]
fn crafted_process_names_fool_nothing() {
    scenario("names", |o| {
        expect_receipt(o, Some(143), false);
        assert!(!Path::new("/tmp/pwned").exists(), "a crafted name ran code");
    });
}

#[test]
fn inherited_shellopts_and_bash_env_are_ignored() {
    scenario("hygiene", |o| {
        expect_receipt(o, Some(143), false);
        // The BASH_ENV file really was sourced (by the supervisor's bash).
        assert!(
            o.dir.path().join("bashenv.log").exists(),
            "BASH_ENV not active: {}",
            o.context()
        );
    });
}

#[test]
fn reused_group_id_is_not_signalled() {
    scenario("pid_reuse", |o| {
        assert!(
            o.notes.iter().any(|n| n.starts_with("reused ")),
            "the driver could not make the ID reused: {}",
            o.context()
        );
        expect_receipt(o, Some(143), false);
    });
}

#[test]
fn provider_group_kill_still_leaves_a_receipt() {
    scenario("provider_kill", |o| {
        assert!(
            o.notes.iter().any(|n| n == "first group ended with 137"),
            "{}",
            o.context()
        );
        expect_receipt(o, Some(7), false);
    });
}

/// A harness that forks all the time, stopped 30 times: the STOP a fork in
/// flight hands to its child after the CONT must not hold the harness past
/// the grace period (its TERM trap's exit 7, every time).
#[test]
fn harness_forking_all_the_time_exits_through_its_term_trap() {
    scenario("fork_loop", |o| {
        assert!(
            o.notes
                .iter()
                .any(|n| n == "fork_loop stops that missed the TERM trap: 0"),
            "{}",
            o.context()
        );
        expect_receipt(o, Some(7), false);
    });
}

#[test]
fn deadline_stops_a_long_sleep() {
    scenario("deadline", |o| {
        let r = o.receipt();
        assert!(
            r.cleanup_confirmed && r.timed_out && r.error.is_none(),
            "{}",
            o.context()
        );
        assert!(
            matches!(r.return_code, Some(143) | Some(137)),
            "{}",
            o.context()
        );
        assert_eq!(
            o.status,
            r.return_code.unwrap().to_string(),
            "{}",
            o.context()
        );
        expect_no_job_noise(o);
        // return_code is the CLI's own status: 137 only when KILL ended it.
        let s = stop_of(o);
        assert_eq!(
            (s.reason, s.signal.as_deref(), s.harness_exited_by_itself),
            (StopReason::Deadline, None, false),
            "{}",
            o.context()
        );
        assert!(
            s.term_at.is_some() && s.reached_term >= 1,
            "{}",
            o.context()
        );
        if r.return_code == Some(143) {
            assert!(s.kill_at.is_none(), "{}", o.context());
        }
    });
}

/// The deadline's timer and its sleep are gone (reaped, or zombies) when the
/// supervisor exits. A KILLed process still runs its exit for a moment, and
/// a sleep that holds 512 MiB takes tens of milliseconds to end: before
/// end_timer, the supervisor exited while that sleep still ran.
#[test]
fn the_deadline_timer_is_gone_when_the_supervisor_exits() {
    let shells = support::bashes();
    let sleep = support::which("sleep").expect("sleep on PATH");
    let python = support::which("python3").expect("python3 on PATH (the slow-to-end sleep)");
    for shell in &shells {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        // The supervisor's probe (`sleep 0.001`) gets the real sleep; the
        // timer's gets one that holds 512 MiB and says its PID in $READY.
        let fake = format!(
            "#!/bin/sh\ncase $1 in 0.001) exec '{}' \"$1\" ;; esac\nexec '{}' -c '{}' \"$READY\"\n",
            sleep.display(),
            python.display(),
            "import os, sys, time\nb = b\"x\" * (512 << 20)\n\
             open(sys.argv[1] + \".tmp\", \"w\").write(str(os.getpid()))\n\
             os.rename(sys.argv[1] + \".tmp\", sys.argv[1])\ntime.sleep(600)",
        );
        let fake_path = bin.join("sleep");
        std::fs::write(&fake_path, fake).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&fake_path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let ready = dir.path().join("ready");
        let receipt = dir.path().join("r.json");
        let harness = format!(
            "n=0; while [ ! -s \"$READY\" ] && [ $n -lt 1500 ]; do '{}' 0.02; n=$((n + 1)); done",
            sleep.display()
        );
        let mut c = shell.command(&supervisor());
        c.arg("--receipt")
            .arg(&receipt)
            .args(["--deadline", "60", "--", "sh", "-c", &harness])
            .env("READY", &ready)
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    bin.display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            );
        let out = support::run(c);
        let ctx = format!("{}: {:?}", shell.name, out);
        assert!(out.status.success(), "{ctx}");
        let pid = std::fs::read_to_string(&ready).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next());
        assert!(
            matches!(state, None | Some('Z')),
            "{ctx}: the timer's sleep {pid} is still there: {stat}"
        );
    }
    support::report(
        "the_deadline_timer_is_gone_when_the_supervisor_exits",
        &shells,
    );
}

#[test]
fn deadline_with_ten_digits_is_accepted() {
    scenario("deadline_big", |o| expect_receipt(o, Some(3), false));
}

/// Losing the first shell (the provider KILLs its group) while a long
/// harness runs is a stop: the harness is stopped and the receipt written
/// at once, not after the harness ends by itself 40 s later.
#[test]
fn provider_group_kill_stops_a_long_harness() {
    scenario("provider_kill_long", |o| {
        assert!(
            o.notes.iter().any(|n| n == "first group ended with 137"),
            "{}",
            o.context()
        );
        assert!(
            !o.notes.iter().any(|n| n.starts_with("timeout waiting")),
            "{}",
            o.context()
        );
        expect_receipt(o, Some(143), false);
    });
}

/// Started with `&` by a non-interactive shell (INT and QUIT ignored at
/// entry), the supervisor still stops on INT, and the harness does not
/// inherit INT or QUIT ignored.
#[test]
fn int_stops_a_supervisor_started_in_the_background() {
    scenario("int_bg", |o| {
        expect_receipt(o, Some(143), false);
        let mask = scenario_file(o, "sigign");
        let mask = mask.trim().trim_start_matches("SigIgn:").trim();
        let mask = u64::from_str_radix(mask, 16)
            .unwrap_or_else(|e| panic!("{mask:?}: {e}: {}", o.context()));
        assert_eq!(
            mask & 0x6,
            0,
            "the harness ignores INT or QUIT: {mask:x}: {}",
            o.context()
        );
    });
}

/// An exported SHELLOPTS: the harness sees the caller's options (nounset)
/// and none of the supervisor's (monitor: its jobs would get groups).
#[test]
fn harness_gets_the_callers_shellopts_only() {
    scenario("shellopts", |o| {
        expect_receipt(o, Some(0), false);
        let opts = scenario_file(o, "opts");
        assert_eq!(
            opts,
            "braceexpand:hashall:interactive-comments:nounset\nshared\n",
            "{}",
            o.context()
        );
    });
}

/// Any printable ASCII marker (base64 `+/=`, glob and quote characters)
/// reaches the harness unchanged and still finds a daemon of the stop.
#[test]
fn printable_marker_is_accepted_and_reaches() {
    scenario("marker", |o| {
        expect_receipt(o, Some(0), false);
        assert_eq!(
            scenario_file(o, "marker"),
            "ab+/=*?[x]$\"\\'~",
            "{}",
            o.context()
        );
    });
}

#[test]
fn deadline_under_a_centisecond_never_starts() {
    scenario("deadline_tiny", |o| {
        expect_receipt(o, None, true);
        assert_eq!(o.status, "124", "{}", o.context());
        assert!(!o.notes.iter().any(|n| n == "command started"));
    });
}

#[test]
fn hidden_proc_refuses_with_125() {
    scenario("noproc", |o| {
        assert_eq!(o.status, "125", "{}", o.context());
        let r = o.receipt();
        assert!(
            r.error.as_deref().is_some_and(|e| e.contains("/proc")),
            "{}",
            o.context()
        );
        assert_eq!(r.return_code, None);
        assert!(!r.timed_out);
        assert!(!o.notes.iter().any(|n| n == "command started"));
    });
}

/// Malformed arguments: exit 2 with a message, an error receipt when the
/// receipt path is known, and the command never started. Nothing is launched,
/// so these need no namespace.
#[test]
fn malformed_arguments_exit_2() {
    let shells = support::bashes();
    for shell in &shells {
        let dir = tempfile::tempdir().unwrap();
        let receipt = dir.path().join("r.json");
        let started = dir.path().join("started");
        let r = receipt.to_str().unwrap();
        let cmd = ["touch", started.to_str().unwrap()];
        let long_marker = "x".repeat(257);
        let with_receipt: Vec<Vec<&str>> = vec![
            vec!["--receipt", r, "--deadline", "1.", "--"],
            vec!["--receipt", r, "--deadline", ".5", "--"],
            vec!["--receipt", r, "--deadline", "-1", "--"],
            vec!["--receipt", r, "--deadline", "1e3", "--"],
            vec!["--receipt", r, "--deadline", "", "--"],
            vec!["--receipt", r, "--grace", "x", "--"],
            vec!["--receipt", r, "--marker", "a b", "--"],
            vec!["--receipt", r, "--marker", "", "--"],
            vec!["--receipt", r, "--marker", "a\tb", "--"],
            vec!["--receipt", r, "--marker", "caf\u{e9}", "--"],
            vec!["--receipt", r, "--marker", &long_marker, "--"],
            vec!["--receipt", r, "--deadline", "12345678901234567", "--"],
            vec!["--receipt", r, "--bogus", "--"],
            vec!["--receipt", r, "--receipt", r, "--"],
            vec!["--receipt", r, "stray", "--"],
            vec!["--deadline", "2", "--receipt", r, "--deadline", "3", "--"],
            vec!["--receipt", r],
            vec!["--receipt", r, "--", ""],
            vec!["--receipt", r, "--deadline"],
            vec!["--receipt", r, "--cgroup", "relative/dir", "--"],
            vec!["--receipt", r, "--cgroup", "", "--"],
            vec!["--receipt", r, "--cgroup", "none", "--cgroup", "none", "--"],
            vec!["--receipt", r, "--cgroup", "none", "--max-procs", "5", "--"],
            vec!["--receipt", r, "--cgroup", "/x", "--max-procs", "0", "--"],
            vec![
                "--receipt",
                r,
                "--cgroup",
                "/x",
                "--max-procs",
                "1234567890",
                "--",
            ],
        ];
        for args in &with_receipt {
            let _ = std::fs::remove_file(&receipt);
            let mut c = shell.command(&supervisor());
            c.args(args);
            if args.last() == Some(&"--") {
                c.args(cmd);
            }
            let out = support::run(c);
            let ctx = format!("{} {:?}: {:?}", shell.name, args, out);
            assert_eq!(out.status.code(), Some(2), "{ctx}");
            assert!(!out.stderr.is_empty(), "{ctx}");
            let rec = CleanupReceipt::from_file(&receipt).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            assert!(rec.error.is_some() && rec.return_code.is_none(), "{ctx}");
            assert!(!started.exists(), "{ctx}: the command ran");
        }
        for args in [
            vec!["--", "touch", started.to_str().unwrap()],
            vec!["--deadline", "1", "--", "touch", started.to_str().unwrap()],
            vec!["--receipt"],
            // --end-services writes no receipt, not even on a usage error.
            vec!["--end-services"],
            vec!["--end-services", r, "--bogus"],
            vec!["--end-services", r, "--grace", "soon"],
        ] {
            let mut c = shell.command(&supervisor());
            c.args(&args);
            let out = support::run(c);
            assert_eq!(out.status.code(), Some(2), "{} {:?}", shell.name, args);
            assert!(!started.exists());
        }
    }
    support::report("malformed_arguments_exit_2", &shells);
}

/// An error message with quotes, backslashes, control bytes and non-ASCII
/// still makes a valid receipt.
#[test]
fn error_receipt_is_valid_json_for_any_bytes() {
    let shells = support::bashes();
    for shell in &shells {
        let dir = tempfile::tempdir().unwrap();
        let receipt = dir.path().join("r.json");
        let mut c = shell.command(&supervisor());
        c.args(["--receipt", receipt.to_str().unwrap(), "--grace"])
            .arg("\"q\\ \t\n\x01 é \u{7f}")
            .args(["--", "true"]);
        let out = support::run(c);
        assert_eq!(out.status.code(), Some(2), "{}", shell.name);
        let rec = CleanupReceipt::from_file(&receipt).unwrap_or_else(|e| {
            panic!(
                "{}: {e}: {:?}",
                shell.name,
                std::fs::read_to_string(&receipt)
            )
        });
        let e = rec.error.unwrap();
        // Each byte of a non-ASCII character becomes '?' (no mojibake).
        assert!(
            e.contains("\"q\\ \t\n\u{1} ?? \u{7f}"),
            "{}: {e:?}",
            shell.name
        );
    }
    support::report("error_receipt_is_valid_json_for_any_bytes", &shells);
}

/// `env SHELLOPTS=xtrace`: nothing of the supervisor is traced, neither on
/// a usage error nor on a deadline that expires before launch.
#[test]
fn inherited_xtrace_traces_nothing() {
    let shells = support::bashes();
    for shell in &shells {
        let dir = tempfile::tempdir().unwrap();
        let receipt = dir.path().join("r.json");
        let r = receipt.to_str().unwrap();
        for (args, code) in [
            (vec!["--receipt", r, "--grace", "x", "--", "true"], 2),
            (vec!["--receipt", r, "--deadline", "0", "--", "true"], 124),
        ] {
            let mut c = shell.command(&supervisor());
            c.env("SHELLOPTS", "xtrace:verbose").args(&args);
            let out = support::run(c);
            let err = String::from_utf8_lossy(&out.stderr);
            let ctx = format!("{} {args:?}: {err}", shell.name);
            assert_eq!(out.status.code(), Some(code), "{ctx}");
            assert!(!err.lines().any(|l| l.starts_with('+')), "traced: {ctx}");
            assert!(!err.contains("reset_shell_state"), "verbose: {ctx}");
        }
    }
    support::report("inherited_xtrace_traces_nothing", &shells);
}

#[test]
fn generated_script_is_shellcheck_and_lint_clean() {
    let sup = supervisor();
    let out = support::run({
        let mut c = Command::new(support::shforge());
        c.args(["lint", "--dialect", "bash"]).arg(&sup);
        c
    });
    assert!(out.status.success(), "{out:?}");
    match Command::new("shellcheck").arg(&sup).output() {
        Ok(out) => assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        ),
        Err(_) => support::loud("SKIPPING shellcheck: not installed"),
    }
}

#[test]
fn receipt_path_that_is_a_directory_is_refused_with_2() {
    scenario("receipt_dir", |o| {
        assert_eq!(o.status, "2", "{}", o.context());
        assert!(
            !o.notes
                .iter()
                .any(|n| n.starts_with("command started") || n.starts_with("wrote ")),
            "{}",
            o.context()
        );
    });
}

#[test]
fn sleep_without_fractions_on_path_is_refused_with_125() {
    scenario("impostor_sleep", |o| {
        assert_eq!(o.status, "125", "{}", o.context());
        let r = o.receipt();
        assert_eq!(r.return_code, None, "{}", o.context());
        assert!(
            r.error
                .as_deref()
                .unwrap_or("")
                .contains("does not sleep 0.001 s"),
            "{}",
            o.context()
        );
        assert!(
            !o.notes.iter().any(|n| n == "command started"),
            "{}",
            o.context()
        );
    });
}

#[test]
fn empty_path_is_refused_with_125_and_a_receipt() {
    scenario("empty_path", |o| {
        assert_eq!(o.status, "125", "{}", o.context());
        let r = o.receipt();
        assert!(
            r.error
                .as_deref()
                .unwrap_or("")
                .contains("not found on PATH"),
            "{}",
            o.context()
        );
        assert!(
            !o.notes.iter().any(|n| n == "command started"),
            "{}",
            o.context()
        );
    });
}

#[test]
fn services_are_listed_and_end_services_ends_exactly_them() {
    scenario("end_services", |o| {
        expect_receipt(o, Some(0), false);
        let listed = o
            .notes
            .iter()
            .find_map(|n| n.strip_prefix("services "))
            .unwrap_or_else(|| panic!("no services note: {}", o.context()));
        let pids: Vec<u32> = listed.split(' ').map(|p| p.parse().unwrap()).collect();
        let r = o.receipt();
        let in_receipt: Vec<u32> = r.services.iter().map(|s| s.pid).collect();
        for pid in &pids {
            assert!(
                in_receipt.contains(pid),
                "service {pid} not listed: {}",
                o.context()
            );
        }
        assert!(
            r.services
                .iter()
                .all(|s| s.start_time > 0 && !s.argv0.is_empty()),
            "{}",
            o.context()
        );
        for bad in ["died in the stop", "still alive"] {
            assert!(
                !o.notes.iter().any(|n| n.contains(bad)),
                "{bad}: {}",
                o.context()
            );
        }
        assert!(
            o.notes.iter().any(|n| n == "end_services status 0"),
            "{}",
            o.context()
        );
        // The stranger on a service's recycled PID is an unrelated process:
        // the driver reports it (UNRELATED_HIT) if it was touched.
        assert!(
            o.notes.iter().any(|n| n.starts_with("reused ")),
            "PID not reused: {}",
            o.context()
        );
    });
}

#[test]
fn escapee_without_marker_is_caught_only_by_cgroup_containment() {
    let setup = Setup {
        cgroup_v2: true,
        ..Setup::default()
    };
    scenario_with("cgroup_escape", setup, |o| {
        expect_receipt(o, Some(143), false);
        assert_eq!(
            o.receipt().containment,
            Containment::Cgroup,
            "{}",
            o.context()
        );
        assert!(
            !o.notes.iter().any(|n| n.starts_with("cgroup left")),
            "{}",
            o.context()
        );
    });
    // No option: the supervisor's own cgroup, delegated (owned by this user,
    // writable, not the root), is found and used.
    scenario_with("cgroup_auto", setup, |o| {
        expect_receipt(o, Some(143), false);
        assert_eq!(
            o.receipt().containment,
            Containment::Cgroup,
            "{}",
            o.context()
        );
        assert!(
            !o.notes.iter().any(|n| n.starts_with("cannot join")),
            "{}",
            o.context()
        );
    });
    // The same process, /proc scanning only: out of reach (a known gap).
    scenario_with("proc_escape", setup, |o| {
        expect_receipt(o, Some(143), false);
        assert_eq!(
            o.receipt().containment,
            Containment::Proc,
            "{}",
            o.context()
        );
        assert!(
            o.notes.iter().any(|n| n == "escapee alive"),
            "{}",
            o.context()
        );
    });
}

#[test]
fn max_procs_without_a_pids_controller_is_refused_with_125() {
    let setup = Setup {
        cgroup_v2: true,
        ..Setup::default()
    };
    scenario_with("max_procs", setup, |o| {
        let Some(parent) = cgroup_v2_parent() else {
            return;
        };
        let controllers = std::fs::read_to_string(Path::new(parent).join("cgroup.subtree_control"))
            .unwrap_or_default();
        if controllers.split_whitespace().any(|c| c == "pids") {
            expect_receipt(o, Some(0), false);
        } else {
            assert_eq!(o.status, "125", "{}", o.context());
            assert!(
                o.receipt()
                    .error
                    .as_deref()
                    .unwrap_or("")
                    .contains("pids controller"),
                "{}",
                o.context()
            );
        }
    });
}

/// `--max-procs` without `--cgroup` uses the cgroup the supervisor finds
/// (its own, when delegated); with none found it refuses to launch (125).
#[test]
fn max_procs_without_a_cgroup_is_refused_with_125() {
    for shell in &support::bashes() {
        let dir = tempfile::tempdir().unwrap();
        let receipt = dir.path().join("r.json");
        let started = dir.path().join("started");
        let mut c = shell.command(&supervisor());
        c.args([
            "--receipt",
            receipt.to_str().unwrap(),
            "--max-procs",
            "50",
            "--",
        ])
        .args(["touch", started.to_str().unwrap()]);
        let out = support::run(c);
        let ctx = format!("{}: {:?}", shell.name, out);
        let rec = CleanupReceipt::from_file(&receipt).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        if out.status.code() == Some(0) {
            // A delegated cgroup with the pids controller was found.
            assert_eq!(rec.containment, Containment::Cgroup, "{ctx}");
            assert!(started.exists(), "{ctx}");
            support::loud("max-procs: this machine's own cgroup was usable");
        } else {
            assert_eq!(out.status.code(), Some(125), "{ctx}");
            let err = rec.error.as_deref().unwrap_or("");
            assert!(err.contains("--max-procs needs"), "{ctx}");
            assert!(!started.exists(), "{ctx}: the command ran");
        }
    }
    support::report("max_procs_no_cgroup", &support::bashes());
}

/// A harness whose processes double every 50 ms and ignore TERM, in a pids
/// cgroup (capped at 1,000) shared with the supervisor: the receipt must
/// come, confirmed, with nothing left alive.
fn fork_storm(setup: Setup) {
    scenario_with("fork_storm", setup, |o| {
        // The harness's own status is whatever the storm made of it (137
        // when KILLed, 254 when bash gave up on a fork first).
        let r = o.receipt();
        assert_eq!(
            (r.cleanup_confirmed, r.error.as_deref(), r.timed_out),
            (true, None, true),
            "{}",
            o.context()
        );
        if let Some(ms) = o.notes.iter().find_map(|n| n.strip_prefix("storm stop ")) {
            support::loud(&format!(
                "fork storm ({}) under {}: supervisor ran {ms} (deadline 2 s, grace 1 s)",
                if setup.cgroup_v2 { "cgroup" } else { "proc" },
                o.shell
            ));
        }
    });
}

#[test]
fn fork_storm_in_a_pids_cgroup_is_stopped_by_proc_scanning() {
    fork_storm(Setup {
        pids_max: Some(1000),
        ..Setup::default()
    });
}

#[test]
fn fork_storm_in_a_pids_cgroup_is_stopped_by_cgroup_containment() {
    fork_storm(Setup {
        cgroup_v2: true,
        pids_max: Some(1000),
        ..Setup::default()
    });
}

#[test]
fn cgroup_that_is_not_a_writable_v2_directory_is_refused_with_125() {
    let shells = support::bashes();
    for shell in &shells {
        let dir = tempfile::tempdir().unwrap();
        let receipt = dir.path().join("r.json");
        let started = dir.path().join("started");
        // A plain directory, a missing one, and a cgroup v1 one where present.
        let mut cases = vec![
            dir.path().to_str().unwrap().to_owned(),
            "/nonexistent/cgroup".to_owned(),
        ];
        if Path::new("/sys/fs/cgroup/pids/cgroup.procs").exists() {
            cases.push("/sys/fs/cgroup/pids".to_owned());
        }
        for cg in &cases {
            let _ = std::fs::remove_file(&receipt);
            let mut c = shell.command(&supervisor());
            c.args(["--receipt", receipt.to_str().unwrap(), "--cgroup", cg, "--"])
                .args(["touch", started.to_str().unwrap()]);
            let out = support::run(c);
            let ctx = format!("{} --cgroup {cg}: {:?}", shell.name, out);
            assert_eq!(out.status.code(), Some(125), "{ctx}");
            let rec = CleanupReceipt::from_file(&receipt).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            assert!(
                rec.error
                    .as_deref()
                    .unwrap_or("")
                    .contains("not a writable cgroup v2 directory"),
                "{ctx}"
            );
            assert!(!started.exists(), "{ctx}: the command ran");
        }
    }
    support::report(
        "cgroup_that_is_not_a_writable_v2_directory_is_refused_with_125",
        &shells,
    );
}

/// What tests/fixtures/supervisor/forge.sh reported for one bash.
struct Forged {
    shell: String,
    statuses: Vec<String>,
    lines: Vec<String>,
    raw: String,
}

impl Forged {
    fn has(&self, line: &str) -> bool {
        self.lines.iter().any(|l| l == line)
    }

    fn context(&self) -> String {
        format!("[{}]\n{}", self.shell, self.raw)
    }

    /// Every --end-services run exited `want`, and the report ended.
    fn expect_statuses(&self, want: &[&str]) {
        assert_eq!(self.statuses, want, "{}", self.context());
        assert!(self.has("END"), "{}", self.context());
    }

    /// `name` still runs and caught no signal; nothing hit the forger.
    fn expect_untouched(&self, name: &str) {
        assert!(self.has(&format!("ALIVE {name}")), "{}", self.context());
        assert!(
            !self.lines.iter().any(|l| l.starts_with("HIT ")),
            "{}",
            self.context()
        );
    }
}

/// Run forge.sh CASE under every bash (in a PID namespace of its own, as
/// its PID 1, with `pid1`), in parallel.
fn forge_all(case: &str, namespace: bool) -> Vec<Forged> {
    let shells = support::bashes();
    let out = std::thread::scope(|s| {
        let handles: Vec<_> = shells
            .iter()
            .map(|shell| {
                s.spawn(move || {
                    let _slot = Slot::take();
                    let dir = tempfile::tempdir().expect("tempdir");
                    let mut c = Command::new("timeout");
                    c.args(["-s", "KILL", "300"]);
                    if namespace {
                        c.args(["unshare", "--fork", "--pid", "--mount-proc", "--kill-child"]);
                    }
                    c.arg("bash")
                        .arg(fixtures().join("forge.sh"))
                        .arg(shell.program())
                        .arg(supervisor())
                        .arg(dir.path())
                        .arg(case);
                    let out = support::run(c);
                    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
                    let err =
                        std::fs::read_to_string(dir.path().join("sup.err")).unwrap_or_default();
                    let lines: Vec<String> = stdout.lines().map(str::to_owned).collect();
                    Forged {
                        shell: shell.name.clone(),
                        statuses: lines
                            .iter()
                            .filter_map(|l| l.strip_prefix("STATUS ").map(str::to_owned))
                            .collect(),
                        lines,
                        raw: format!(
                            "{stdout}--- supervisor stderr:\n{err}--- forge stderr:\n{}",
                            String::from_utf8_lossy(&out.stderr)
                        ),
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    support::report(&format!("forge {case}"), &shells);
    out
}

/// Each forged receipt: every --end-services run exits `statuses`, and
/// `untouched` victims run on without having seen any signal.
fn forged_refused(case: &str, statuses: &[&str], untouched: &[&str]) {
    if !support::require_root(case) {
        return;
    }
    for f in forge_all(case, false) {
        f.expect_statuses(statuses);
        for v in untouched {
            f.expect_untouched(v);
        }
    }
}

#[test]
fn end_services_ends_a_marked_service_it_can_prove() {
    if !support::require_root("end_services_good") {
        return;
    }
    for f in forge_all("good", false) {
        f.expect_statuses(&["0"]);
        assert!(f.has("DEAD svc"), "{}", f.context());
    }
}

#[test]
fn end_services_refuses_a_process_without_the_marker() {
    forged_refused("unmarked", &["2"], &["v"]);
}

#[test]
fn end_services_refuses_a_marker_that_is_not_exactly_the_runs() {
    forged_refused("wrong_marker", &["2", "2", "2"], &["v1", "v2", "v3"]);
}

#[test]
fn end_services_refuses_services_without_a_marker() {
    forged_refused("marker_null", &["2"], &["v"]);
}

#[test]
fn end_services_decodes_an_escaped_marker_exactly() {
    if !support::require_root("escaped_marker") {
        return;
    }
    for f in forge_all("escaped_marker", false) {
        f.expect_statuses(&["2", "0"]);
        assert!(f.has("ALIVE v") && f.has("DEAD svc"), "{}", f.context());
        assert!(
            !f.lines.iter().any(|l| l.starts_with("HIT v ")),
            "{}",
            f.context()
        );
    }
}

#[test]
fn end_services_refuses_pid_1_and_pid_0() {
    forged_refused("pid1", &["2"], &[]);
    forged_refused("pid0", &["2", "2", "2"], &[]);
}

#[test]
fn end_services_refuses_pid_1_of_its_namespace() {
    if !support::require_root("pid1_ns") {
        return;
    }
    for f in forge_all("pid1_ns", true) {
        f.expect_statuses(&["2"]);
        assert!(
            !f.lines.iter().any(|l| l.starts_with("NOTE not PID 1")),
            "{}",
            f.context()
        );
        assert!(
            !f.lines.iter().any(|l| l.starts_with("HIT ")),
            "{}",
            f.context()
        );
    }
}

#[test]
fn end_services_refuses_the_caller_and_its_ancestors() {
    // Both carry the run's marker: only the caller rule protects them.
    forged_refused("caller", &["2"], &[]);
    forged_refused("parent", &["2"], &[]);
}

#[test]
fn end_services_refuses_the_callers_group_and_session() {
    forged_refused("group", &["2"], &["v"]);
    forged_refused("session", &["2"], &["v"]);
}

#[test]
fn end_services_refuses_a_whole_receipt_for_one_bad_entry() {
    forged_refused("mixed", &["2"], &["svc"]);
}

#[test]
fn end_services_refuses_every_truncation() {
    if !support::require_root("truncated") {
        return;
    }
    for f in forge_all("truncated", false) {
        f.expect_statuses(&[]);
        assert!(
            !f.lines.iter().any(|l| l.starts_with("NOTE length")),
            "a truncated receipt was not refused with 2: {}",
            f.context()
        );
        assert!(
            f.lines.iter().any(|l| l.starts_with("NOTE tried ")),
            "{}",
            f.context()
        );
        f.expect_untouched("svc");
        f.expect_untouched("svc2");
    }
}

#[test]
fn end_services_refuses_other_layouts() {
    // Pretty-printed, one line (the layout of older receipts), a services
    // list hidden in an extra key, text after the end.
    forged_refused("reformatted", &["2", "2", "2", "2"], &["svc"]);
}

#[test]
fn end_services_refuses_what_is_not_a_regular_file_at_once() {
    if !support::require_root("not_regular") {
        return;
    }
    for f in forge_all("not_regular", false) {
        // FIFO, link to a FIFO, directory, device, socket, missing.
        f.expect_statuses(&["2", "2", "2", "2", "2", "2"]);
        assert!(f.has("NOTE left as they were"), "{}", f.context());
    }
}

#[test]
fn end_services_reads_a_megabyte_receipt() {
    if !support::require_root("big") {
        return;
    }
    for f in forge_all("big", false) {
        f.expect_statuses(&["0"]);
        let took = f.lines.iter().find(|l| l.starts_with("NOTE read in"));
        support::loud(&format!("{}: 1 MB receipt: {took:?}", f.shell));
    }
}

/// What is at a receipt path, for the checks that it was left as it was.
fn kind_of(path: &Path) -> String {
    use std::os::unix::fs::FileTypeExt;
    match std::fs::symlink_metadata(path) {
        Err(_) => "missing".into(),
        Ok(m) if m.file_type().is_symlink() => {
            format!("link to {}", std::fs::read_link(path).unwrap().display())
        }
        Ok(m) if m.file_type().is_fifo() => "fifo".into(),
        Ok(m) if m.file_type().is_socket() => "socket".into(),
        Ok(m) if m.file_type().is_char_device() => "char device".into(),
        Ok(m) if m.is_dir() => "dir".into(),
        Ok(_) => "file".into(),
    }
}

/// A receipt path that is a FIFO, a device, a socket or a directory, or a
/// link to one: refused at once with 2, the command never started, the
/// path left as it was; a link to a regular file is replaced (the file it
/// named is untouched); a FIFO the harness puts there during the run is
/// refused at the end (2), not written into.
#[test]
fn receipt_targets_that_are_not_regular_files_are_refused_with_2() {
    if !support::require_root("receipt_targets") {
        return;
    }
    let shells = support::bashes();
    for shell in &shells {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let started = d.join("started");
        let run = |receipt: &Path, cmd: &[&str]| {
            let mut c = Command::new("timeout");
            c.args(["-s", "KILL", "60", shell.program()])
                .arg(supervisor())
                .arg("--receipt")
                .arg(receipt)
                .arg("--");
            c.args(cmd);
            support::run(c)
        };
        let mk = |args: &[&str]| {
            let st = Command::new(args[0]).args(&args[1..]).status().unwrap();
            assert!(st.success(), "{args:?}");
        };
        let p = |n: &str| d.join(n).to_str().unwrap().to_owned();
        mk(&["mkfifo", &p("fifo")]);
        mk(&["mknod", &p("null"), "c", "1", "3"]);
        mk(&["mkdir", &p("dir")]);
        mk(&[
            "python3",
            "-c",
            "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])",
            &p("sock"),
        ]);
        for (link, to) in [
            ("fifo_link", "fifo"),
            ("null_link", "null"),
            ("dir_link", "dir"),
            ("sock_link", "sock"),
        ] {
            std::os::unix::fs::symlink(d.join(to), d.join(link)).unwrap();
        }
        let touch = ["touch", started.to_str().unwrap()];
        for name in [
            "fifo",
            "null",
            "dir",
            "sock",
            "fifo_link",
            "null_link",
            "dir_link",
            "sock_link",
        ] {
            let target = d.join(name);
            let before = kind_of(&target);
            let out = run(&target, &touch);
            let ctx = format!("{} {name}: {out:?}", shell.name);
            assert_eq!(out.status.code(), Some(2), "{ctx}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(err.lines().count(), 1, "{ctx}");
            assert!(err.contains("not a regular file"), "{ctx}");
            assert_eq!(kind_of(&target), before, "{ctx}");
            assert!(!started.exists(), "{ctx}: the command ran");
        }
        // A link to a regular file: replaced by the receipt, never written
        // through; a dangling one likewise.
        let victim = d.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&victim, d.join("file_link")).unwrap();
        std::os::unix::fs::symlink(d.join("nowhere"), d.join("dangling")).unwrap();
        for name in ["file_link", "dangling"] {
            let out = run(&d.join(name), &["true"]);
            let ctx = format!("{} {name}: {out:?}", shell.name);
            assert_eq!(out.status.code(), Some(0), "{ctx}");
            assert_eq!(kind_of(&d.join(name)), "file", "{ctx}");
            CleanupReceipt::from_file(&d.join(name)).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        }
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(!d.join("nowhere").exists());
        // The harness makes the receipt path a FIFO while it runs.
        let late = d.join("late.json");
        let out = run(&late, &["mkfifo", late.to_str().unwrap()]);
        let ctx = format!("{} late FIFO: {out:?}", shell.name);
        assert_eq!(out.status.code(), Some(2), "{ctx}");
        assert_eq!(kind_of(&late), "fifo", "{ctx}");
        // Nothing else was left in the directory: no temporary file.
        let mut names: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "dangling",
                "dir",
                "dir_link",
                "fifo",
                "fifo_link",
                "file_link",
                "late.json",
                "null",
                "null_link",
                "sock",
                "sock_link",
                "victim"
            ],
            "{}",
            shell.name
        );
    }
    support::report("receipt_targets", &shells);
}
