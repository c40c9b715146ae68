//! Device memory and launches through the driver API, on the context's null stream.
//!
//! The GPU executor keeps raw `CUdeviceptr`s in `grail_ctx` (a `#[repr(C)]` struct the kernels
//! receive by value), so it owns its allocations as [`DeviceBuffer`]s rather than typed slices.
//! Every call runs on the legacy null stream: copies are ordered after the kernels before them,
//! and a copy back to the host waits for them. Out of memory names what was being allocated,
//! its size and what the device has free.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::result;
use cudarc::driver::sys::{self, CUdeviceptr};
use cudarc::driver::{CudaContext, CudaFunction, DriverError};

use super::device::driver_error;
use crate::error::{Result, RuntimeError};

/// A device allocation of `bytes` bytes, freed on drop (unless it is a view of another
/// buffer's memory, [`DeviceBuffer::view`]).
pub(crate) struct DeviceBuffer {
    ptr: CUdeviceptr,
    bytes: usize,
    context: Arc<CudaContext>,
    owned: bool,
}

/// The most bytes grail's buffers may hold on one device (`--device-memory-limit`: a small GPU
/// made of a large one), and what each device's hold now, by ordinal.
static MEMORY_LIMIT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(u64::MAX);
static MEMORY_USED: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

/// Limits the bytes grail's buffers may hold on each device (`None`: what the device has).
/// Allocations past the limit fail as the device's own out-of-memory does, naming what grew.
pub fn set_memory_limit(bytes: Option<u64>) {
    MEMORY_LIMIT.store(bytes.unwrap_or(u64::MAX), std::sync::atomic::Ordering::Relaxed);
}

/// Counts `bytes` more (or, with `free`, fewer) on device `ordinal`; an error when the limit
/// would be passed.
fn account(ordinal: usize, bytes: usize, free: bool, what: &str) -> Result<()> {
    let mut used = MEMORY_USED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if used.len() <= ordinal {
        used.resize(ordinal + 1, 0);
    }
    if free {
        used[ordinal] = used[ordinal].saturating_sub(bytes as u64);
        return Ok(());
    }
    let limit = MEMORY_LIMIT.load(std::sync::atomic::Ordering::Relaxed);
    if used[ordinal] + bytes as u64 > limit {
        return Err(RuntimeError::OutOfMemory {
            what: format!(
                "GPU memory for {what}: {} requested on device {ordinal}, which already holds {} of its \
                 --device-memory-limit of {}; try more devices (--devices) or a larger limit",
                human(bytes),
                human(used[ordinal] as usize),
                human(limit as usize)
            ),
        });
    }
    used[ordinal] += bytes as u64;
    Ok(())
}

/// Device memory that dropped buffers gave back, kept for the next allocation of the same size
/// in the same context: `cuMemAlloc` and `cuMemFree` cost tens to hundreds of microseconds each,
/// and a run makes and frees dozens of buffers (its columns, worklists, counters), which made a
/// repair of 0.25 ms of kernels take 3-4 ms. A kept buffer counts as free for
/// `--device-memory-limit`; when the device itself runs out, what is kept is freed and the
/// allocation tried again. `GRAIL_GPU_KEEP_BUFFERS=0` frees every buffer at once instead.
struct Kept {
    ptr: CUdeviceptr,
    bytes: usize,
    context: Arc<CudaContext>,
}

// SAFETY: a kept allocation is plain device memory that no buffer refers to any more; the
// context handle is shared by design (`Arc<CudaContext>` is Send and Sync).
unsafe impl Send for Kept {}

static KEPT: std::sync::Mutex<Vec<Kept>> = std::sync::Mutex::new(Vec::new());

/// The most bytes kept per device: enough for the columns and worklists of runs on graphs of
/// tens of millions of nodes, little beside what a GPU has.
const KEEP_MAX: usize = 2 << 30;

/// Whether dropped buffers are kept (`GRAIL_GPU_KEEP_BUFFERS`, on unless `0`).
fn keeping() -> bool {
    static KEEPING: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KEEPING.get_or_init(|| std::env::var("GRAIL_GPU_KEEP_BUFFERS").map_or(true, |v| v.trim() != "0"))
}

fn kept() -> std::sync::MutexGuard<'static, Vec<Kept>> {
    KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A kept allocation of exactly `bytes` in `context`, taken out of the keep.
fn take_kept(context: &Arc<CudaContext>, bytes: usize) -> Option<CUdeviceptr> {
    let mut kept = kept();
    let at = kept.iter().rposition(|k| k.bytes == bytes && k.context.cu_ctx() == context.cu_ctx())?;
    Some(kept.swap_remove(at).ptr)
}

