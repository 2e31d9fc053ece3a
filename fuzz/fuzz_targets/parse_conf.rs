//! Fuzz the slurm.conf, gres.conf and override parsers. Oracle: no panic, and whenever a
//! parsed model also renders, parsing the rendered text gives the same model back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slurm_charms::slurm::{
    OverrideScope, parse_gres_conf, parse_overrides, parse_slurm_conf, render_gres_conf,
    render_slurm_conf,
};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(conf) = parse_slurm_conf(text, "fuzz") {
        if let Ok(out) = render_slurm_conf(&conf) {
            let back = parse_slurm_conf(&out, "rendered").expect("rendered slurm.conf parses");
            assert_eq!(back, conf.normalized());
        }
    }
    if let Ok(gres) = parse_gres_conf(text, "fuzz") {
        if let Ok(out) = render_gres_conf(&gres) {
            let back = parse_gres_conf(&out, "rendered").expect("rendered gres.conf parses");
            assert_eq!(back, gres.normalized());
        }
    }
    for scope in [
        OverrideScope::SlurmConf,
        OverrideScope::Partition,
        OverrideScope::Node,
    ] {
        let _ = parse_overrides(text, scope);
    }
});
