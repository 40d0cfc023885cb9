//! Background work yields the CPU to the window. The webview (a separate WebKit process)
//! paints, lays out and, under software GL, rasterises on the same cores that embed an
//! import or run a sleep cycle; at equal priority those jobs starve it and every frame and
//! timer of the page runs late. So the app's long jobs run on threads of the lowest
//! scheduling priority (on Linux the thread's nice value, 19), and so does the global
//! rayon pool that clustering, projection and the index fan out to. Batch embedding starts
//! its worker threads from the thread that asks for it, so an import's embedding inherits
//! the job's priority. The engine's query pool (one search's embedding) is its own pool and
//! keeps normal priority, so a search from the window is not queued behind an import.
//!
//! Nothing is refused if lowering fails (it cannot on Linux for one's own threads): the work
//! then runs at normal priority, as before.

use thread_priority::{set_current_thread_priority, ThreadPriority};

/// Lowers the calling thread to the lowest normal priority. Threads it starts inherit it.
pub fn lower_current_thread() {
    if let Err(e) = set_current_thread_priority(ThreadPriority::Min) {
        eprintln!("somna: could not lower a background thread's priority: {e:?}");
    }
}

/// Starts `work` on a new thread of the lowest priority, named `name`.
pub fn spawn_background<F>(name: String, work: F) -> std::io::Result<std::thread::JoinHandle<()>>
where
    F: FnOnce() + Send + 'static,
{
    std::thread::Builder::new().name(name).spawn(move || {
        lower_current_thread();
        work()
    })
}

/// A rayon pool whose threads run at the lowest priority (the thread count from
/// `RAYON_NUM_THREADS`, as rayon's default).
fn background_pool_builder() -> rayon::ThreadPoolBuilder {
    rayon::ThreadPoolBuilder::new()
        .thread_name(|i| format!("somna-bg-{i}"))
        .start_handler(|_| lower_current_thread())
}

/// Makes rayon's global pool a background pool. Call first thing in `main`, before anything
/// uses rayon (after that the global pool exists and this reports it and changes nothing).
pub fn background_global_pool() {
    if let Err(e) = background_pool_builder().build_global() {
        eprintln!("somna: the global thread pool was already started: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calling thread's nice value, from /proc (field 19 of its stat line).
    fn current_nice() -> i32 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").expect("stat");
        // The command name (field 2) is in parentheses and may hold spaces: count after it.
        let rest = &stat[stat.rfind(')').expect("comm") + 2..];
        rest.split(' ')
            .nth(16)
            .expect("nice field")
            .parse()
            .expect("nice value")
    }

    #[test]
    fn a_background_thread_runs_at_the_lowest_priority_and_the_caller_keeps_its_own() {
        let before = current_nice();
        let (tx, rx) = std::sync::mpsc::channel();
        spawn_background("somna-test-job".into(), move || {
            let me = std::thread::current().name().map(str::to_owned);
            tx.send((current_nice(), me)).unwrap();
        })
        .unwrap()
        .join()
        .unwrap();
        let (nice, name) = rx.recv().unwrap();
        assert_eq!(nice, 19, "a job thread runs at nice 19");
        assert_eq!(name.as_deref(), Some("somna-test-job"));
        assert_eq!(current_nice(), before, "the caller's priority is untouched");
    }

    #[test]
    fn every_thread_of_a_background_pool_runs_at_the_lowest_priority() {
        let pool = background_pool_builder().num_threads(2).build().unwrap();
        let nices: Vec<i32> = pool.broadcast(|_| current_nice());
        assert_eq!(nices, vec![19, 19]);
    }
}
