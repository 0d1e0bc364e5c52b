//! The `crosspickle` binary: everything is in the library; [`crosspickle::cli::main`] returns
//! the exit code.

fn main() {
    std::process::exit(crosspickle::cli::main());
}
