fn main() {
    bpf::skeleton("syncsnoop");
}