/// Frees every allocation kept in `context` (the device ran out, or its heap is about to grow).
pub(crate) fn release_kept(context: &Arc<CudaContext>) {
    let released: Vec<Kept> = {
        let mut kept = kept();
        let (released, stay) =
            std::mem::take(&mut *kept).into_iter().partition(|k| k.context.cu_ctx() == context.cu_ctx());
        *kept = stay;
        released
    };
    for k in released {
        let _ = k.context.bind_to_thread();
        // SAFETY: allocated by cuMemAlloc, referred to by no buffer, freed once.
        let _ = unsafe { result::free_sync(k.ptr) };
    }
}

impl DeviceBuffer {
    /// Allocates `bytes` (at least 4) of uninitialised device memory for `what`.
    pub fn new(context: &Arc<CudaContext>, bytes: usize, what: &str) -> Result<DeviceBuffer> {
        let bytes = bytes.max(4).next_multiple_of(4);
        account(context.ordinal(), bytes, false, what)?;
        if let Some(ptr) = take_kept(context, bytes) {
            return Ok(DeviceBuffer { ptr, bytes, context: context.clone(), owned: true });
        }
        let started = crate::multi::trace::on().then(std::time::Instant::now);
        // SAFETY: the context is current on this thread (bound by the executor).
        let ptr = unsafe { result::malloc_sync(bytes) }
            .or_else(|e| {
                if e.0 != sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY {
                    return Err(e);
                }
                release_kept(context);
                context.bind_to_thread()?;
                // SAFETY: as above.
                unsafe { result::malloc_sync(bytes) }
            })
            .map_err(|e| {
                let _ = account(context.ordinal(), bytes, true, what);
                allocation_error(context, e, bytes, what)
            })?;
        if let Some(started) = started {
            crate::multi::trace::device_memory(context.ordinal(), "allocated", what, bytes, started.elapsed());
        }
        Ok(DeviceBuffer { ptr, bytes, context: context.clone(), owned: true })
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// A buffer over `other`'s memory, which must outlive it; dropping it frees nothing.
    pub fn view(other: &DeviceBuffer) -> DeviceBuffer {
        DeviceBuffer { ptr: other.ptr, bytes: other.bytes, context: other.context.clone(), owned: false }
    }

    /// Allocates and fills from `data` through pinned staging buffers: the host copies one
    /// chunk into a pinned buffer while the device copies the previous one in, at the speed of
    /// pinned transfers (a copy from pageable memory is staged by the driver, chunk after chunk,
    /// at a fraction of it).
    pub fn from_slice_staged<T: Copy>(
        context: &Arc<CudaContext>,
        data: &[T],
        what: &str,
        staging: &mut Option<Staging>,
    ) -> Result<DeviceBuffer> {
        let buffer = DeviceBuffer::new(context, std::mem::size_of_val(data), what)?;
        // SAFETY: `data` is plain data; viewing it as bytes reads exactly its memory.
        let bytes = unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) };
        if bytes.len() < STAGED_MIN {
            buffer.upload(0, bytes)?;
        } else {
            Staging::get(staging, context)?.copy(buffer.ptr, bytes)?;
        }
        Ok(buffer)
    }

    /// A buffer of `len` 32-bit words that `fill(first, words)` writes (`words` being the ones
    /// from index `first` on), on every core, straight into `staging`'s pinned buffers, and copied
    /// up from there: no array of them is made on the host first (whose pages alone cost a batch
    /// of 650,000 inserted edges a millisecond).
    pub(crate) fn from_words_made(
        context: &Arc<CudaContext>,
        len: usize,
        fill: impl Fn(usize, &mut [u32]) + Sync,
        what: &str,
        staging: &mut Option<Staging>,
    ) -> Result<DeviceBuffer> {
        use rayon::prelude::*;
        let buffer = DeviceBuffer::new(context, 4 * len.max(1), what)?;
        if len == 0 {
            return Ok(buffer);
        }
        Staging::get(staging, context)?.copy_made(buffer.ptr, 4 * len, |stage, offset| {
            // SAFETY: the stage is pinned memory from cuMemHostAlloc (page-aligned) of a multiple of
            // 4 bytes (STAGE is, and so is 4 * len); any bytes are a valid u32.
            let words = unsafe { std::slice::from_raw_parts_mut(stage.as_mut_ptr().cast::<u32>(), stage.len() / 4) };
            const PIECE: usize = 1 << 16;
            words.par_chunks_mut(PIECE).enumerate().for_each(|(p, piece)| fill(offset / 4 + p * PIECE, piece));
        })?;
        Ok(buffer)
    }

    /// Copies the buffer's first `dst.len()` bytes to `dst`, through `staging` when that is large.
    ///
    /// # Safety
    /// `dst` must be valid for writing `len` bytes.
    pub unsafe fn download_staged(&self, dst: *mut u8, len: usize, staging: &mut Option<Staging>) -> Result<()> {
        self.check(0, len)?;
        if len < STAGED_MIN {
            // SAFETY: the caller vouches for `dst`.
            return unsafe { self.download_raw(0, dst, len) };
        }
        // SAFETY: the caller vouches for `dst`.
        let out = unsafe { std::slice::from_raw_parts_mut(dst, len) };
        // Kernels run on the null stream; the staging stream does not wait for them by itself.
        synchronize().map_err(|e| call("cuCtxSynchronize", e))?;
        Staging::get(staging, &self.context)?.copy_back(self.ptr, out)
    }

    /// Allocates and zeroes.
    pub fn zeroed(context: &Arc<CudaContext>, bytes: usize, what: &str) -> Result<DeviceBuffer> {
        let buffer = DeviceBuffer::new(context, bytes, what)?;
        // SAFETY: the allocation holds `bytes` bytes.
        unsafe { result::memset_d8_sync(buffer.ptr, 0, buffer.bytes) }.map_err(|e| call("cuMemsetD8", e))?;
        Ok(buffer)
    }

    /// Allocates `count` 32-bit words, each set to `value`, on the device.
    pub fn filled_u32(context: &Arc<CudaContext>, count: usize, value: u32, what: &str) -> Result<DeviceBuffer> {
        let buffer = DeviceBuffer::new(context, count.max(1) * 4, what)?;
        // SAFETY: the allocation holds `count.max(1)` words.
        unsafe { sys::cuMemsetD32_v2(buffer.ptr, value, count.max(1)) }.result().map_err(|e| call("cuMemsetD32", e))?;
        Ok(buffer)
    }

    /// Allocates and fills from `data`.
    pub fn from_slice<T: Copy>(context: &Arc<CudaContext>, data: &[T], what: &str) -> Result<DeviceBuffer> {
        let buffer = DeviceBuffer::new(context, std::mem::size_of_val(data), what)?;
        buffer.upload(0, data)?;
        Ok(buffer)
    }

    pub fn ptr(&self) -> CUdeviceptr {
        self.ptr
    }

    /// Copies `data` to byte `offset` of the buffer.
    pub fn upload<T: Copy>(&self, offset: usize, data: &[T]) -> Result<()> {
        let len = std::mem::size_of_val(data);
        self.check(offset, len)?;
        if len == 0 {
            return Ok(());
        }
        // SAFETY: in bounds (checked); `data` is plain data of `len` bytes.
        unsafe { result::memcpy_htod_sync(self.ptr + offset as u64, data) }.map_err(|e| call("cuMemcpyHtoD", e))
    }

    /// Copies `len` bytes at host address `src` to byte `offset`.
    ///
    /// # Safety
    /// `src` must be valid for reading `len` bytes.
    pub unsafe fn upload_raw(&self, offset: usize, src: *const u8, len: usize) -> Result<()> {
        // SAFETY: the caller vouches for `src`.
        let data = unsafe { std::slice::from_raw_parts(src, len) };
        self.upload(offset, data)
    }

    /// Copies from byte `offset` of the buffer into `out`.
    pub fn download<T: Copy>(&self, offset: usize, out: &mut [T]) -> Result<()> {
        let len = std::mem::size_of_val(out);
        self.check(offset, len)?;
        if len == 0 {
            return Ok(());
        }
        // SAFETY: in bounds (checked); `out` is plain data of `len` bytes.
        unsafe { result::memcpy_dtoh_sync(out, self.ptr + offset as u64) }.map_err(|e| call("cuMemcpyDtoH", e))
    }

    /// Copies `len` bytes at byte `offset` to host address `dst`.
    ///
    /// # Safety
    /// `dst` must be valid for writing `len` bytes.
    pub unsafe fn download_raw(&self, offset: usize, dst: *mut u8, len: usize) -> Result<()> {
        // SAFETY: the caller vouches for `dst`.
        let out = unsafe { std::slice::from_raw_parts_mut(dst, len) };
        self.download(offset, out)
    }

    /// Copies the first `len` bytes of `from` to the start of this buffer.
    pub fn copy_from(&self, from: &DeviceBuffer, len: usize) -> Result<()> {
        self.check(0, len)?;
        from.check(0, len)?;
        if len == 0 {
            return Ok(());
        }
        // SAFETY: both ranges are in bounds.
        unsafe { result::memcpy_dtod_sync(self.ptr, from.ptr, len) }.map_err(|e| call("cuMemcpyDtoD", e))
    }

    /// Zeroes the buffer.
    pub fn clear(&self) -> Result<()> {
        // SAFETY: the allocation holds `bytes` bytes.
        unsafe { result::memset_d8_sync(self.ptr, 0, self.bytes) }.map_err(|e| call("cuMemsetD8", e))
    }

    fn check(&self, offset: usize, len: usize) -> Result<()> {
        if offset.checked_add(len).is_none_or(|end| end > self.bytes) {
            return Err(RuntimeError::program(format!(
                "internal error: a device copy of {len} bytes at {offset} into a buffer of {}",
                self.bytes
            )));
        }
        Ok(())
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        // Errors are ignored: after a kernel fault the context is gone and so is the memory.
        let _ = self.context.bind_to_thread();
        let _ = account(self.context.ordinal(), self.bytes, true, "");
        let started = crate::multi::trace::on().then(std::time::Instant::now);
        let traced = |how: &'static str| {
            if let Some(started) = started {
                crate::multi::trace::device_memory(
                    self.context.ordinal(),
                    how,
                    "a buffer",
                    self.bytes,
                    started.elapsed(),
                );
            }
        };
        // Kept only once the device is done with it (as cuMemFree would wait), and only from a
        // context that is still sound: the next owner may write it from another stream.
        if keeping() && synchronize().is_ok() {
            let mut kept = kept();
            let ordinal = self.context.ordinal();
            let held: usize = kept.iter().filter(|k| k.context.ordinal() == ordinal).map(|k| k.bytes).sum();
            if held + self.bytes <= KEEP_MAX {
                kept.push(Kept { ptr: self.ptr, bytes: self.bytes, context: self.context.clone() });
                drop(kept);
                traced("kept (after waiting for the device)");
                return;
            }
        }
        // SAFETY: allocated by cuMemAlloc and freed once.
        let _ = unsafe { result::free_sync(self.ptr) };
        traced("freed");
    }
}

