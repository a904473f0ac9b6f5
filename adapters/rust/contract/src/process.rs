//! Processes: every process group a client spawned, killed on every exit path
//! (normal end, error, panic, SIGTERM/SIGINT/SIGHUP).

use std::collections::BTreeSet;
use std::sync::Mutex;

static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// Remembers a spawned process group.
pub fn register(pgid: i32) {
    GROUPS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(pgid);
}

/// Forgets a process group (it was killed and reaped).
pub fn unregister(pgid: i32) {
    GROUPS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&pgid);
}

/// SIGKILL to the whole group.
pub fn kill_group(pgid: i32) {
    if pgid > 1 {
        // SAFETY: kill(2) with a negative pid signals the process group; no memory is touched.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

/// Kills every process group still registered.
pub fn kill_children() {
    let groups: Vec<i32> = std::mem::take(&mut *GROUPS.lock().unwrap_or_else(|p| p.into_inner()))
        .into_iter()
        .collect();
    for g in groups {
        kill_group(g);
    }
}

/// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread (call it first in
/// main, so every later thread inherits the mask; std resets the mask of a
/// spawned child) and runs `on_signal` on a watcher thread when one arrives.
pub fn watch_signals(on_signal: fn(i32)) {
    // SAFETY: plain sigset operations on a local set; pthread_sigmask changes only this thread's mask.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    };
    std::thread::spawn(move || loop {
        let mut sig: libc::c_int = 0;
        // SAFETY: sigwait reads the set and writes the signal number into a local.
        let rc = unsafe { libc::sigwait(&set, &mut sig) };
        if rc == 0 {
            on_signal(sig);
        }
    });
}
