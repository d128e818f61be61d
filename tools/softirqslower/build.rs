fn main() {
    bpf::skeleton("softirqslower");
}
