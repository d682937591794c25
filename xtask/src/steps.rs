//! The steps behind each task, as plain commands run from the workspace root.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::services;

/// Crates whose test binaries cannot link outside their host runtime (the Node addon) or whose
/// tests run through their own runner (the Python package, via pytest).
const BINDING_CRATES: [&str; 2] = ["flexiq-node", "flexiq-py"];

/// Which store a bench run is about.
#[derive(Clone, Copy)]
pub(crate) enum BenchTarget {
    Sqlite,
    Pg,
    Redis,
}

pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
}

pub(crate) fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root().join("target"))
}

pub(crate) fn run(label: &str, cmd: &mut Command) -> Result<(), String> {
    println!("\n==> {label}");
    let started = Instant::now();
    let status =
        cmd.current_dir_if_unset(root()).status().map_err(|e| format!("{label}: cannot start: {e}"))?;
    println!("==> {label}: {status} in {:.1} s", started.elapsed().as_secs_f64());
    if status.success() {
        Ok(())
    } else {
        Err(format!("{label} failed ({status})"))
    }
}

trait CurrentDir {
    fn current_dir_if_unset(&mut self, dir: PathBuf) -> &mut Self;
}

impl CurrentDir for Command {
    fn current_dir_if_unset(&mut self, dir: PathBuf) -> &mut Self {
        if self.get_current_dir().is_none() {
            self.current_dir(dir);
        }
        self
    }
}

pub(crate) fn cargo(args: &[&str]) -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.args(args);
    c
}