/// Copies smaller than this go straight from pageable memory.
const STAGED_MIN: usize = 4 << 20;

/// The size of each of the two pinned staging buffers.
const STAGE: usize = 16 << 20;

/// `dst.copy_from_slice(src)` on every core, a piece each: the host's side of a staged copy is a
/// memcpy that, into fresh memory (a collection read back), also takes a page fault every 4 KiB;
/// on one core that made reading a 10 M-triangle mesh back take 0.7-0.8 s.
fn parallel_copy(dst: &mut [u8], src: &[u8]) {
    use rayon::prelude::*;
    const PIECE: usize = 1 << 20;
    dst.par_chunks_mut(PIECE).zip(src.par_chunks(PIECE)).for_each(|(d, s)| d.copy_from_slice(s));
}

/// Two pinned host buffers and a stream of their own, for large copies either way
/// ([`DeviceBuffer::from_slice_staged`], [`DeviceBuffer::download_staged`]). Made on first use and
/// kept by its owner (a resident graph, a program), since pinning memory costs milliseconds.
///
/// It holds its context: pinned memory is unmapped from the process when the context that
/// allocated it is destroyed, so a staging that outlived its context (the program that made it
/// dropped, the device's primary context released) would copy into unmapped memory.
pub(crate) struct Staging {
    context: Arc<CudaContext>,
    stream: sys::CUstream,
    buffers: [*mut u8; 2],
    done: [sys::CUevent; 2],
}

