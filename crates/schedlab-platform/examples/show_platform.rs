//! Prints `Platform::show()` for each argument (a built-in name, `smp:N` or a .toml path),
//! until the `schedlab show platform` command exists:
//! `cargo run -p schedlab-platform --example show_platform -- rpi5 xeon-2s-64`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut status = ExitCode::SUCCESS;
    for spec in std::env::args().skip(1) {
        match schedlab_platform::Platform::resolve(&spec) {
            Ok(p) => println!("{}", p.show()),
            Err(e) => {
                eprintln!("error: {e}");
                status = ExitCode::FAILURE;
            }
        }
    }
    status
}
