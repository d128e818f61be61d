//! The kernel's own enums, read from its BTF: names the tools show for
//! numbers (drop reasons, softirq vectors) come from the running kernel,
//! not from a list typed in.

use libbpf_rs::btf::types::Enum;
use libbpf_rs::btf::Btf;

/// The members of the kernel's enum named `name`, as (value, name); empty
/// where the kernel's BTF has no such enum.
pub fn named(name: &str) -> Vec<(i64, String)> {
    let Ok(btf) = Btf::from_vmlinux() else {
        return Vec::new();
    };
    btf.type_by_name::<Enum>(name)
        .map(|e| members(&e))
        .unwrap_or_default()
}

/// The members of the kernel's enum (named or not) that has a member named
/// `member` (`NR_SOFTIRQS`), as (value, name); empty where there is none.
pub fn with_member(member: &str) -> Vec<(i64, String)> {
    let Ok(btf) = Btf::from_vmlinux() else {
        return Vec::new();
    };
    let found = btf
        .type_by_kind::<Enum>()
        .map(|e| members(&e))
        .find(|m| m.iter().any(|(_, n)| n == member));
    found.unwrap_or_default()
}

/// The softirq vectors as the running kernel names them, lowercased without
/// `_SOFTIRQ` as its own softirq_to_name has them (`NET_RX_SOFTIRQ` is
/// `net_rx`), as (vector, name).
pub fn softirq_names() -> Vec<(i64, String)> {
    with_member("NR_SOFTIRQS")
        .into_iter()
        .filter_map(|(v, n)| Some((v, n.strip_suffix("_SOFTIRQ")?.to_lowercase())))
        .collect()
}

/// Softirq vector `vec`'s name in `names` ([`softirq_names`]), else
/// `vecN`.
pub fn softirq_name(names: &[(i64, String)], vec: u32) -> String {
    names
        .iter()
        .find(|(v, _)| *v == i64::from(vec))
        .map_or_else(|| format!("vec{vec}"), |(_, n)| n.clone())
}

fn members(e: &Enum) -> Vec<(i64, String)> {
    e.iter()
        .filter_map(|m| Some((m.value, m.name?.to_string_lossy().into_owned())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softirq_vectors_and_drop_reasons_are_found() {
        let v = with_member("NR_SOFTIRQS");
        assert!(v.contains(&(3, "NET_RX_SOFTIRQ".into())), "{v:?}");
        let r = named("skb_drop_reason");
        assert!(
            r.iter().any(|(_, n)| n == "SKB_DROP_REASON_NOT_SPECIFIED"),
            "{r:?}"
        );
        assert!(named("no_such_enum_here").is_empty());
    }

    #[test]
    fn softirq_vectors_are_named_as_the_kernel_names_them() {
        let names = softirq_names();
        assert!(names.contains(&(0, "hi".into())), "{names:?}");
        assert!(names.contains(&(3, "net_rx".into())), "{names:?}");
        assert!(names.iter().all(|(_, n)| n != "nr"), "{names:?}");
        assert_eq!(softirq_name(&names, 3), "net_rx");
        assert_eq!(softirq_name(&names, 99), "vec99");
    }
}
