fn main() {
    bpf::skeleton("softirqs");
}