// SAFETY: the pinned buffers, stream and events belong to this value alone; every use goes
// through `&mut self` or a method that finishes its copies before returning.
unsafe impl Send for Staging {}

impl Staging {
    /// The staging in `slot`, made there the first time.
    /// The staging in `slot`, made there the first time, in `context`; one made in another
    /// context is replaced.
    fn get<'s>(slot: &'s mut Option<Staging>, context: &Arc<CudaContext>) -> Result<&'s Staging> {
        if slot.as_ref().is_some_and(|s| s.context.cu_ctx() != context.cu_ctx()) {
            *slot = None;
        }
        if slot.is_none() {
            *slot = Some(Staging::new(context)?);
        }
        let staging = slot.as_ref().expect("made above");
        staging.context.bind_to_thread().map_err(|e| call("cuCtxSetCurrent", e))?;
        Ok(staging)
    }

    fn new(context: &Arc<CudaContext>) -> Result<Staging> {
        context.bind_to_thread().map_err(|e| call("cuCtxSetCurrent", e))?;
        let stream =
            result::stream::create(result::stream::StreamKind::NonBlocking).map_err(|e| call("cuStreamCreate", e))?;
        let mut staging = Staging {
            context: context.clone(),
            stream,
            buffers: [std::ptr::null_mut(); 2],
            done: [std::ptr::null_mut(); 2],
        };
        for i in 0..2 {
            // SAFETY: allocates pinned host memory, freed in drop.
            staging.buffers[i] =
                unsafe { result::malloc_host(STAGE, 0) }.map_err(|e| call("cuMemHostAlloc", e))?.cast::<u8>();
            staging.done[i] = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
                .map_err(|e| call("cuEventCreate", e))?;
        }
        Ok(staging)
    }

    /// Copies `bytes` to device address `dst`, chunk by chunk through the two buffers.
    fn copy(&self, dst: CUdeviceptr, bytes: &[u8]) -> Result<()> {
        self.copy_made(dst, bytes.len(), |stage, offset| parallel_copy(stage, &bytes[offset..offset + stage.len()]))
    }

    /// Copies `len` bytes that `make` writes to device address `dst`, chunk by chunk through the
    /// two buffers: `make(stage, offset)` fills `stage` with the bytes from `offset` on (a
    /// multiple of 4), straight into pinned memory.
    fn copy_made(&self, dst: CUdeviceptr, len: usize, make: impl Fn(&mut [u8], usize)) -> Result<()> {
        for c in 0..len.div_ceil(STAGE) {
            let i = c % 2;
            // SAFETY: the event was created above; waiting for the copy that last read buffer i.
            if c >= 2 {
                unsafe { result::event::synchronize(self.done[i]) }.map_err(|e| call("cuEventSynchronize", e))?;
            }
            let offset = c * STAGE;
            // SAFETY: buffer i holds STAGE bytes and no copy reads it now.
            let stage = unsafe { std::slice::from_raw_parts_mut(self.buffers[i], STAGE.min(len - offset)) };
            make(stage, offset);
            let offset = offset as u64;
            // SAFETY: `dst` holds `bytes.len()` bytes; the stage stays alive and untouched until
            // the event recorded after the copy completes.
            unsafe {
                result::memcpy_htod_async(dst + offset, &*stage, self.stream)
                    .map_err(|e| call("cuMemcpyHtoDAsync", e))?;
                result::event::record(self.done[i], self.stream).map_err(|e| call("cuEventRecord", e))?;
            }
        }
        // SAFETY: the stream is live.
        unsafe { result::stream::synchronize(self.stream) }.map_err(|e| call("cuStreamSynchronize", e))
    }
}

