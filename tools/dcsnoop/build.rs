fn main() {
    bpf::skeleton("dcsnoop");
}
