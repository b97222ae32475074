//! The extension's allocator: the system's, except that an allocation it cannot satisfy ends the
//! process with one line on stderr and exit code 2 (bad input: a network too large for this
//! machine), where Rust's default prints "memory allocation of N bytes failed" and aborts
//! (SIGABRT, a core dump, no word of what to change). Reached only with the memory guard off
//! (`--max-memory off`) or when the estimate falls short (`hopsim_core::footprint`); nothing
//! has been written then (a run folder is written after the run), and the spool folder it
//! leaves is removed by the next run (`hopsim.results.spool`).

use std::alloc::{GlobalAlloc, Layout, System};

pub struct Guarded;

// SAFETY: every call is forwarded to `System` unchanged; only a null result is acted on.
unsafe impl GlobalAlloc for Guarded {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if p.is_null() {
            out_of_memory(new_size);
        }
        p
    }
}

/// Write the message and exit, allocating nothing (the allocator has just failed).
#[cold]
fn out_of_memory(size: usize) -> ! {
    let mut buf = [0u8; 320];
    let mut n = 0;
    let mut put = |s: &[u8]| {
        let k = s.len().min(buf.len() - n);
        buf[n..n + k].copy_from_slice(&s[..k]);
        n += k;
    };
    put(b"error: memory: the run needs more memory than this machine could give (an allocation of ");
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut v = size;
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    put(&digits[i..]);
    put(b" bytes failed); use a smaller network or fewer flows, or keep --max-memory at auto, which refuses such a run before it starts; nothing written\n");
    exit_with(&buf[..n])
}

#[cfg(unix)]
fn exit_with(msg: &[u8]) -> ! {
    extern "C" {
        fn write(fd: i32, buf: *const u8, count: usize) -> isize;
        fn _exit(status: i32) -> !;
    }
    // SAFETY: write(2) on stderr from a buffer we own, then _exit(2): neither allocates.
    unsafe {
        write(2, msg.as_ptr(), msg.len());
        _exit(2)
    }
}

#[cfg(not(unix))]
fn exit_with(_msg: &[u8]) -> ! {
    std::process::abort()
}