impl Staging {
    /// Copies device address `src` to `out`: the device copies one chunk into a pinned buffer
    /// while the host copies the previous one out.
    fn copy_back(&self, src: CUdeviceptr, out: &mut [u8]) -> Result<()> {
        let total = out.len();
        let chunks = total.div_ceil(STAGE);
        let issue = |c: usize| -> Result<()> {
            let i = c % 2;
            let len = STAGE.min(total - c * STAGE);
            // SAFETY: buffer i holds STAGE bytes, not read by the host until its event completes;
            // `src` holds `total` bytes.
            unsafe {
                sys::cuMemcpyDtoHAsync_v2(self.buffers[i].cast(), src + (c * STAGE) as u64, len, self.stream)
                    .result()
                    .map_err(|e| call("cuMemcpyDtoHAsync", e))?;
                result::event::record(self.done[i], self.stream).map_err(|e| call("cuEventRecord", e))
            }
        };
        issue(0)?;
        for c in 0..chunks {
            if c + 1 < chunks {
                issue(c + 1)?;
            }
            let i = c % 2;
            // SAFETY: a live event; after it, buffer i holds chunk c.
            unsafe { result::event::synchronize(self.done[i]) }.map_err(|e| call("cuEventSynchronize", e))?;
            let len = STAGE.min(total - c * STAGE);
            // SAFETY: buffer i holds `len` bytes of chunk c, and no copy writes it until chunk c + 2
            // is issued, after this.
            let stage = unsafe { std::slice::from_raw_parts(self.buffers[i], len) };
            parallel_copy(&mut out[c * STAGE..c * STAGE + len], stage);
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // Errors are ignored: after a kernel fault the context is gone and so is the memory.
        let _ = self.context.bind_to_thread();
        // SAFETY: everything was created in `new`, in the context held, and is destroyed once;
        // the stream is idle after `copy` (or never used).
        unsafe {
            let _ = result::stream::synchronize(self.stream);
            for i in 0..2 {
                if !self.buffers[i].is_null() {
                    let _ = result::free_host(self.buffers[i].cast());
                }
                if !self.done[i].is_null() {
                    let _ = result::event::destroy(self.done[i]);
                }
            }
            let _ = result::stream::destroy(self.stream);
        }
    }
}

/// The error for a failed allocation: out of memory says how much was asked and what is free.
fn allocation_error(context: &Arc<CudaContext>, e: DriverError, bytes: usize, what: &str) -> RuntimeError {
    if e.0 == sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY {
        let free = context
            .mem_get_info()
            .map(|(free, total)| format!("{} of {} free", human(free), human(total)))
            .unwrap_or_else(|_| "the free memory is unknown".into());
        return RuntimeError::OutOfMemory {
            what: format!(
                "GPU memory for {what}: {} requested on device {} ({free}); try a smaller graph or another device",
                human(bytes),
                context.ordinal()
            ),
        };
    }
    call("cuMemAlloc", e)
}

/// Bytes in MiB or GiB.
pub(crate) fn human(bytes: usize) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    if bytes as f64 >= 1024.0 * MIB {
        format!("{:.2} GiB", bytes as f64 / (1024.0 * MIB))
    } else {
        format!("{:.1} MiB", bytes as f64 / MIB)
    }
}

/// A driver error from `what`.
pub(crate) fn call(what: &str, e: DriverError) -> RuntimeError {
    RuntimeError::Gpu(driver_error(what, e))
}

/// One kernel argument: a pointer to its value, as `cuLaunchKernel` takes them.
pub(crate) fn arg<T>(value: &T) -> *mut c_void {
    (value as *const T).cast_mut().cast()
}

