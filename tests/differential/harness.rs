//! Builds and runs generated programs in a scratch crate.
//!
//! The crate lives in `target/tmp/gradmacro-difftest/<label>/` (built into
//! `target/tmp/gradmacro-difftest/target/`), is its own workspace, depends on the macro by path (the working tree's `gradmacro/`,
//! or `GRADMACRO_DIFFTEST_MACRO_DIR`) and reuses the workspace's
//! `Cargo.lock`, so it needs nothing that the workspace's own build did not
//! already fetch. Its root has `#![deny(warnings)]`: a warning in an
//! expansion is a failure.
//!
//! Each case is one module `src/p<id>.rs` holding the program, the same
//! program without `#[differentiate]` (in `mod plain`), its dual-number copy
//! and the glue. Compile errors are blamed on cases by the file and line
//! they point at (the program's lines, the plain copy's, the dual copy's or
//! the glue's): an error in the plain copy means the generator wrote invalid
//! Rust (kind `generator`), one only in the program's lines is the macro's.
//! A case that cannot be blamed that way is found by building halves. A build that does not finish in `GRADMACRO_DIFFTEST_BUILD_SECS`
//! (default 1800) fails the test. A run that crashes (a stack overflow aborts) or hangs is blamed
//! on the case it had started (a hang: no progress for
//! `GRADMACRO_DIFFTEST_STALL_SECS`, default 60), and resumed without it.

use super::dualize;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// One program to check.
#[derive(Clone, Debug)]
pub struct Case {
    pub id: usize,
    pub seed: u64,
    pub source: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// `compile`, `value`, `grad`, `adjoint`, `acc`, `panic`, `crash`,
    /// `hang`, or (problems of the test itself) `generator`, `oracle`,
    /// `oracle-compile`, `fd`, `dualize`.
    pub kind: String,
    /// What a shrunk program must reproduce: the kind, and for compile
    /// errors the message with names masked.
    pub key: String,
    pub msg: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Ok {
        points: usize,
        tried: usize,
        fd: usize,
    },
    Skip {
        tried: usize,
    },
    Fail(Failure),
}

#[derive(Clone)]
struct Prepared {
    id: usize,
    text: String,
    regions: dualize::Regions,
}

pub struct TestCrate {
    dir: PathBuf,
    bin: String,
    release: bool,
    /// Seconds spent in cargo and in the generated binary.
    pub build_secs: f64,
    pub run_secs: f64,
    pub builds: usize,
}

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn macro_dir() -> PathBuf {
    match std::env::var_os("GRADMACRO_DIFFTEST_MACRO_DIR") {
        Some(d) => PathBuf::from(d),
        None => manifest_dir().join("gradmacro"),
    }
}

/// One target directory for every scratch crate (the differential test's,
/// the regression test's, debug and release): their dependencies are built
/// once.
fn target_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("gradmacro-difftest")
        .join("target")
}

fn env_secs(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(default)
}

fn fail(kind: &str, key: &str, msg: String) -> Outcome {
    Outcome::Fail(Failure {
        kind: kind.into(),
        key: key.into(),
        msg,
    })
}

/// The message with names and numbers masked, so that a shrunk program
/// with other names still counts as the same error.
fn mask(msg: &str) -> String {
    let mut out = String::new();
    let mut in_tick = false;
    for c in msg.chars() {
        match c {
            '`' => {
                in_tick = !in_tick;
                out.push_str(if in_tick { "`_" } else { "`" });
            }
            _ if in_tick => {}
            '0'..='9' => {
                if !out.ends_with('#') {
                    out.push('#');
                }
            }
            _ => out.push(c),
        }
    }
    out
}

