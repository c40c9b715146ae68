//! A clear message, instead of a bare "Segmentation fault", when generated code faults.
//!
//! Kernels are compiled C without bounds checks: an out-of-range node (`x as Node` with `x` past
//! the graph) or an edge id past the edges makes the hardware fault; an integer division by zero
//! or `MIN / -1` raises SIGFPE (`grail_cpu.h`'s division helpers test the operands, since the C
//! compiler may fold a division it can see); an array index past the end traps (SIGILL). While a
//! kernel runs, a
//! process-wide handler for SIGSEGV, SIGBUS, SIGFPE and SIGILL
//! writes which kernel faulted and what that usually means, and exits with status
//! [`FAULT_EXIT_CODE`]. Outside kernels the handler puts back the previous one (Rust's, which
//! reports stack overflows) and lets the fault happen again under it.
//!
//! The handler only calls `write` and `_exit`, which are async-signal-safe, and reads the kernel
//! name from an atomic pointer set before the kernel starts.

use std::ffi::CString;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Once};

use crate::running::Running;

/// The exit status of a process whose kernel faulted (EX_SOFTWARE).
pub const FAULT_EXIT_CODE: i32 = 70;

const SIGNALS: [libc::c_int; 4] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGILL];

/// The running kernel's name (a C string owned by a [`KernelGuard`]'s caller), or null.
static CURRENT: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
/// How many runs are inside a kernel (several programs may run at once in one process).
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
/// Set by the first thread that reports a fault.
static REPORTING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The handlers that were installed before ours, by position in [`SIGNALS`].
static mut PREVIOUS: [std::mem::MaybeUninit<libc::sigaction>; 4] = [std::mem::MaybeUninit::uninit(); 4];
static INSTALL: Once = Once::new();

/// A kernel's name, kept as a C string for the handler (and as text for a watchdog).
pub(crate) struct KernelName(CString, Arc<str>);

impl KernelName {
    pub fn new(name: &str) -> KernelName {
        KernelName(CString::new(name.replace('\0', "?")).expect("no NUL left"), name.into())
    }
}

/// Marks a kernel as running until dropped.
pub(crate) struct KernelGuard {
    _running: Running,
}

impl KernelGuard {
    pub fn enter(name: &KernelName) -> KernelGuard {
        INSTALL.call_once(install);
        CURRENT.store(name.0.as_ptr().cast_mut(), Ordering::Release);
        ACTIVE.fetch_add(1, Ordering::AcqRel);
        KernelGuard { _running: Running::enter(name.1.clone()) }
    }
}

impl Drop for KernelGuard {
    fn drop(&mut self) {
        if ACTIVE.fetch_sub(1, Ordering::AcqRel) == 1 {
            CURRENT.store(std::ptr::null_mut(), Ordering::Release);
        }
    }
}

fn install() {
    for (i, &signal) in SIGNALS.iter().enumerate() {
        // SAFETY: a zeroed sigaction is valid; sigaction(2) fills PREVIOUS[i] before any fault
        // can reach our handler, and nothing else writes it afterwards.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_fault as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            let previous = (&raw mut PREVIOUS[i]).cast::<libc::sigaction>();
            libc::sigaction(signal, &action, previous);
        }
    }
}

fn write_all(bytes: &[u8]) {
    // SAFETY: write(2) on stderr with a valid buffer; async-signal-safe.
    unsafe {
        libc::write(2, bytes.as_ptr().cast(), bytes.len());
    }
}

extern "C" fn on_fault(signal: libc::c_int, _info: *mut libc::siginfo_t, _context: *mut libc::c_void) {
    let name = CURRENT.load(Ordering::Acquire);
    if ACTIVE.load(Ordering::Acquire) == 0 || name.is_null() {
        // Not in a kernel: put the previous handler back; returning re-runs the faulting
        // instruction under it.
        if let Some(i) = SIGNALS.iter().position(|&s| s == signal) {
            // SAFETY: PREVIOUS[i] was filled by install() before this handler was installed.
            unsafe {
                libc::sigaction(signal, (&raw const PREVIOUS[i]).cast::<libc::sigaction>(), std::ptr::null_mut())
            };
        }
        return;
    }
    // Several threads may fault at once: one reports and ends the process, the others wait.
    if REPORTING.swap(true, Ordering::AcqRel) {
        loop {
            // SAFETY: pause(2) is async-signal-safe; the reporting thread's _exit ends us.
            unsafe { libc::pause() };
        }
    }
    write_all(b"error: kernel `");
    // SAFETY: `name` points at a live NUL-terminated string while ACTIVE > 0.
    let len = unsafe { libc::strlen(name) };
    write_all(unsafe { std::slice::from_raw_parts(name.cast::<u8>(), len) });
    if signal == libc::SIGFPE {
        write_all(
            b"` stopped on an arithmetic fault: an integer division or remainder by zero, or of the \
              type's minimum by -1\n",
        );
    } else if signal == libc::SIGILL {
        write_all(b"` stopped on a trap: an array index past the array's end\n");
    } else {
        write_all(
            b"` stopped on an invalid memory access: most likely a node, edge or element index \
              out of range (an `as Node` or `as Edge` conversion of a value that is not an id of \
              this graph, or a neighbour index past the degree)\n",
        );
    }
    // SAFETY: _exit(2) is async-signal-safe and does not return.
    unsafe { libc::_exit(FAULT_EXIT_CODE) };
}
