//! Batch embedding runs at the scheduling priority of the thread that asks for it: the app
//! imports on a low-priority job thread so that the window's process keeps the cores, and
//! that only holds if the threads doing the embedding are as low as the job.

use crate::common::bert;
use somna_engine::embed::Embedder;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The nice value of every live thread of this process named `name` (Linux' /proc).
fn nice_of_threads_named(name: &str) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim_end() == name)
        })
        .filter_map(|t| {
            let stat = std::fs::read_to_string(t.path().join("stat")).ok()?;
            // After "pid (comm) ", the fields run from the state (3rd) on; nice is the 19th.
            let rest = &stat[stat.rfind(')')? + 2..];
            rest.split(' ').nth(16)?.parse().ok()
        })
        .collect()
}

/// Set in the process [`batches_embed_at_the_priority_of_the_thread_that_asked`] starts.
const ALONE: &str = "SOMNA_TEST_PRIORITY_ALONE";

#[test]
fn batches_embed_at_the_priority_of_the_thread_that_asked() {
    // Other tests of this binary embed at the same time from threads of normal priority,
    // and their workers bear the same name: the check runs in a process of its own, this
    // test binary started again for this test alone.
    if std::env::var_os(ALONE).is_none() {
        let name = "priority::batches_embed_at_the_priority_of_the_thread_that_asked";
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", name, "--test-threads=1", "--nocapture"])
            .env(ALONE, "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    // Loaded here, at normal priority, before the low-priority caller exists.
    let embedder = bert();
    let texts: Vec<String> = (0..600)
        .map(|i| format!("Memory number {i} mentions the lighthouse, the ferry and a long walk along the coast on day {}.", i % 40))
        .collect();
    let running = Arc::new(AtomicBool::new(true));
    let caller = {
        let running = running.clone();
        std::thread::spawn(move || {
            thread_priority::set_current_thread_priority(thread_priority::ThreadPriority::Min)
                .expect("lower this thread's priority");
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let out = embedder.embed(&refs);
            running.store(false, Ordering::Release);
            out.map(|v| v.len())
        })
    };
    let mut seen = Vec::new();
    while running.load(Ordering::Acquire) {
        seen.extend(nice_of_threads_named("somna-embed"));
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    assert_eq!(caller.join().unwrap().unwrap(), 600);
    if std::thread::available_parallelism().map_or(1, |n| n.get()) > 1 {
        assert!(!seen.is_empty(), "the batches ran on no worker thread");
    }
    assert!(
        seen.iter().all(|&n| n == 19),
        "worker threads' nice values while a nice-19 caller embedded: {seen:?}"
    );
}
