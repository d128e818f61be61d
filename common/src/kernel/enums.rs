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
}
