fn main() {
    bpf::skeleton("opensnoop");
}
