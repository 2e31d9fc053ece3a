//! `hook-rusage OUT CMD [ARGS…]`: runs CMD, waits for it with `wait4`, and appends to OUT one
//! line `maxrss_kib minor_faults user_us sys_us` of its resource usage (the process and the
//! children it waited for: a hook's hook tools and command stand-ins), then exits with CMD's
//! status. `hook-bench` puts it before the controller's hook command to tell where a hook's time
//! goes (its own code or the kernel) and its peak RSS; `/usr/bin/time` gives the same fields,
//! but CPU times only in hundredths of a second, too coarse for hooks of a few milliseconds.

use std::io::Write;
use std::os::unix::process::ExitStatusExt;

fn main() {
    std::process::exit(match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("hook-rusage: {e}");
            127
        }
    });
}

fn run() -> Result<i32, String> {
    let mut args = std::env::args_os().skip(1);
    let (Some(out), Some(cmd)) = (args.next(), args.next()) else {
        return Err("usage: hook-rusage OUT CMD [ARGS…]".into());
    };
    let child = std::process::Command::new(&cmd)
        .args(args)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", cmd.to_string_lossy()))?;
    let pid = libc::pid_t::try_from(child.id()).map_err(|e| e.to_string())?;
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value of that plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not waited for yet (`child` is never waited on: the
    // handle is dropped without a wait); `status` and `usage` are valid for writes.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if waited != pid {
        return Err(format!("wait4: {}", std::io::Error::last_os_error()));
    }
    let micros = |t: libc::timeval| t.tv_sec * 1_000_000 + t.tv_usec;
    let line = format!(
        "{} {} {} {}\n",
        usage.ru_maxrss,
        usage.ru_minflt,
        micros(usage.ru_utime),
        micros(usage.ru_stime)
    );
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&out)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .map_err(|e| format!("cannot append to {}: {e}", out.to_string_lossy()))?;
    let status = std::process::ExitStatus::from_raw(status);
    Ok(status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}