pub(crate) fn excluding_bindings(mut args: Vec<&'static str>) -> Vec<&'static str> {
    for c in BINDING_CRATES {
        if root().join("crates").join(c).exists() {
            args.extend(["--exclude", c]);
        }
    }
    args
}

/// fmt, clippy, services, Rust tests, a five-minute soak, Python, Node, then short drains
/// through each SDK checked for stalls between handler starts.
pub(crate) fn ci() -> Result<(), String> {
    let started = Instant::now();
    // A clean clone gains nothing from incremental caches, which would double the size of
    // the target directory on a machine whose disk may be small.
    std::env::set_var("CARGO_INCREMENTAL", "0");
    run("cargo fmt --check", &mut cargo(&["fmt", "--all", "--check"]))?;
    run(
        "cargo clippy",
        &mut cargo(&["clippy", "--workspace", "--all-targets", "--all-features", "--", "-D", "warnings"]),
    )?;
    services::ensure()?;
    rust_tests()?;
    crate::soak::ci()?;
    python()?;
    node()?;
    crate::latency::drain_gaps_ci()?;
    println!("\nxtask ci: every step passed in {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// Every Rust test in the workspace, each store's conformance suite included.
pub(crate) fn rust_tests() -> Result<(), String> {
    let args = excluding_bindings(vec!["test", "--workspace", "--all-features"]);
    run("cargo test (Rust, all stores)", &mut cargo(&args))
}

pub(crate) fn venv() -> Result<PathBuf, String> {
    let venv = target_dir().join("py-venv");
    if !venv.join("bin/python").exists() {
        run("python venv", Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    }
    run(
        "pip install build and test tools",
        Command::new(venv.join("bin/pip")).args([
            "install",
            "-q",
            "--disable-pip-version-check",
            "maturin>=1.9.4,<2",
            "pytest>=8",
            "mypy>=1.10",
        ]),
    )?;
    Ok(venv)
}

/// Builds the Python package into `venv` with `maturin develop`, optimised or not.
pub(crate) fn maturin_develop(venv: &Path, release: bool) -> Result<(), String> {
    let py_crate = root().join("crates/flexiq-py");
    let (what, profile) = if release {
        ("maturin develop --release (flexiq Python package)", &["--release"][..])
    } else {
        ("maturin develop (flexiq Python package, debug build)", &[][..])
    };
    run(
        what,
        Command::new(venv.join("bin/maturin"))
            .arg("develop")
            .args(profile)
            .args(["-q", "-m"])
            .arg(py_crate.join("Cargo.toml"))
            .env("VIRTUAL_ENV", venv)
            .env(
                "PATH",
                format!("{}:{}", venv.join("bin").display(), std::env::var("PATH").unwrap_or_default()),
            ),
    )
}

/// Builds the Python package into a virtualenv and runs pytest and the stub check.
pub(crate) fn python() -> Result<(), String> {
    let venv = venv()?;
    let py_crate = root().join("crates/flexiq-py");
    maturin_develop(&venv, false)?;
    run(
        "pytest (Python SDK, all stores)",
        Command::new(venv.join("bin/python"))
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .current_dir(&py_crate),
    )?;
    run(
        "mypy stubtest (Python stubs match the module)",
        Command::new(venv.join("bin/python"))
            .args(["-m", "mypy.stubtest", "flexiq", "--allowlist"])
            .arg(py_crate.join("stubtest-allowlist.txt"))
            .current_dir(&py_crate),
    )?;
    run(
        "async twin stubs (_aio.pyi is what tools/aio_stub.py makes)",
        Command::new(venv.join("bin/python")).args(["tools/aio_stub.py", "--check"]).current_dir(&py_crate),
    )
}

/// Builds the Node addon and runs node --test and tsc.
pub(crate) fn node() -> Result<(), String> {
    let dir = root().join("crates/flexiq-node");
    run(
        "npm install (builds the Node addon)",
        Command::new("npm").args(["install", "--no-audit", "--no-fund"]).current_dir(&dir),
    )?;
    run("node --test (Node SDK, all stores)", Command::new("npm").args(["test"]).current_dir(&dir))?;
    run(
        "tsc --noEmit (Node types)",
        Command::new("npx").args(["tsc", "-p", "tsconfig.json", "--noEmit"]).current_dir(&dir),
    )
}

/// Criterion benches, or the SDK bench scripts.
pub(crate) fn bench(store: Option<crate::BenchStore>, py: bool, node: bool) -> Result<(), String> {
    if py {
        let venv = venv()?;
        let py_crate = root().join("crates/flexiq-py");
        run(
            "maturin develop --release",
            Command::new(venv.join("bin/maturin"))
                .args(["develop", "--release", "-q", "-m"])
                .arg(py_crate.join("Cargo.toml"))
                .env("VIRTUAL_ENV", &venv),
        )?;
        return run(
            "Python SDK bench",
            Command::new(venv.join("bin/python")).arg(py_crate.join("bench/bench.py")),
        );
    }
    if node {
        let dir = root().join("crates/flexiq-node");
        if !dir.join("node_modules").exists() {
            run(
                "npm install (builds the Node addon)",
                Command::new("npm").args(["install", "--no-audit", "--no-fund"]).current_dir(&dir),
            )?;
        }
        run("npm run build", Command::new("npm").args(["run", "build"]).current_dir(&dir))?;
        return run("Node SDK bench", Command::new("node").arg("bench/bench.mjs").current_dir(&dir));
    }
    match store.map(Into::into) {
        None | Some(BenchTarget::Sqlite) => {
            run(
                "bench SQLite store",
                &mut cargo(&["bench", "-p", "flexiq-store-sqlite", "--bench", "store"]),
            )?;
            run("bench runtime worker", &mut cargo(&["bench", "-p", "flexiq-runtime", "--bench", "worker"]))?;
            run(
                "bench workflow host loop on SQLite",
                &mut cargo(&["bench", "-p", "flexiq-runtime", "--bench", "workflow"]),
            )
        }
        Some(BenchTarget::Pg) => {
            services::ensure()?;
            run("bench PostgreSQL store", &mut cargo(&["bench", "-p", "flexiq-store-pg", "--bench", "pg"]))?;
            run(
                "bench workflow host loop on PostgreSQL",
                &mut cargo(&[
                    "bench",
                    "-p",
                    "flexiq-runtime",
                    "--features",
                    "postgres",
                    "--bench",
                    "workflow",
                    "--",
                    "workflow/postgres",
                ]),
            )
        }
        Some(BenchTarget::Redis) => {
            services::ensure()?;
            run("bench Redis store", &mut cargo(&["bench", "-p", "flexiq-store-redis", "--bench", "store"]))
        }
    }
}

/// The demo on an embedded SQLite file.
pub(crate) fn demo() -> Result<(), String> {
    run("flexiq demo", &mut cargo(&["run", "--release", "-p", "flexiq-cli", "--", "demo"]))
}

/// The Python wheel and the Node package into target/dist.
pub(crate) fn dist() -> Result<(), String> {
    let out = target_dir().join("dist");
    std::fs::create_dir_all(&out).map_err(|e| format!("create {}: {e}", out.display()))?;
    let venv = venv()?;
    run(
        "maturin build (Python wheel)",
        Command::new(venv.join("bin/maturin"))
            .args(["build", "--release", "-m"])
            .arg(root().join("crates/flexiq-py/Cargo.toml"))
            .arg("-o")
            .arg(&out),
    )?;
    let dir = root().join("crates/flexiq-node");
    run("npm install", Command::new("npm").args(["install", "--no-audit", "--no-fund"]).current_dir(&dir))?;
    run("npm run build", Command::new("npm").args(["run", "build"]).current_dir(&dir))?;
    run(
        "npm pack (Node package)",
        Command::new("npm").arg("pack").arg("--pack-destination").arg(&out).current_dir(&dir),
    )?;
    println!("xtask dist: artifacts in {}", out.display());
    Ok(())
}

/// Rust API docs for the engine crates.
pub(crate) fn docs() -> Result<(), String> {
    let args = excluding_bindings(vec!["doc", "--workspace", "--no-deps", "--all-features"]);
    run("cargo doc", &mut cargo(&args))
}
