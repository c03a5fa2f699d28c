//! The `act` command line.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    eprintln!("act: nothing to run yet");
    std::process::exit(2);
}
