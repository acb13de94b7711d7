//! The `shforge` command line: all of it lives in the library
//! ([`shforge::cli`]), so this binary reaches nothing the library keeps
//! private.

fn main() -> std::process::ExitCode {
    shforge::cli::main()
}
