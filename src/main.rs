fn main() {
    std::process::exit(crosspickle::cli::main());
}