fn tail(s: &str, lines: usize) -> String {
    let v: Vec<&str> = s.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

impl TestCrate {
    pub fn new(label: &str) -> TestCrate {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join("gradmacro-difftest")
            .join(label);
        let src = dir.join("src");
        std::fs::create_dir_all(&src).unwrap();
        let bin = format!("gradmacro-difftest-{label}");
        let manifest = format!(
            "[package]\nname = \"{bin}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\ngradmacro = {{ path = {:?} }}\nnum-traits = \"0.2\"\n\n\
             # Its own workspace: it sits inside the gradmacro workspace's target dir.\n\
             [workspace]\n\n\
             [profile.dev]\ndebug = false\nincremental = false\n\n\
             # The macro expands a thousand programs per build: optimised, in a\n\
             # fraction of the time. (Its debug assertions stay on.)\n\
             [profile.dev.build-override]\nopt-level = 3\n\n\
             [profile.release]\nincremental = false\n",
            macro_dir().display().to_string()
        );
        write_if_changed(&dir.join("Cargo.toml"), &manifest);
        // The workspace's versions: no resolution, no download. (Cargo
        // prunes the copy to what the scratch crate uses.)
        let _ = std::fs::copy(manifest_dir().join("Cargo.lock"), dir.join("Cargo.lock"));
        write_if_changed(&src.join("dual.rs"), include_str!("dual.rs"));
        write_if_changed(&src.join("runner.rs"), include_str!("runner.rs"));
        write_if_changed(&src.join("rng.rs"), include_str!("../support/rng.rs"));
        TestCrate {
            dir,
            bin,
            release: !cfg!(debug_assertions),
            build_secs: 0.0,
            run_secs: 0.0,
            builds: 0,
        }
    }

    /// Builds the cases and runs them; one outcome per case, in order.
    pub fn run(&mut self, cases: &[Case]) -> Vec<Outcome> {
        let mut results: BTreeMap<usize, Outcome> = BTreeMap::new();
        let mut prepared = Vec::new();
        for c in cases {
            match dualize::dualize(&c.source) {
                Ok((sig, dual)) => {
                    let (text, regions) = dualize::module(c.id, c.seed, &c.source, &sig, &dual);
                    prepared.push(Prepared {
                        id: c.id,
                        text,
                        regions,
                    });
                }
                Err(e) => {
                    results.insert(c.id, fail("dualize", "dualize", e));
                }
            }
        }
        let mut failed = BTreeMap::new();
        self.isolate(&prepared, &mut failed);
        for (id, f) in failed {
            results.insert(id, Outcome::Fail(f));
        }
        let good: Vec<&Prepared> = prepared
            .iter()
            .filter(|p| !results.contains_key(&p.id))
            .collect();
        if !good.is_empty() {
            if let Some(err) = self.build(&good) {
                panic!("the cases that built separately do not build together:\n{err}");
            }
            for (id, o) in self.execute() {
                results.insert(id, o);
            }
        }
        cases
            .iter()
            .map(|c| {
                results
                    .remove(&c.id)
                    .unwrap_or_else(|| fail("crash", "lost", "no result was reported".into()))
            })
            .collect()
    }

    /// Finds the cases that do not compile, recording why in `failed`.
    fn isolate(&mut self, cases: &[Prepared], failed: &mut BTreeMap<usize, Failure>) {
        let mut active: Vec<&Prepared> = cases
            .iter()
            .filter(|c| !failed.contains_key(&c.id))
            .collect();
        while !active.is_empty() {
            let Some(stderr) = self.build(&active) else {
                return;
            };
            let blamed = blame(&stderr, &active);
            if !blamed.is_empty() {
                for (id, f) in blamed {
                    failed.entry(id).or_insert(f);
                }
                active.retain(|c| !failed.contains_key(&c.id));
                continue;
            }
            if active.len() == 1 {
                failed.insert(
                    active[0].id,
                    Failure {
                        kind: "compile".into(),
                        key: "compile: unattributed".into(),
                        msg: tail(&stderr, 40),
                    },
                );
                return;
            }
            let before = failed.len();
            let (a, b) = active.split_at(active.len() / 2);
            let (a, b): (Vec<&Prepared>, Vec<&Prepared>) = (a.to_vec(), b.to_vec());
            self.isolate_refs(&a, failed);
            self.isolate_refs(&b, failed);
            if failed.len() == before {
                panic!("the build fails as a whole but every half builds:\n{stderr}");
            }
            active.retain(|c| !failed.contains_key(&c.id));
        }
    }

    fn isolate_refs(&mut self, cases: &[&Prepared], failed: &mut BTreeMap<usize, Failure>) {
        let owned: Vec<Prepared> = cases.iter().map(|c| (*c).clone()).collect();
        self.isolate(&owned, failed);
    }

    /// Writes the crate for `cases` and builds it: `None` on success, else
    /// the compiler's messages.
    fn build(&mut self, cases: &[&Prepared]) -> Option<String> {
        // Files whose text is unchanged keep their times, so that building
        // the cases the isolation has just built is no second compilation.
        let src = self.dir.join("src");
        let wanted: BTreeSet<String> = cases.iter().map(|c| format!("p{}.rs", c.id)).collect();
        for entry in std::fs::read_dir(&src).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name.starts_with('p') && name.ends_with(".rs") && !wanted.contains(&name) {
                std::fs::remove_file(&path).unwrap();
            }
        }
        let mut main = String::from(
            "//! Generated by the differential test of gradmacro.\n#![deny(warnings)]\n\nmod dual;\n// The program generator's draws are not all needed here.\n#[allow(dead_code)]\nmod rng;\nmod runner;\n",
        );
        for c in cases {
            write_if_changed(&src.join(format!("p{}.rs", c.id)), &c.text);
            main.push_str(&format!("mod p{};\n", c.id));
        }
        main.push_str("\nfn main() {\n    runner::main(&[\n");
        for c in cases {
            main.push_str(&format!("        p{}::PROG,\n", c.id));
        }
        main.push_str("    ]);\n}\n");
        write_if_changed(&src.join("main.rs"), &main);

        let start = Instant::now();
        let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        cmd.arg("build")
            .arg("--quiet")
            .arg("--message-format=short")
            .current_dir(&self.dir)
            .env("CARGO_TARGET_DIR", target_dir())
            .env_remove("CARGO_BUILD_TARGET")
            .env_remove("RUSTC_WRAPPER")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if self.release {
            cmd.arg("--release");
        }
        let mut child = cmd.spawn().expect("cannot run cargo");
        let mut stderr = child.stderr.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            s
        });
        let limit = Duration::from_secs(env_secs("GRADMACRO_DIFFTEST_BUILD_SECS", 1800));
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "building {} cases did not finish in {} s: does an expansion not terminate?",
                    cases.len(),
                    limit.as_secs()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let stderr = reader.join().unwrap_or_default();
        self.build_secs += start.elapsed().as_secs_f64();
        self.builds += 1;
        if status.success() {
            return None;
        }
        if !stderr.contains("src/p") {
            panic!(
                "the scratch crate in {} does not build, and no case is to blame:\n{stderr}",
                self.dir.display()
            );
        }
        Some(stderr)
    }

    fn binary(&self) -> PathBuf {
        target_dir()
            .join(if self.release { "release" } else { "debug" })
            .join(&self.bin)
    }

    /// Runs the built binary to the end, restarting it past any case that
    /// crashed or hung.
    fn execute(&mut self) -> BTreeMap<usize, Outcome> {
        let start = Instant::now();
        let mut results = BTreeMap::new();
        let mut skip: Vec<usize> = Vec::new();
        let stall = Duration::from_secs(env_secs("GRADMACRO_DIFFTEST_STALL_SECS", 60));
        loop {
            let mut child = Command::new(self.binary())
                .env(
                    "DIFFTEST_SKIP",
                    skip.iter()
                        .map(|i| i.to_string())
                        .collect::<Vec<_>>()
                        .join(","),
                )
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("cannot run the generated test binary");
            let stdout = child.stdout.take().unwrap();
            let mut stderr = child.stderr.take().unwrap();
            let err_thread = std::thread::spawn(move || {
                let mut s = String::new();
                let _ = stderr.read_to_string(&mut s);
                s
            });
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
            let mut started: Option<usize> = None;
            let mut done = false;
            let mut hung = false;
            loop {
                match rx.recv_timeout(stall) {
                    Ok(line) => {
                        let words: Vec<&str> = line.splitn(3, ' ').collect();
                        match words.as_slice() {
                            ["START", id] => started = id.parse().ok(),
                            ["DONE"] => {
                                done = true;
                            }
                            ["PROG", id, rest] => {
                                let id: usize = id.parse().unwrap();
                                results.insert(id, parse_outcome(rest));
                                skip.push(id);
                                started = None;
                            }
                            _ => {}
                        }
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        hung = true;
                        let _ = child.kill();
                        break;
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
            let status = child.wait().unwrap();
            let err = err_thread.join().unwrap_or_default();
            if done {
                break;
            }
            match started {
                Some(id) => {
                    let (kind, msg) = if hung {
                        ("hang", format!("no progress for {} s", stall.as_secs()))
                    } else {
                        (
                            "crash",
                            format!("the test process died ({status}): {}", tail(&err, 6)),
                        )
                    };
                    results.insert(id, fail(kind, kind, msg));
                    skip.push(id);
                }
                None => {
                    panic!("the generated test binary failed outside any case ({status}):\n{err}")
                }
            }
        }
        self.run_secs += start.elapsed().as_secs_f64();
        results
    }
}

/// `OK <points> <tried> <fd>`, `SKIP <tried>` or `FAIL <kind> <message>`.
fn parse_outcome(rest: &str) -> Outcome {
    let words: Vec<&str> = rest.split(' ').collect();
    let num = |i: usize| -> usize { words.get(i).and_then(|w| w.parse().ok()).unwrap_or(0) };
    match words.first() {
        Some(&"OK") => Outcome::Ok {
            points: num(1),
            tried: num(2),
            fd: num(3),
        },
        Some(&"SKIP") => Outcome::Skip { tried: num(1) },
        Some(&"FAIL") => {
            let mut parts = rest.splitn(3, ' ').skip(1);
            let kind = parts.next().unwrap_or("?");
            let msg = parts.next().unwrap_or("");
            fail(kind, kind, msg.to_string())
        }
        _ => fail("crash", "crash", format!("unreadable result {rest:?}")),
    }
}

/// Blames compiler errors on cases: `src/p<id>.rs:<line>:<col>: error...`.
fn blame(stderr: &str, cases: &[&Prepared]) -> BTreeMap<usize, Failure> {
    let mut out: BTreeMap<usize, Failure> = BTreeMap::new();
    let mut elsewhere = Vec::new();
    for line in stderr.lines() {
        let Some((file, rest)) = line.split_once(".rs:") else {
            continue;
        };
        let mut parts = rest.splitn(3, ':');
        let (Some(l), Some(_col), Some(msg)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let Ok(l) = l.parse::<usize>() else { continue };
        let msg = msg.trim();
        if !msg.starts_with("error") {
            continue;
        }
        let file = file.trim();
        let Some(id) = file
            .strip_prefix("src/p")
            .and_then(|s| s.parse::<usize>().ok())
        else {
            elsewhere.push(line.to_string());
            continue;
        };
        let Some(c) = cases.iter().find(|c| c.id == id) else {
            continue;
        };
        let r = &c.regions;
        let within = |(a, b): (usize, usize)| (a..=b).contains(&l);
        let (kind, region) = if within(r.user) {
            ("compile", "program")
        } else if within(r.plain) {
            ("generator", "program without the macro")
        } else if within(r.dual) {
            ("oracle-compile", "dual copy")
        } else {
            ("compile", "glue calling f_grad/f_adjoint")
        };
        let text = msg.split_once(": ").map_or(msg, |(_, m)| m);
        let failure = Failure {
            kind: kind.into(),
            key: format!("{kind}: {}", mask(text)),
            msg: format!("{msg} (line {l}, in the {region})"),
        };
        // The plain copy's errors come first: the same error shows in the
        // program's lines, where it is not the macro's.
        match out.get(&id) {
            Some(f) if f.kind == "generator" || kind != "generator" => {}
            _ => {
                out.insert(id, failure);
            }
        }
    }
    if !elsewhere.is_empty() && out.is_empty() {
        panic!(
            "the generated crate's own files do not compile:\n{}",
            elsewhere.join("\n")
        );
    }
    out
}

fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).unwrap();
    }
}
