//! `juju-sim run <scenario.yaml>`: run a scenario and print a readable log.

fn main() -> std::process::ExitCode {
    juju_sim::scenario::main()
}
