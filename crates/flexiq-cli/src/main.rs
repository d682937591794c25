//! The `flexiq` binary: everything happens in [`flexiq_cli::run_cli`].

fn main() {
    std::process::exit(flexiq_cli::run_cli(std::env::args().collect()));
}