/// Launches `function` on the null stream.
///
/// # Safety
/// `args` must point at values of the kernel's parameter types, in order, and every device
/// pointer they hold must be live.
pub(crate) unsafe fn launch(function: &CudaFunction, grid: u32, block: u32, args: &mut [*mut c_void]) -> Result<()> {
    // SAFETY: the caller vouches for the arguments.
    unsafe {
        result::launch_kernel(function.cu_function(), (grid.max(1), 1, 1), (block, 1, 1), 0, std::ptr::null_mut(), args)
    }
    .map_err(|e| call("cuLaunchKernel", e))
}

/// Launches `function` cooperatively on the null stream: every block of the grid is resident at
/// once (the driver refuses a grid too large for that), so grid-wide barriers cannot deadlock.
///
/// # Safety
/// As for [`launch`].
pub(crate) unsafe fn launch_cooperative(
    function: &CudaFunction,
    grid: u32,
    block: u32,
    args: &mut [*mut c_void],
) -> Result<()> {
    // SAFETY: the caller vouches for the arguments.
    unsafe {
        result::launch_cooperative_kernel(
            function.cu_function(),
            (grid.max(1), 1, 1),
            (block, 1, 1),
            0,
            std::ptr::null_mut(),
            args,
        )
    }
    .map_err(|e| call("cuLaunchCooperativeKernel", e))
}

/// CUDA events on the null stream, for GPU time.
pub(crate) struct Event(sys::CUevent);

impl Event {
    pub fn new() -> Result<Event> {
        result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).map(Event).map_err(|e| call("cuEventCreate", e))
    }

    pub fn record(&self) -> Result<()> {
        // SAFETY: a live event, the null stream.
        unsafe { result::event::record(self.0, std::ptr::null_mut()) }.map_err(|e| call("cuEventRecord", e))
    }

    /// An event that only orders work (no timestamps: cheaper to record and to wait for).
    pub fn untimed() -> Result<Event> {
        result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
            .map(Event)
            .map_err(|e| call("cuEventCreate", e))
    }

    /// The event's handle, for another GPU's stream to wait for ([`wait_for_event`]).
    pub fn handle(&self) -> u64 {
        self.0 as u64
    }

    /// Milliseconds from `self` to `end`, both recorded and complete.
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32> {
        // SAFETY: live events.
        unsafe { result::event::elapsed(self.0, end.0) }.map_err(|e| call("cuEventElapsedTime", e))
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created by cuEventCreate, destroyed once.
        let _ = unsafe { result::event::destroy(self.0) };
    }
}

/// A small pinned host buffer for the few words an invocation sends ahead of its launches (its
/// arguments, its counters' first values) and reads back after them (its counters): copies from
/// and to it are asynchronous on the null stream, ordered with the launches, so an invocation
/// waits for its device once instead of at every copy (each synchronous copy is a round trip of
/// several microseconds, and a partitioned run's superstep made two dozen of them on every part).
///
/// Words are taken one after another as copies are queued and given back all at once by
/// [`Mailbox::settle`], which the owner calls only after waiting for the device, so a copy
/// queued earlier never reads or writes words that were taken again. When the words run out, a
/// copy is made synchronously instead (correct, only slower).
pub(crate) struct Mailbox {
    context: Arc<CudaContext>,
    words: *mut u64,
    len: usize,
    next: std::sync::atomic::AtomicUsize,
}

// SAFETY: the pinned words belong to this value alone; a copy's words are not taken again
// before `settle`, which follows a wait for every copy queued.
unsafe impl Send for Mailbox {}

/// Where a queued copy back lands in a [`Mailbox`]: its first word and length.
#[derive(Clone, Debug)]
pub(crate) struct Ticket {
    at: usize,
    len: usize,
    /// The words, when the copy was made synchronously (the mailbox was full).
    inline: Option<Vec<u64>>,
}

impl Mailbox {
    /// The words of a mailbox.
    const WORDS: usize = 1024;

