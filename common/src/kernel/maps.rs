//! Reading and filling BPF maps, and the object's read-only globals: every
//! map helper the tools share.

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd};
use std::path::Path;

use anyhow::{bail, Context, Result};
use libbpf_rs::btf::types::{DataSec, Var};
use libbpf_rs::btf::Btf;
use libbpf_rs::{AsRawLibbpf, MapCore, MapFlags, Object, OpenMapMut, OpenObject};

/// Sets the read-only global `name` (a `const volatile` in the BPF C) of an
/// opened object to `value`'s bytes, found by name in the object's BTF:
/// how `common` sets the globals that the shared BPF headers declare.
pub fn set_rodata(obj: &mut OpenObject, name: &str, value: &[u8]) -> Result<()> {
    let (offset, size) = rodata_var(obj, name)?;
    if size != value.len() {
        bail!("the BPF global {name} is {size} bytes, not {}", value.len());
    }
    let mut map = obj
        .maps_mut()
        .find(|m| m.name().to_string_lossy().ends_with(".rodata"))
        .context("the BPF object has no read-only data")?;
    let data = map
        .initial_value_mut()
        .context("the BPF object's read-only data is not mapped")?;
    data.get_mut(offset..offset + size)
        .context("a BPF global lies outside the read-only data")?
        .copy_from_slice(value);
    Ok(())
}

/// True if the object has the read-only global `name`.
pub fn has_rodata(obj: &OpenObject, name: &str) -> bool {
    rodata_var(obj, name).is_ok()
}

/// The value of read-only global `name` as set so far; none where the
/// object has no such global.
fn rodata_bytes(obj: &OpenObject, name: &str) -> Option<Vec<u8>> {
    let (offset, size) = rodata_var(obj, name).ok()?;
    let map = obj
        .maps()
        .find(|m| m.name().to_string_lossy().ends_with(".rodata"))?;
    Some(map.initial_value()?.get(offset..offset + size)?.to_vec())
}

/// The fine histograms' map (`fine_hists` of HIST_MAPS) at one entry where
/// the kernel side will not fill it (its `fine` global is false: no
/// --percentiles or --hdr-log). A hash map allocates and zeroes every
/// entry as it loads: 30 MB of runqlat's kernel memory for nothing, and
/// seconds of each start under the VM suite's TCG.
pub fn shrink_unasked_fine_hists(obj: &mut OpenObject) -> Result<()> {
    if rodata_bytes(obj, "fine").is_none_or(|v| v.iter().any(|&b| b != 0)) {
        return Ok(());
    }
    if let Some(mut map) = obj.maps_mut().find(|m| m.name() == "fine_hists") {
        map.set_max_entries(1)
            .context("sizing the fine histograms' map")?;
    }
    Ok(())
}

/// Where the read-only global `name` lies: (offset, size) in `.rodata`.
fn rodata_var(obj: &OpenObject, name: &str) -> Result<(usize, usize)> {
    // SAFETY: the pointer comes from a live OpenObject, which outlives the
    // Btf borrowed from it here.
    let raw = unsafe { obj.as_libbpf_object().as_ref() };
    let btf = Btf::from_bpf_object(raw)?.context("the BPF object has no BTF")?;
    let sec: DataSec<'_> = btf
        .type_by_name(".rodata")
        .context("the BPF object has no .rodata section")?;
    for info in sec.iter() {
        let Some(var) = btf.type_by_id::<Var<'_>>(info.ty) else {
            continue;
        };
        if var.name().is_some_and(|n| n.to_string_lossy() == name) {
            return Ok((info.offset as usize, info.size));
        }
    }
    bail!("this tool's BPF object has no global {name}")
}

/// The read-only data of an opened skeleton (`open.maps.rodata_data`),
/// to set before load.
pub fn rodata<'a, T>(data: &'a mut Option<&mut T>) -> Result<&'a mut T> {
    data.as_deref_mut()
        .context("the BPF object has no read-only data")
}

/// Before it loads, points every map of `open` (another instance of the
/// object `loaded` is, for one more probe) at `loaded`'s map of the same
/// name, so that both count into one place; the internal maps (.rodata,
/// .bss, .data, .kconfig: their names hold a dot) are the caller's to set.
pub fn share_maps(loaded: &Object, open: &mut libbpf_rs::OpenObject) -> Result<()> {
    use std::os::fd::AsFd;
    for mut map in open.maps_mut() {
        if map.name().to_string_lossy().contains('.') {
            continue;
        }
        if let Some(src) = loaded.maps().find(|m| m.name() == map.name()) {
            map.reuse_fd(src.as_fd())
                .with_context(|| format!("sharing map {}", src.name().to_string_lossy()))?;
        }
    }
    Ok(())
}

