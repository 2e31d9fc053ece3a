//! Test-only Juju simulator: models a Juju model and plays the unit agent, running a charm's
//! real `dispatch` per hook with real hook-tool executables on `PATH`.