    pub fn new(context: &Arc<CudaContext>) -> Result<Mailbox> {
        // SAFETY: allocates pinned host memory in the current context, freed in drop.
        let words = unsafe { result::malloc_host(Self::WORDS * 8, 0) }.map_err(|e| call("cuMemHostAlloc", e))?;
        Ok(Mailbox {
            context: context.clone(),
            words: words.cast::<u64>(),
            len: Self::WORDS,
            next: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// Takes `n` words; `None` when too few are left.
    fn take(&self, n: usize) -> Option<usize> {
        use std::sync::atomic::Ordering::Relaxed;
        let at = self.next.load(Relaxed);
        (at + n <= self.len).then(|| {
            self.next.store(at + n, Relaxed);
            at
        })
    }

    /// Queues a copy of `values` (plain data, a multiple of 8 bytes) to device address `dst`
    /// on the null stream.
    pub fn send<T: Copy>(&self, dst: CUdeviceptr, values: &[T]) -> Result<()> {
        let bytes = std::mem::size_of_val(values);
        debug_assert_eq!(bytes % 8, 0, "mailbox copies are of whole words");
        let Some(at) = self.take(bytes / 8) else {
            // SAFETY: `dst` holds `bytes` bytes (the caller's); `values` is plain data.
            return unsafe { result::memcpy_htod_sync(dst, values) }.map_err(|e| call("cuMemcpyHtoD", e));
        };
        // SAFETY: words `at..at + bytes/8` are this copy's until `settle`; `values` is plain
        // data of `bytes` bytes; `dst` holds them (the caller's).
        unsafe {
            let slot = self.words.add(at).cast::<u8>();
            std::ptr::copy_nonoverlapping(values.as_ptr().cast::<u8>(), slot, bytes);
            let pinned = std::slice::from_raw_parts(slot, bytes);
            result::memcpy_htod_async(dst, pinned, std::ptr::null_mut()).map_err(|e| call("cuMemcpyHtoDAsync", e))
        }
    }

    /// Queues a copy of `n` words at device address `src` back into the mailbox, on the null
    /// stream; [`Mailbox::read`] gives them after the owner has waited for the device.
    pub fn fetch(&self, src: CUdeviceptr, n: usize) -> Result<Ticket> {
        let Some(at) = self.take(n) else {
            let mut words = vec![0u64; n];
            // SAFETY: `src` holds `n` words (the caller's).
            unsafe { result::memcpy_dtoh_sync(&mut words, src) }.map_err(|e| call("cuMemcpyDtoH", e))?;
            return Ok(Ticket { at: 0, len: n, inline: Some(words) });
        };
        // SAFETY: words `at..at + n` are this copy's until `settle`.
        unsafe {
            let pinned = std::slice::from_raw_parts_mut(self.words.add(at), n);
            result::memcpy_dtoh_async(pinned, src, std::ptr::null_mut()).map_err(|e| call("cuMemcpyDtoHAsync", e))?;
        }
        Ok(Ticket { at, len: n, inline: None })
    }

    /// The words a fetch brought back, once the device was waited for (and before `settle`).
    pub fn read(&self, ticket: &Ticket) -> Vec<u64> {
        match &ticket.inline {
            Some(words) => words.clone(),
            // SAFETY: the copy has completed (the caller waited); the words are initialized.
            None => unsafe { std::slice::from_raw_parts(self.words.add(ticket.at), ticket.len) }.to_vec(),
        }
    }

    /// Gives every word back. Only after waiting for every copy queued (and reading what was
    /// fetched).
    pub fn settle(&self) {
        self.next.store(0, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Drop for Mailbox {
    fn drop(&mut self) {
        // Errors are ignored: after a kernel fault the context is gone and so is the memory.
        let _ = self.context.bind_to_thread();
        // SAFETY: allocated in `new` in the context held, freed once; no copy is queued on it
        // (its owner waited before dropping it, or the context is lost).
        unsafe {
            let _ = result::ctx::synchronize();
            let _ = result::free_host(self.words.cast());
        }
    }
}

/// Queues a fill of `bytes` bytes at `ptr` with zeros on the null stream.
pub(crate) fn clear_async(ptr: CUdeviceptr, bytes: usize) -> Result<()> {
    // SAFETY: the caller's allocation holds `bytes` bytes.
    unsafe { result::memset_d8_async(ptr, 0, bytes, std::ptr::null_mut()) }.map_err(|e| call("cuMemsetD8Async", e))
}

/// Makes the current context's null stream wait, on the device, for the work recorded before
/// event `handle` ([`Event::handle`]; the event may belong to another GPU's context).
pub(crate) fn wait_for_event(handle: u64) -> Result<()> {
    // SAFETY: `handle` is a live event (its owner outlives every wait for it), the null stream.
    unsafe {
        result::stream::wait_event(
            std::ptr::null_mut(),
            handle as sys::CUevent,
            sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
        )
    }
    .map_err(|e| call("cuStreamWaitEvent", e))
}

/// Waits for everything launched so far; an error is returned as the driver gives it.
pub(crate) fn synchronize() -> std::result::Result<(), DriverError> {
    result::ctx::synchronize()
}

/// Whether a driver error means a kernel faulted (the context is then lost).
pub(crate) fn is_kernel_fault(e: &DriverError) -> bool {
    use sys::cudaError_enum::*;
    matches!(
        e.0,
        CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ASSERT
            | CUDA_ERROR_LAUNCH_TIMEOUT
            | CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
    )
}

/// The message for a kernel fault, with what most likely caused it.
pub(crate) fn fault_message(e: &DriverError) -> String {
    use sys::cudaError_enum::*;
    let code = e.error_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|_| format!("{:?}", e.0));
    let cause = match e.0 {
        CUDA_ERROR_ILLEGAL_ADDRESS | CUDA_ERROR_MISALIGNED_ADDRESS => {
            "an invalid memory access: most likely a node, edge or element index out of range"
        }
        CUDA_ERROR_LAUNCH_TIMEOUT => "the kernel ran past the display watchdog's limit",
        CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES => "the kernel needs more registers than a block of this size has",
        CUDA_ERROR_HARDWARE_STACK_ERROR => "a stack overflow: most likely deep recursion in a program function",
        _ => "the kernel stopped abnormally",
    };
    format!("{cause} ({code})")
}

/// Copies `bytes` bytes from device memory `src` of `context` (current on this thread) into
/// the inbox `to`: peer to peer when the inbox is on another GPU (direct where peer access is
/// enabled, [`connect_peers`]; staged by the driver where not), down to host memory when it is
/// a CPU part's. Returns once the inbox holds them.
pub(crate) fn copy_to_place(
    context: &Arc<CudaContext>,
    src: CUdeviceptr,
    bytes: usize,
    to: &crate::multi::Place,
) -> Result<()> {
    assert!(bytes <= to.bytes(), "an inbox holds everything its route sends");
    match to {
        crate::multi::Place::Host { address, .. } => {
            // SAFETY: the inbox holds `bytes` bytes; nobody reads it during this round.
            let out = unsafe { std::slice::from_raw_parts_mut(*address as *mut u8, bytes) };
            // SAFETY: `src` holds `bytes` bytes (the caller's), `out` is plain bytes.
            unsafe { result::memcpy_dtoh_sync(out, src) }.map_err(|e| call("cuMemcpyDtoH", e))
        }
        crate::multi::Place::Device { ptr, context: there, .. } => {
            // SAFETY: both allocations hold `bytes`; cuMemcpyPeer orders the copy after the
            // work queued in both contexts.
            unsafe { sys::cuMemcpyPeer(*ptr, there.cu_ctx(), src, context.cu_ctx(), bytes) }
                .result()
                .map_err(|e| call("cuMemcpyPeer", e))?;
            synchronize().map_err(|e| call("cuCtxSynchronize", e))
        }
    }
}

/// Copies `data` from host memory to device memory `ptr` of `context` (made current on this
/// thread: a CPU part's driver sending to a GPU's inbox).
pub(crate) fn upload_to<T: Copy>(context: &Arc<CudaContext>, ptr: CUdeviceptr, data: &[T]) -> Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    context.bind_to_thread().map_err(|e| call("cuCtxSetCurrent", e))?;
    // SAFETY: the inbox holds at least `data`'s bytes (checked by the caller).
    unsafe { result::memcpy_htod_sync(ptr, data) }.map_err(|e| call("cuMemcpyHtoD", e))
}

/// The ordered pairs of devices (by ordinal) whose first reaches the second's memory directly
/// ([`connect_peers`]).
static PEER_ACCESS: std::sync::Mutex<Vec<(usize, usize)>> = std::sync::Mutex::new(Vec::new());

/// Whether a kernel running in context `from` can read and write memory of context `to`: the
/// same context, or peer access enabled from `from`'s device to `to`'s.
pub(crate) fn reaches(from: &Arc<CudaContext>, to: &Arc<CudaContext>) -> bool {
    if from.cu_ctx() == to.cu_ctx() {
        return true;
    }
    let pairs = PEER_ACCESS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    pairs.contains(&(from.ordinal(), to.ordinal()))
}

/// Lets every GPU of `contexts` read and write every other's memory directly where the
/// hardware allows it (NVLink or PCIe peer access), so that copies between parts go peer to
/// peer; where it does not (or enabling it fails), copies between them are staged by the
/// driver. Returns how many ordered pairs were connected.
pub(crate) fn connect_peers(contexts: &[&Arc<CudaContext>]) -> Result<usize> {
    let mut connected = 0;
    for a in contexts {
        for b in contexts {
            if Arc::ptr_eq(a, b) || a.ordinal() == b.ordinal() {
                continue;
            }
            let mut can = 0;
            // SAFETY: both devices exist (their contexts were made); `can` is written.
            unsafe { sys::cuDeviceCanAccessPeer(&mut can, a.cu_device(), b.cu_device()) }
                .result()
                .map_err(|e| call("cuDeviceCanAccessPeer", e))?;
            if can == 0 {
                continue;
            }
            a.bind_to_thread().map_err(|e| call("cuCtxSetCurrent", e))?;
            // SAFETY: `b` is a live context of another device that `a`'s can access.
            match unsafe { sys::cuCtxEnablePeerAccess(b.cu_ctx(), 0) } {
                sys::cudaError_enum::CUDA_SUCCESS | sys::cudaError_enum::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {
                    connected += 1;
                    let mut pairs = PEER_ACCESS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    if !pairs.contains(&(a.ordinal(), b.ordinal())) {
                        pairs.push((a.ordinal(), b.ordinal()));
                    }
                }
                // Past the hardware's peers per device, or refused: copies between this pair
                // are staged by the driver instead, as between GPUs without peer access.
                _ => {}
            }
        }
    }
    Ok(connected)
}