/// A copy of a loaded object (`main`) for one more probe point, on kernels
/// without attach cookies (5.10-5.14), as BCC loads a program per probe:
/// opened anew, `prepare`d (its read-only data, which programs load), its
/// maps pointed at `main`'s ([`share_maps`]), loaded. It is kept for the
/// rest of the run, and so is its storage.
pub fn load_copy<B>(
    main: &Object,
    prepare: impl FnOnce(&mut B::Output) -> Result<()>,
) -> Result<<B::Output as libbpf_rs::skel::OpenSkel<'static>>::Output>
where
    B: libbpf_rs::skel::SkelBuilder<'static> + Default,
{
    use libbpf_rs::skel::OpenSkel;
    let storage = Box::leak(Box::new(std::mem::MaybeUninit::uninit()));
    let mut open = B::default()
        .open(storage)
        .context("opening a copy of the BPF object")?;
    prepare(&mut open)?;
    share_maps(main, open.open_object_mut())?;
    open.load().context("loading a copy of the BPF object")
}

/// The map called `name` in a loaded object.
pub fn by_name<'a>(obj: &'a Object, name: &str) -> Option<libbpf_rs::Map<'a>> {
    obj.maps().find(|m| m.name().to_string_lossy() == name)
}

/// Puts each id into a set map (`pid_filter`, `tid_filter`).
pub fn set_ids(map: &dyn MapCore, ids: &[u32]) -> Result<()> {
    for id in ids {
        map.update(&id.to_ne_bytes(), &[1u8], MapFlags::ANY)
            .with_context(|| format!("adding {id} to {}", map.name().to_string_lossy()))?;
    }
    Ok(())
}

/// Makes a one-entry cgroup array hold the cgroup v2 directory at `path`.
pub fn set_cgroup(map: &dyn MapCore, path: &Path) -> Result<()> {
    let dir = File::open(path).with_context(|| format!("opening cgroup {}", path.display()))?;
    let fd = dir.as_raw_fd() as u32;
    map.update(&0u32.to_ne_bytes(), &fd.to_ne_bytes(), MapFlags::ANY)
        .with_context(|| format!("{} is not a cgroup v2 directory", path.display()))
}

/// Puts `prog` at index 0 of a program array, where the kernel side's
/// `bpf_tail_call(ctx, &array, 0)` finds it. Tools split a loop the
/// verifier would otherwise check in every caller into such a program.
pub fn install_tail_call(array: &dyn MapCore, prog: &impl AsFd) -> Result<()> {
    install_tail_call_at(array, 0, prog)
}

/// Puts `prog` at index `slot` of a program array.
pub fn install_tail_call_at(array: &dyn MapCore, slot: u32, prog: &impl AsFd) -> Result<()> {
    let fd = prog.as_fd().as_raw_fd() as u32;
    array
        .update(&slot.to_ne_bytes(), &fd.to_ne_bytes(), MapFlags::ANY)
        .with_context(|| {
            format!(
                "installing the tail call in {}[{slot}]",
                array.name().to_string_lossy()
            )
        })
}

/// Sums the per-CPU `u64` counter at `index` of a per-CPU array.
pub fn percpu_sum_at(map: &dyn MapCore, index: u32) -> Result<u64> {
    let values = map
        .lookup_percpu(&index.to_ne_bytes(), MapFlags::ANY)
        .with_context(|| format!("reading map {}", map.name().to_string_lossy()))?
        .unwrap_or_default();
    Ok(values
        .iter()
        .filter_map(|v| Some(u64::from_ne_bytes(v.get(..8)?.try_into().ok()?)))
        .sum())
}

/// A map's entries as (key, value) bytes.
pub type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// Takes every entry out of a map: the (key, value) bytes of each, deleting
/// it, so the next interval starts from zero as in BCC.
pub fn drain(map: &dyn MapCore) -> Result<Entries> {
    if let Some(entries) = drain_batched(map) {
        return entries;
    }
    let name = map.name().to_string_lossy().into_owned();
    let keys: Vec<Vec<u8>> = map.keys().collect();
    let mut entries = Vec::with_capacity(keys.len());
    for key in keys {
        if let Some(value) = map
            .lookup(&key, MapFlags::ANY)
            .with_context(|| format!("reading map {name}"))?
        {
            entries.push((key.clone(), value));
        }
        // Gone already is fine: only what was read is reported.
        let _ = map.delete(&key);
    }
    Ok(entries)
}

/// [`drain`] in a few system calls instead of three per entry: a hash
/// map's entries read and deleted in batches (5.6+; a report of 25k stacks
/// spent a third of its time in those calls). None where the map or the
/// kernel has no batch operations: the caller goes key by key.
fn drain_batched(map: &dyn MapCore) -> Option<Result<Entries>> {
    use libbpf_rs::libbpf_sys as sys;
    use libbpf_rs::MapType;
    if !matches!(map.map_type(), MapType::Hash | MapType::LruHash) {
        return None;
    }
    let (ks, vs) = (map.key_size() as usize, map.value_size() as usize);
    // Batches of at most 256 KiB (the kernel allocates as much again per
    // call): a drain stays quick even for histograms of kilobytes, so that
    // maps drained one after the other are read at nearly the same moment.
    let per_entry = (ks + vs).max(1) as u32;
    let mut count = (256 * 1024 / per_entry)
        .clamp(1, 4096)
        .min(map.max_entries().max(1));
    let mut keys = vec![0u8; ks * count as usize];
    let mut values = vec![0u8; vs * count as usize];
    // The position between batches: a hash map's bucket number.
    let mut position = [0u8; 8];
    let mut next = [0u8; 8];
    let mut first = true;
    let mut entries = Vec::new();
    let opts = sys::bpf_map_batch_opts {
        sz: std::mem::size_of::<sys::bpf_map_batch_opts>() as _,
        ..Default::default()
    };
    loop {
        let mut n = count;
        // SAFETY: the buffers hold `count` keys and values of the map's
        // sizes, and the positions a bucket number; the kernel writes at
        // most `n` entries and one position.
        let rc = unsafe {
            sys::bpf_map_lookup_and_delete_batch(
                map.as_fd().as_raw_fd(),
                if first {
                    std::ptr::null_mut()
                } else {
                    position.as_mut_ptr().cast()
                },
                next.as_mut_ptr().cast(),
                keys.as_mut_ptr().cast(),
                values.as_mut_ptr().cast(),
                &mut n,
                &opts,
            )
        };
        let err = if rc < 0 { -rc } else { 0 };
        if err == 0 || err == libc::ENOENT {
            let n = n.min(count) as usize;
            entries.extend(
                keys.chunks_exact(ks)
                    .zip(values.chunks_exact(vs))
                    .take(n)
                    .map(|(k, v)| (k.to_vec(), v.to_vec())),
            );
            if err == libc::ENOENT {
                return Some(Ok(entries));
            }
            position = next;
            first = false;
        } else if err == libc::ENOSPC && count < map.max_entries().max(1) * 2 {
            // A bucket holds more entries than a batch: larger batches.
            count *= 2;
            keys.resize(ks * count as usize, 0);
            values.resize(vs * count as usize, 0);
        } else if first {
            // EINVAL, ENOTSUPP (524) and the like: no batches here.
            return None;
        } else {
            return Some(
                Err(std::io::Error::from_raw_os_error(err))
                    .with_context(|| format!("reading map {}", map.name().to_string_lossy())),
            );
        }
    }
}

/// [`drain`], decoded onto the skeleton's key and value types. Values are
/// boxed: a fine histogram is kilobytes.
pub fn drain_as<K, V>(map: &dyn MapCore) -> Result<Vec<(K, Box<V>)>>
where
    K: plain::Plain + Default,
    V: plain::Plain + Default,
{
    Ok(drain(map)?
        .iter()
        .map(|(k, v)| (decode(k), Box::new(decode(v))))
        .collect())
}

/// [`drain_as`] when `drain`, else every entry read and left in place
/// (`--prometheus`'s scrapes between reports).
pub fn read_as<K, V>(map: &dyn MapCore, drain: bool) -> Result<Vec<(K, Box<V>)>>
where
    K: plain::Plain + Default,
    V: plain::Plain + Default,
{
    if drain {
        return drain_as(map);
    }
    Ok(entries_as(map)?
        .into_iter()
        .map(|(k, v)| (k, Box::new(v)))
        .collect())
}

/// Every entry of a map, decoded, left in place.
pub fn entries_as<K, V>(map: &dyn MapCore) -> Result<Vec<(K, V)>>
where
    K: plain::Plain + Default,
    V: plain::Plain + Default,
{
    let name = map.name().to_string_lossy().into_owned();
    let mut entries = Vec::new();
    for key in map.keys() {
        if let Some(value) = map
            .lookup(&key, MapFlags::ANY)
            .with_context(|| format!("reading map {name}"))?
        {
            entries.push((decode(&key), decode(&value)));
        }
    }
    Ok(entries)
}

/// A value of a generated type from bytes (missing bytes stay zero).
pub fn decode<T: plain::Plain + Default>(bytes: &[u8]) -> T {
    let mut value = T::default();
    copy_record(&mut value, bytes);
    value
}

/// Reads stack `id` from a BPF_MAP_TYPE_STACK_TRACE map: its addresses,
/// leaf first. None if the id is not there.
pub fn read_stack(map: &dyn MapCore, id: i32) -> Result<Option<Vec<u64>>> {
    if id < 0 {
        return Ok(None);
    }
    let value = map
        .lookup(&(id as u32).to_ne_bytes(), MapFlags::ANY)
        .with_context(|| format!("reading stack {id}"))?;
    Ok(value.map(|bytes| {
        bytes
            .chunks_exact(8)
            .filter_map(|c| Some(u64::from_ne_bytes(c.try_into().ok()?)))
            .take_while(|a| *a != 0)
            .collect()
    }))
}

/// Copies a record into `dst`. The record may be shorter than `T` when the
/// kernel side sent only the used part of a trailing array (execsnoop's
/// arguments); the rest of `dst` keeps its old bytes, so the record's own
/// length fields say how much of the tail is valid.
pub fn copy_record<T: plain::Plain>(dst: &mut T, data: &[u8]) {
    // SAFETY: T is Plain, so any bytes written form a valid T; the copy
    // stays within size_of::<T>().
    let bytes = unsafe { plain::as_mut_bytes(dst) };
    let n = data.len().min(bytes.len());
    bytes[..n].copy_from_slice(&data[..n]);
}

/// Sizes a stack trace map for `--stack-storage-size` stacks of at most
/// `--perf-max-stack-depth` frames, after checking the kernel can afford it.
pub fn size_stack_map(map: &mut OpenMapMut, entries: u32, depth: u32) -> Result<()> {
    check_map_memory("--stack-storage-size", entries.into(), u64::from(depth) * 8)?;
    map.set_value_size(depth * 8)?;
    map.set_max_entries(entries)?;
    Ok(())
}

/// Sizes `--unwind dwarf`'s copy slots (ustack.bpf.h): one per CPU, or
/// one unused slot without dwarf.
pub fn size_user_stack_copies(scratch: &mut OpenMapMut, dwarf: bool) -> Result<()> {
    if dwarf {
        let cpus = libbpf_rs::num_possible_cpus().context("counting the CPUs")?;
        scratch.set_max_entries(cpus as u32)?;
    }
    Ok(())
}

/// Fails (a usage error, naming `flag`) when a map of `entries` values of
/// `value_size` bytes, preallocated by the kernel, would take more than a
/// quarter of the memory available now: the kernel would otherwise try,
/// unkillably, for as long as that takes.
pub fn check_map_memory(flag: &str, entries: u64, value_size: u64) -> Result<()> {
    // Each element also carries a list node and bucket bookkeeping.
    let per_entry = value_size + 64;
    let bytes = entries.saturating_mul(per_entry);
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .map_or(u64::MAX, |kib| kib.saturating_mul(1024));
    let budget = available / 4;
    if bytes > budget {
        return Err(crate::usage::usage(format!(
            "{flag} {entries} would take {} MiB of kernel memory, more than a quarter of \
             the {} MiB available; at most {} fit",
            bytes >> 20,
            available >> 20,
            budget / per_entry
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use libbpf_rs::{MapHandle, MapType};

    #[test]
    fn drain_takes_every_entry_of_a_hash_map_once_in_batches() {
        // SAFETY: geteuid has no preconditions.
        let uid = unsafe { libc::geteuid() };
        assert_eq!(uid, 0, "needs root: it creates a BPF map");
        let opts = libbpf_rs::libbpf_sys::bpf_map_create_opts {
            sz: std::mem::size_of::<libbpf_rs::libbpf_sys::bpf_map_create_opts>() as _,
            ..Default::default()
        };
        let map = MapHandle::create(MapType::Hash, Some("drain_test"), 4, 8, 10_000, &opts)
            .expect("creating a hash map");
        // More than a batch.
        let n = 9_000u32;
        for k in 0..n {
            let v = u64::from(k) * 3;
            map.update(&k.to_ne_bytes(), &v.to_ne_bytes(), MapFlags::ANY)
                .unwrap();
        }
        // The batched path itself, not the per-key fallback.
        let batched = drain_batched(&map).expect("batches are offered for hash maps");
        let mut got: Vec<(u32, u64)> = batched
            .unwrap()
            .iter()
            .map(|(k, v)| (decode(k), decode(v)))
            .collect();
        got.sort_unstable();
        let want: Vec<(u32, u64)> = (0..n).map(|k| (k, u64::from(k) * 3)).collect();
        assert_eq!(got, want);
        assert_eq!(map.keys().count(), 0, "drained");
    }
}
